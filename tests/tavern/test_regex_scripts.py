"""A card's regex scripts (and the run's global ones) on the outgoing prompt, as SillyTavern
1.12.6 runs them (issue 12, item 18): placements, depth ranges, prompt/markdown only,
replacement forms, trim strings, time bounds, and the user's consent to a card's scripts."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.st import regex_run

IDS = ["worldInfoBefore", "chatHistory"]
PRESET = {
    "prompts": [{"identifier": i, "marker": True} for i in IDS],
    "prompt_order": [
        {"character_id": 100001, "order": [{"identifier": i, "enabled": True} for i in IDS]}
    ],
}
CHAT = [
    {"role": "user", "content": "u3 cat"},
    {"role": "assistant", "content": "a2 cat"},
    {"role": "user", "content": "u1 cat"},
    {"role": "assistant", "content": "a0 cat"},
]


def script(find: str, replace: str = "X", **fields: Any) -> dict[str, Any]:
    """A script as SillyTavern's Regex extension exports it."""
    base: dict[str, Any] = {
        "id": "0",
        "scriptName": fields.pop("name", find),
        "findRegex": find,
        "replaceString": replace,
        "trimStrings": [],
        "placement": [1, 2],
        "disabled": False,
        "markdownOnly": False,
        "promptOnly": True,
        "runOnEdit": False,
        "substituteRegex": False,
        "minDepth": None,
        "maxDepth": None,
    }
    return base | fields


def card(scripts: list[Any] | None, **data: Any) -> dict[str, Any]:
    extensions = {} if scripts is None else {"regex_scripts": scripts}
    fields = {"name": "Aqua", "description": "", "extensions": extensions} | data
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": fields}


def run(
    tmp_path: Path,
    scripts: list[Any] | None,
    *,
    chat: list[dict[str, Any]] | None = None,
    allow: bool = True,
    mode: str = "legacy",
    **ctx: Any,
) -> compiler.CompileResult:
    (tmp_path / "preset.json").write_text(json.dumps(PRESET))
    context = {
        "character": card(scripts),
        "persona": {"name": "Kazuma", "description": ""},
        "chat": CHAT if chat is None else chat,
        "allowCardRegex": allow,
    } | ctx
    (tmp_path / "run.json").write_text(json.dumps(context))
    return compiler.compile(tmp_path / "preset.json", context=tmp_path / "run.json", mode=mode)


def chat_of(result: compiler.CompileResult) -> list[str]:
    return [m["content"] for m in result.request["messages"] if m["role"] != "system"]


def codes(result: compiler.CompileResult) -> list[str]:
    return [w.code for w in result.warnings]


# -- placements and depth ------------------------------------------------------------------


def test_user_input_and_ai_output_placements(tmp_path: Path) -> None:
    user = script("/cat/g", "USER", placement=[1])
    ai = script("/cat/g", "AI", placement=[2])
    assert chat_of(run(tmp_path, [user, ai])) == ["u3 USER", "a2 AI", "u1 USER", "a0 AI"]


def test_narrator_messages_are_ai_output_and_tool_rows_are_not_counted(tmp_path: Path) -> None:
    chat = [
        {"role": "system", "content": "narrator cat"},
        {"role": "assistant", "content": "", "toolCalls": [{"id": "c1", "name": "f"}]},
        {"role": "tool", "content": "result cat", "toolCallId": "c1"},
        {"role": "user", "content": "u0 cat"},
    ]
    out = run(tmp_path, [script("/cat/g", placement=[2], maxDepth=1)], chat=chat, mode="agent")
    messages = out.request["messages"]
    assert "narrator X" in [m.get("content") for m in messages]  # depth 1: tool rows skipped
    assert "result cat" in [m.get("content") for m in messages]


def test_depth_range_counts_from_the_newest_message(tmp_path: Path) -> None:
    ranged = script("/cat/g", minDepth=1, maxDepth=2)
    assert chat_of(run(tmp_path, [ranged])) == ["u3 cat", "a2 X", "u1 X", "a0 cat"]
    only_old = script("/cat/g", minDepth="3")  # text SillyTavern reads as a number
    assert chat_of(run(tmp_path, [only_old])) == ["u3 X", "a2 cat", "u1 cat", "a0 cat"]
    no_limit = script("/cat/g", minDepth=-1, maxDepth="many")
    assert chat_of(run(tmp_path, [no_limit])) == ["u3 X", "a2 X", "u1 X", "a0 X"]


def world_run(tmp_path: Path, scripts: list[Any], entries: list[dict[str, Any]]) -> list[str]:
    book = {"entries": {str(i): {"uid": i, "constant": True, **e} for i, e in enumerate(entries)}}
    (tmp_path / "book.json").write_text(json.dumps(book))
    out = run(tmp_path, scripts, worldInfo="book.json")
    return [m["content"] for m in out.request["messages"]]


def test_world_info_placement_with_macros_filled_first_and_depth_for_at_depth(
    tmp_path: Path,
) -> None:
    entries = [
        {"content": "{{char}} lives in Axel.", "position": 0},
        {"content": "Deep Axel.", "position": 4, "depth": 0},
        {"content": "Axel.", "position": 1},  # no worldInfoAfter marker: not sent
    ]
    wi = script("/(Aqua) lives in (\\w+)/", "$2 is home to $1", placement=[5])
    deep = script("/Axel/g", "town", placement=[5], minDepth=1)  # @D at depth 0: skipped
    got = world_run(tmp_path, [wi, deep], entries)
    assert got[0] == "town is home to Aqua."  # position 0 has no depth: no depth range
    assert "Deep Axel." in got
    chat_only = script("/Axel/g", "town", placement=[1, 2])
    assert world_run(tmp_path, [chat_only], entries)[0] == "Aqua lives in Axel."


def test_world_info_entry_emptied_by_a_script_is_dropped(tmp_path: Path) -> None:
    entries = [{"content": "DROP", "position": 0}, {"content": "keep", "position": 0}]
    got = world_run(tmp_path, [script("/DROP/", "", placement=[5])], entries)
    assert got[0] == "keep"


def test_world_info_scans_the_changed_chat(tmp_path: Path) -> None:
    book = {"entries": {"0": {"uid": 0, "key": ["sword"], "content": "SWORD LORE"}}}
    (tmp_path / "book.json").write_text(json.dumps(book))
    chat = [{"role": "user", "content": "I draw my knife"}]
    knife = script("/knife/g", "sword", placement=[1])
    got = run(tmp_path, [knife], chat=chat, worldInfo="book.json").request["messages"]
    assert got[0]["content"] == "SWORD LORE"
    assert got[-1]["content"] == "I draw my sword"


def test_slash_command_placement_is_reported_not_applied(tmp_path: Path) -> None:
    display = script("/cat/g", placement=[3], markdownOnly=True, promptOnly=False)
    out = run(tmp_path, [script("/cat/g", placement=[3]), display])
    assert chat_of(out)[0] == "u3 cat"
    assert codes(out) == ["regex.placement_not_applicable"]  # display-only: nothing to say


# -- which scripts run ---------------------------------------------------------------------


def test_prompt_only_markdown_only_and_disabled(tmp_path: Path) -> None:
    scripts = [
        script("/u3/", "P", promptOnly=True),
        script("/a2/", "D", promptOnly=False, markdownOnly=True),  # display only
        script("/u1/", "N", promptOnly=False),  # stored messages: at prompt time too
        script("/a0/", "Z", disabled=True),
    ]
    out = run(tmp_path, scripts)
    assert chat_of(out) == ["P cat", "a2 cat", "N cat", "a0 cat"]
    assert codes(out) == []


def test_greeting_gets_the_stored_and_the_prompt_pass(tmp_path: Path) -> None:
    (tmp_path / "preset.json").write_text(json.dumps(PRESET))
    stored = script("/Hello/", "Hi", promptOnly=False, placement=[2])
    prompt_only = script("/Aqua/", "AQUA", placement=[2], maxDepth=0)
    ctx = {"character": card([stored, prompt_only], first_mes="Hello, {{char}}!")}
    (tmp_path / "run.json").write_text(json.dumps(ctx | {"allowCardRegex": True}))
    out = compiler.compile(tmp_path / "preset.json", context=tmp_path / "run.json", mode="legacy")
    assert chat_of(out) == ["Hi, AQUA!"]  # macros filled between the passes


def test_without_consent_card_scripts_are_reported_not_applied(tmp_path: Path) -> None:
    scripts = [
        script("/cat/g", name="one"),
        script("/cat/g", name="display", promptOnly=False, markdownOnly=True),
        script("/cat/g", name="off", disabled=True),
        script("/cat/g", name="two", placement=[5]),
    ]
    out = run(tmp_path, scripts, allow=False, regexScripts=[script("/u3/", "GLOBAL")])
    assert chat_of(out) == ["GLOBAL cat", "a2 cat", "u1 cat", "a0 cat"]  # global ones run
    warned = [w for w in out.warnings if w.code == "regex.card_scripts_not_allowed"]
    assert [w.path for w in warned] == [
        "data.extensions.regex_scripts[0]",
        "data.extensions.regex_scripts[3]",
    ]
    assert "allowCardRegex" in (warned[0].hint or "")


def test_global_scripts_run_first_and_are_migrated(tmp_path: Path) -> None:
    global_scripts = [
        script("/cat/g", "dog"),
        script("/dog/", "DOG", placement=[0], promptOnly=False),  # MD_DISPLAY: all, prompts too
    ]
    out = run(tmp_path, [script("/dog/g", "cow")], regexScripts=global_scripts)
    assert chat_of(out) == ["u3 DOG", "a2 DOG", "u1 DOG", "a0 DOG"]


# -- the replacement -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("find", "replace", "trims", "text", "expected"),
    [
        (r"/(\w+)@(\w+)/g", "[$2 at $1] {{match}} $0", [], "b@h", "[h at b] b@h b@h"),
        ("/(x)/", "$& $$ $<n> $10 $01", [], "x", "$& $$ $<n>  x"),  # a replacer function
        ("/(a)|(b)/g", "[$1,$2]", [], "ab", "[a,][,b]"),
        (r"/\*(.+?)\*/g", "<i>$1</i>", ["*", "x"], "*bxold*", "<i>bold</i>"),
        ("/q/g", "$1|$2|", [], "xq😀q", "x1|xq😀q|😀4|xq😀q|"),  # offset (UTF-16), input
        ("/(Aqua)/", "{{user}} meets $1", ["{{char}}"], "Aqua", "Kazuma meets "),
        ("knife", "sword", [], "knife knife", "sword knife"),  # no slashes: first match only
        ("/KNIFE/i", "sword", [], "knife knife", "sword knife"),
        ("/^k/gm", "K", [], "knife\nknife", "Knife\nKnife"),
        ("/e.k/gs", "_", [], "knife\nknife", "knif_nife"),
        ("/a/y", "_", [], "a /a/y", "a _"),  # y: SillyTavern reads it all as the pattern
    ],
)  # fmt: skip
def test_replacement_forms_and_flags(
    tmp_path: Path, find: str, replace: str, trims: list[str], text: str, expected: str
) -> None:
    chat = [{"role": "user", "content": text}]
    out = run(tmp_path, [script(find, replace, trimStrings=trims)], chat=chat)
    assert chat_of(out) == [expected]
    assert codes(out) == []


def test_substitute_regex_fills_macros_in_the_pattern(tmp_path: Path) -> None:
    chat = [{"role": "user", "content": "Aqua and {{char}}"}]
    scripts = [script("/{{char}}/g", "her", substituteRegex=True)]
    assert chat_of(run(tmp_path, scripts, chat=chat)) == ["her and {{char}}"]


# -- bad and hostile scripts ---------------------------------------------------------------


def test_broken_and_malformed_scripts_are_reported_and_skipped(tmp_path: Path) -> None:
    scripts = [
        script("/(cat/g", name="broken"),
        script("/(?i:cat)/", name="modifiers"),
        {"scriptName": "no placement", "findRegex": "/cat/", "replaceString": "X"},
        "not a script",
        script("/(?<n>cat)/g", "$4", name="groups object"),  # SillyTavern throws on it
        script("/cat/g", "dog", name="fine"),
    ]
    out = run(tmp_path, scripts)
    assert chat_of(out) == ["u3 dog", "a2 dog", "u1 dog", "a0 dog"]
    assert sorted(codes(out)) == [
        "regex.invalid_pattern",
        "regex.invalid_script",
        "regex.invalid_script",
        "regex.invalid_script",
        "regex.unsupported_syntax",
    ]
    assert all(w.file and w.file.endswith("run.json") for w in out.warnings)


def test_catastrophic_pattern_is_reported_not_hung_on(tmp_path: Path) -> None:
    chat = [{"role": "user", "content": "a" * 60 + "b"}, {"role": "assistant", "content": "ok"}]
    redos = script("/(a|aa)+$/", name="redos", placement=[1])
    start = time.perf_counter()
    out = run(tmp_path, [redos, script("/ok/", "fine", placement=[2])], chat=chat)
    assert time.perf_counter() - start < 60  # a hang guard: (a|aa)+$ never ends unguarded
    assert chat_of(out) == ["a" * 60 + "b", "fine"]
    assert codes(out) == ["regex.timeout"]


def test_a_compile_shares_one_time_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex_run, "SCRIPTS_BUDGET", 0.3)
    chat = [{"role": "user", "content": "a" * 60 + "b"}]
    scripts = [script(f"/(a|aa)+${'' if i % 2 else '|x'}/", name=str(i)) for i in range(40)]
    start = time.perf_counter()
    out = run(tmp_path, scripts, chat=chat)
    assert time.perf_counter() - start < 10
    assert codes(out)[-1] == "regex.timeout"
    assert "used up" in out.warnings[-1].message
    assert len(out.warnings) < 10


def test_output_growth_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex_run, "MAX_GROWTH", 10_000)
    chat = [{"role": "user", "content": "a" * 100}]
    out = run(tmp_path, [script("/a/g", "b" * 1000)], chat=chat)
    assert chat_of(out) == ["a" * 100]
    assert codes(out) == ["regex.output_too_large"]


def test_huge_counted_repeat_is_too_complex(tmp_path: Path) -> None:
    out = run(tmp_path, [script("/a{1000000000}/")])
    assert codes(out) == ["regex.too_complex"]


# -- the same path everywhere --------------------------------------------------------------


def test_template_and_agent_mode_use_the_same_path(tmp_path: Path) -> None:
    scripts = [script("/cat/g", "dog")]
    agent = run(tmp_path, scripts, mode="agent")
    assert [m["content"] for m in agent.request["messages"] if m["role"] == "user"][-1] == "u1 dog"
    (tmp_path / "t.txt").write_text("<<agent.chat.history>>")
    out = compiler.compile(tmp_path / "t.txt", context=tmp_path / "run.json")
    assert [m["content"] for m in out.request["messages"]][-1] == "a0 dog"


def test_cli_reports_and_applies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(tmp_path, [script("/cat/g", "dog")], allow=False)
    args = ["compile", str(tmp_path / "preset.json"), "--context", str(tmp_path / "run.json")]
    assert main([*args, "--mode", "legacy"]) == 0
    captured = capsys.readouterr()
    assert "regex.card_scripts_not_allowed" in captured.err
    assert "u3 cat" in captured.out
    assert main([*args, "--mode", "legacy", "--strict"]) != 0


@pytest.mark.parametrize("name", ["Seraphina-v2v3.png", "CodingSensei-v2.png", "Aqua-v1.png"])
def test_corpus_cards_carry_no_scripts_and_compile_unchanged(
    tmp_path: Path, corpus: Path, name: str
) -> None:
    """The corpus cards (read in place) have no regex scripts: consent changes nothing."""
    outs = []
    for allow in (False, True):
        ctx = {"character": str(corpus / "cards" / name), "chat": CHAT, "allowCardRegex": allow}
        (tmp_path / "run.json").write_text(json.dumps(ctx))
        preset = corpus / "presets" / "st-default-2024.json"
        outs.append(compiler.compile(preset, context=tmp_path / "run.json"))
    assert outs[0].request == outs[1].request
    assert not [c for c in codes(outs[0]) + codes(outs[1]) if c.startswith("regex.")]


def test_corpus_preset_and_card_with_a_global_script(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SillyTavern's default preset and Seraphina with the common "strip reasoning" script:
    the request equals the one for a chat that never had the reasoning. (Not a test of the
    regex deadlines: they are wide here, so a loaded machine cannot report a timeout.)"""
    monkeypatch.setattr(regex_run, "SCRIPT_TIMEOUT", 30.0)
    monkeypatch.setattr(regex_run, "SCRIPTS_BUDGET", 60.0)
    strip = script(r"/<think>[\s\S]*?<\/think>\s*/g", "", placement=[2], name="strip thinking")
    requests = []
    for reply, scripts in (("<think>plan</think>\n\nHello!", [strip]), ("Hello!", [])):
        chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": reply}]
        ctx = {"character": str(corpus / "cards" / "Seraphina-v2v3.png"), "chat": chat}
        (tmp_path / "run.json").write_text(json.dumps(ctx | {"regexScripts": scripts}))
        preset = corpus / "presets" / "st-default-2024.json"
        out = compiler.compile(preset, context=tmp_path / "run.json", mode="legacy")
        assert codes(out) == []
        requests.append(out.request)
    assert requests[0] == requests[1]
    assert requests[0]["messages"][-1]["content"] == "Hello!"


@pytest.mark.parametrize("scripts", [[], [script("/plan/", "plan", placement=[5])]])
def test_world_info_scripts_keep_the_marker_check(tmp_path: Path, scripts: list[Any]) -> None:
    """Macros that assemble an agent macro in an entry are refused, scripts or not."""
    book = {"entries": {"0": {"uid": 0, "constant": True, "content": "<{{noop}}<agent.plan>>"}}}
    (tmp_path / "book.json").write_text(json.dumps(book))
    with pytest.raises(compiler.PolicyError) as caught:
        run(tmp_path, scripts, worldInfo="book.json", mode="agent")
    assert caught.value.code == "agent.prompt_marker_unmaterialized"


def test_a_script_may_write_an_agent_macro_as_data(tmp_path: Path) -> None:
    """A script's output is the card's text: sent as written, never expanded."""
    chat = [{"role": "user", "content": "show plan"}]
    out = run(tmp_path, [script("/plan/", "<<agent.plan>>")], chat=chat, mode="agent")
    assert "show <<agent.plan>>" in [m.get("content") for m in out.request["messages"]]
