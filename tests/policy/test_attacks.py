"""Every path and visibility attack fails with its code, and nothing secret reaches output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import APCError
from compiler.fit import SummaryCache, SummaryRequest
from compiler.profile import resolve_profile

SECRETS = ("SECRET-OUTSIDE", "SECRET-PRIVATE", "SECRET-PERSIST", "SECRET-ROOTLINK", "SECRET-SKILL")


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A run dir: a workspace with private and outside files, symlinks, a hidden skill."""
    ws = tmp_path / "ws"
    for root in ("output", "scratch/private", "persist"):
        (ws / root).mkdir(parents=True)
    (ws / "output" / "main.md").write_text("the draft")
    (ws / "scratch" / "notes.md").write_text("public notes")
    (ws / "scratch" / "private" / "secret.md").write_text("SECRET-PRIVATE")
    (ws / "persist" / "memory.md").write_text("SECRET-PERSIST")
    (tmp_path / "outside.txt").write_text("SECRET-OUTSIDE")
    (ws / "output" / "link.md").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "key.md").write_text("SECRET-ROOTLINK")
    (ws / "plan").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "skills" / "hidden").mkdir(parents=True)
    (tmp_path / "skills" / "hidden" / "SKILL.md").write_text("SECRET-SKILL")
    (tmp_path / "skills" / "open").mkdir()
    (tmp_path / "skills" / "open" / "SKILL.md").write_text("open skill")
    ctx = {
        "workspace": "ws",
        "skills": "skills",
        "chat": [{"role": "user", "content": "hello"}],
        "worldInfo": [{"content": "world text", "position": "before"}],
    }
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    return tmp_path


POLICY: dict[str, Any] = {
    "context": {"exclude": ["workspace.scratch.private", "user.secrets", "world.activated"]},
    "workspace": {
        "visibleRoots": ["output", "scratch", "plan", "summaries"],
        "writableRoots": ["output", "scratch"],
    },
    "skills": {"deny": ["hidden"]},
}

ATTACKS = [
    ('<<agent.file "../outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "/etc/passwd">>', "workspace.path_denied"),
    ('<<agent.file "C:/Windows/win.ini">>', "workspace.path_denied"),
    ('<<agent.file "output\\\\..\\\\..\\\\outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "output/../../outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "scratch/private/../private/secret.md">>', "workspace.path_denied"),
    ('<<agent.file "~/outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "elsewhere/key.md">>', "workspace.path_denied"),
    ('<<agent.file "output/link.md">>', "workspace.path_denied"),
    ('<<agent.file "plan/key.md">>', "workspace.path_denied"),
    ('<<agent.file "scratch/private/secret.md">>', "policy.resource_hidden"),
    ('<<agent.file "scratch/./private//secret.md">>', "policy.resource_hidden"),
    ('<<agent.file "scratch\\\\private\\\\secret.md">>', "policy.resource_hidden"),
    ('<<agent.file "persist/memory.md">>', "policy.resource_hidden"),
    ('<<agent.skill "hidden">>', "policy.resource_hidden"),
    ('<<agent.skill "../skills/hidden">>', "context.invalid_skill_name"),
    ("<<agent.world.activated>>", "policy.resource_hidden"),
]


@pytest.mark.parametrize(("template", "code"), ATTACKS)
def test_attack_fails_and_nothing_is_written(
    run: Path, template: str, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (run / "t.txt").write_text("Context:\n" + template)
    (run / "policy.json").write_text(json.dumps(POLICY))
    out = run / "out.json"
    journal = run / "journal.jsonl"
    args = ["compile", str(run / "t.txt"), "--context", str(run / "run.json")]
    args += ["--run", str(run / "policy.json"), "-o", str(out), "--journal", str(journal)]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert f"error[{code}]" in captured.err
    assert not out.exists()
    assert not any(s in captured.out + captured.err for s in SECRETS)
    events = [json.loads(line)["type"] for line in journal.read_text().splitlines()]
    assert events[0] == "context_assembly_started"
    assert events[-1] == "context_assembly_failed"


def test_nothing_hidden_reaches_a_successful_request(run: Path) -> None:
    template = (
        '<<agent.workspace.tree>>\n<<agent.file "scratch/notes.md">>\n'
        '<<agent.skill "open">>\n<<agent.chat.history>>'
    )
    result = compiler.compile_string(
        template, context=run / "run.json", profile=resolve_profile(run=POLICY)
    )
    body = json.dumps(result.request)
    assert "public notes" in body and "open skill" in body and "output/main.md" in body
    assert not any(s in body for s in SECRETS)
    for name in ("secret.md", "memory.md", "link.md", "key.md"):
        assert name not in body  # the tree lists only visible, regular files


def test_include_list_hides_everything_else(run: Path) -> None:
    profile = resolve_profile(
        run={"context": {"include": ["workspace.output", "chat.history.tail"]}}
    )
    ok = compiler.compile_string(
        '<<agent.file "output/main.md">><<agent.chat.history>>',
        context=run / "run.json",
        profile=profile,
    )
    history = next(c for c in ok.frame.components if c.kind == "ChatHistory")
    assert history.metadata["window"] == "tail"
    with pytest.raises(APCError) as info:
        compiler.compile_string(
            '<<agent.file "scratch/notes.md">>', context=run / "run.json", profile=profile
        )
    assert info.value.code == "policy.resource_hidden"


def test_data_is_not_a_macro_and_not_a_leak(run: Path) -> None:
    (run / "ws" / "output" / "main.md").write_text("draft says <<agent.plan>> literally")
    result = compiler.compile_string('<<agent.file "output/main.md">>', context=run / "run.json")
    assert result.request["messages"][0]["content"] == "draft says <<agent.plan>> literally"


# -- issue 8: hidden content reaching the request ------------------------------------------


def _preset(tmp_path: Path, *prompts: dict[str, Any]) -> Path:
    ids = [p["identifier"] for p in prompts]
    data = {
        "prompts": list(prompts),
        "prompt_order": [
            {"character_id": 100001, "order": [{"identifier": i, "enabled": True} for i in ids]}
        ],
    }
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(data))
    return path


CARD_WITH_OVERRIDES = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Sera",
        "system_prompt": "CARD-SYSTEM-PROMPT {{original}}",
        "post_history_instructions": "CARD-PHI",
    },
}


@pytest.mark.parametrize("mode", ["agent", "legacy"])
def test_hidden_card_instructions_do_not_override_the_preset(tmp_path: Path, mode: str) -> None:
    path = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": "PRESET-MAIN"},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "jailbreak", "content": "PRESET-JB"},
    )
    ctx = {"character": CARD_WITH_OVERRIDES, "chat": [{"role": "user", "content": "hi"}]}
    hidden = resolve_profile(run={"context": {"exclude": ["character.instructions"]}})
    result = compiler.compile(path, context=ctx, profile=hidden, mode=mode)  # type: ignore[arg-type]
    body = json.dumps(result.request)
    assert "CARD-SYSTEM-PROMPT" not in body and "CARD-PHI" not in body
    assert "PRESET-MAIN" in body and "PRESET-JB" in body
    skipped = [e.payload for e in result.events if e.type == "card_override_skipped"]
    assert {p["field"] for p in skipped} == {"system_prompt", "post_history_instructions"}
    # visible: the card's overrides apply as before
    shown = compiler.compile(path, context=ctx, mode=mode)  # type: ignore[arg-type]
    assert "CARD-SYSTEM-PROMPT PRESET-MAIN" in json.dumps(shown.request)


def _summary_link_run(tmp_path: Path, target: str) -> Path:
    ws = tmp_path / "ws"
    (ws / "scratch" / "private").mkdir(parents=True)
    (ws / "summaries").mkdir()
    (ws / "scratch" / "private" / "plan.md").write_text("SECRET-PRIVATE summary")
    (ws / "summaries" / target).symlink_to(ws / "scratch" / "private" / "plan.md")
    chat = [{"role": "user", "content": f"message {i} " + "word " * 40} for i in range(60)]
    ctx = {"workspace": "ws", "chat": chat, "toolResults": []}
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    return tmp_path / "run.json"


@pytest.mark.parametrize("budget", [None, 400])
def test_a_summary_file_linked_into_a_hidden_folder_is_not_read(
    tmp_path: Path, budget: int | None
) -> None:
    run_file = _summary_link_run(tmp_path, "chat.md")
    profile = resolve_profile(run={"context": {"exclude": ["workspace.scratch.private"]}})
    result = compiler.compile_string(
        "S.<<agent.chat.history>>", context=run_file, profile=profile, budget=budget
    )
    frame = result.frame.model_dump_json()
    assert "SECRET-PRIVATE" not in frame and "SECRET-PRIVATE" not in json.dumps(result.request)
    history = next(c for c in result.frame.components if c.kind == "ChatHistory")
    assert "summary" not in history.metadata
    assert any(e.type == "context_summary_skipped" for e in result.events)


def test_every_workspace_read_checks_the_real_path(tmp_path: Path) -> None:
    run_file = _summary_link_run(tmp_path, "chat.md")
    (tmp_path / "ws" / "output").mkdir()
    (tmp_path / "ws" / "output" / "pub.md").symlink_to(
        tmp_path / "ws" / "scratch" / "private" / "plan.md"
    )
    # a link from one visible root into a hidden folder of another root leaves its root
    profile = resolve_profile(run={"context": {"exclude": ["workspace.scratch.private"]}})
    for path in ("summaries/chat.md", "output/pub.md"):
        with pytest.raises(APCError) as info:
            compiler.compile_string(f'<<agent.file "{path}">>', context=run_file, profile=profile)
        assert info.value.code in ("policy.resource_hidden", "workspace.path_denied")
        assert "SECRET" not in str(info.value)


def test_the_history_tail_grant_shows_only_a_window_and_no_summary(tmp_path: Path) -> None:
    chat = [{"role": "user", "content": f"OLD-{i}"} for i in range(100)]
    ctx = {"chat": chat, "summaries": {"ChatHistory": "SUMMARY-OF-ALL"}}
    tail = resolve_profile(
        run={"context": {"include": ["chat.history.tail"], "historyTailMessages": 5}}
    )
    result = compiler.compile_string(
        "<<agent.chat.history>>", context=ctx, profile=tail, budget=2000
    )
    texts = [m["content"] for m in result.request["messages"]]
    assert texts == [f"OLD-{i}" for i in range(95, 100)]
    # with a small budget the visible tail is cut, never summarized from the hidden head
    small = compiler.compile_string("<<agent.chat.history>>", context=ctx, profile=tail, budget=25)
    body = json.dumps(small.request)
    assert "SUMMARY-OF-ALL" not in body and "OLD-94" not in body
    default = resolve_profile(run={"context": {"include": ["chat.history.tail"]}})
    result = compiler.compile_string("<<agent.chat.history>>", context=ctx, profile=default)
    assert len(result.request["messages"]) == 20  # DEFAULT_TAIL_MESSAGES
    full = compiler.compile_string("<<agent.chat.history>>", context=ctx)
    assert len(full.request["messages"]) == 100


def test_the_tail_window_never_starts_with_an_orphan_tool_result() -> None:
    chat: list[dict[str, Any]] = [{"role": "user", "content": f"m{i}"} for i in range(10)]
    chat += [
        {"role": "assistant", "toolCalls": [{"id": "c1", "name": "dice.roll", "arguments": {}}]},
        {"role": "tool", "toolCallId": "c1", "content": "17"},
        {"role": "assistant", "content": "You rolled 17."},
    ]
    tail = resolve_profile(
        run={"context": {"include": ["chat.history.tail"], "historyTailMessages": 2}}
    )
    result = compiler.compile_string("<<agent.chat.history>>", context={"chat": chat}, profile=tail)
    assert [m["content"] for m in result.request["messages"]] == ["You rolled 17."]


def test_a_hard_link_in_the_workspace_is_refused_unless_allowed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET-OUTSIDE")
    (tmp_path / "ws" / "output").mkdir(parents=True)
    link = tmp_path / "ws" / "output" / "notes.md"
    try:
        link.hardlink_to(outside)
    except OSError:
        pytest.skip("hard links are not supported here")
    ctx: dict[str, Any] = {"workspace": "ws"}
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    with pytest.raises(APCError) as info:
        compiler.compile_string('<<agent.file "output/notes.md">>', context=tmp_path / "run.json")
    assert info.value.code == "workspace.path_denied"
    assert info.value.details["reason"] == "hardlink"
    tree = compiler.compile_string("Files:<<agent.workspace.tree>>", context=tmp_path / "run.json")
    assert "notes.md" not in json.dumps(tree.request)
    ctx["allowWorkspaceHardlinks"] = True
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    ok = compiler.compile_string('<<agent.file "output/notes.md">>', context=tmp_path / "run.json")
    assert "SECRET-OUTSIDE" in json.dumps(ok.request)


def test_names_with_control_characters_are_not_workspace_paths(tmp_path: Path) -> None:
    scratch = tmp_path / "ws" / "scratch"
    scratch.mkdir(parents=True)
    (scratch / "evil\nname.md").write_text("SECRET-NEWLINE")
    (scratch / "tab\tname.md").write_text("SECRET-TAB")
    (scratch / "ok.md").write_text("fine")
    (tmp_path / "run.json").write_text(json.dumps({"workspace": "ws"}))
    profile = resolve_profile(run={"context": {"exclude": ["workspace.scratch.*"]}})
    tree = compiler.compile_string("<<agent.workspace.tree>>", context=tmp_path / "run.json")
    assert "name.md" not in json.dumps(tree.request) and "scratch/ok.md" in json.dumps(tree.request)
    for name in ("scratch/evil\\nname.md", "scratch/tab\\tname.md"):
        with pytest.raises(APCError) as info:
            compiler.compile_string(
                f'<<agent.file "{name}">>', context=tmp_path / "run.json", profile=profile
            )
        assert info.value.code == "workspace.path_denied"
        assert info.value.details["reason"] == "control_character"
    with pytest.raises(APCError) as inline:
        compiler.compile_string(
            "<<agent.workspace.tree>>",
            context={"workspace": {"files": {"scratch/a\nb.md": "x"}}},
        )
    assert inline.value.code in ("workspace.path_denied", "context.invalid_context")


def test_the_task_is_a_resource_like_any_other(tmp_path: Path) -> None:
    path = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "agentTask", "marker": True},
    )
    ctx = {"task": "SECRET-TASK"}
    hidden = resolve_profile(run={"context": {"exclude": ["agent.task"]}})
    with pytest.raises(APCError) as info:
        compiler.compile(path, context=ctx, profile=hidden, mode="agent")
    assert info.value.code == "policy.resource_hidden"
    assert "SECRET-TASK" not in str(info.value)
    shown = compiler.compile(path, context=ctx, mode="agent")
    assert "SECRET-TASK" in json.dumps(shown.request)


# -- issue 8: presets ----------------------------------------------------------------------


def test_a_macro_inside_a_sillytavern_comment_is_never_expanded(tmp_path: Path) -> None:
    path = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": "A{{// <<agent.plan>> and <<agent.fiel>> }}B"},
    )
    result = compiler.compile(path, context={"plan": "SECRET-PLAN"}, mode="agent")
    assert "SECRET-PLAN" not in json.dumps(result.request)
    assert "AB" in [m["content"] for m in result.request["messages"]]
    assert not [c for c in result.frame.components if c.kind == "Plan"]
    assert main(["check", str(path)]) == 0  # a commented-out typo is not an error either


@pytest.mark.parametrize(
    "content",
    [
        "<{{noop}}<agent.plan>>",
        "<{{// hidden }}<agent.plan>>",
        "<\n{{trim}}\n<agent.plan>>",
        "<<{{noop}}agent.plan>>",
    ],
)
@pytest.mark.parametrize("mode", ["agent", "legacy"])
def test_sillytavern_macros_cannot_assemble_an_unexpanded_marker(
    tmp_path: Path, content: str, mode: str
) -> None:
    path = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": content},
    )
    with pytest.raises(APCError) as info:
        compiler.compile(path, context={"plan": "p"}, mode=mode)  # type: ignore[arg-type]
    assert info.value.code == "agent.prompt_marker_unmaterialized"
    # the same through an in-chat injection and a card override
    inj = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "n", "content": content, "injection_position": 1, "injection_depth": 0},
    )
    with pytest.raises(APCError) as info:
        compiler.compile(inj, context={"chat": [{"role": "user", "content": "hi"}]}, mode=mode)  # type: ignore[arg-type]
    assert info.value.code == "agent.prompt_marker_unmaterialized"


def test_written_literals_and_data_are_not_flagged(tmp_path: Path) -> None:
    path = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": r"Keep \<<agent.plan>> {{char}}"},
        {"identifier": "chatHistory", "marker": True},
    )
    ctx = {
        "character": {"name": "<<agent.plan>>"},
        "chat": [{"role": "user", "content": "<{{noop}}<agent.plan>>"}],
    }
    result = compiler.compile(path, context=ctx, mode="agent")
    texts = [m["content"] for m in result.request["messages"]]
    assert texts[1] == "Keep <<agent.plan>> <<agent.plan>>"
    assert texts[-1] == "<{{noop}}<agent.plan>>"  # chat is data: never substituted


def test_legacy_mode_names_no_tool_and_reads_no_workspace_summary(tmp_path: Path) -> None:
    (tmp_path / "ws" / "summaries").mkdir(parents=True)
    (tmp_path / "ws" / "summaries" / "chat.md").write_text("WORKSPACE-SUMMARY")
    chat = [{"role": "user", "content": f"message {i} " + "word " * 30} for i in range(80)]
    (tmp_path / "run.json").write_text(json.dumps({"workspace": "ws", "chat": chat}))
    path = _preset(
        tmp_path,
        {"identifier": "main", "content": "Be nice."},
        {"identifier": "chatHistory", "marker": True},
    )
    result = compiler.compile(path, context=tmp_path / "run.json", mode="legacy", budget=600)
    body = json.dumps(result.request)
    assert "older messages are not shown" not in body  # cut as SillyTavern does: no note
    assert 1 < len(result.request["messages"]) < 80
    assert "chat.search" not in body and "chat_search" not in body and "tools" not in result.request
    assert "WORKSPACE-SUMMARY" not in body


# -- issue 8: caches keyed by identity -------------------------------------------------------


def test_a_new_summarizer_never_receives_an_old_ones_summary() -> None:
    chat = [{"role": "user", "content": f"Turn {i}. " + "word " * 30} for i in range(200)]
    ctx = {"chat": chat}
    seen: list[str] = []
    for tenant in ("tenant-A", "tenant-B", "tenant-C"):

        def summarize(request: SummaryRequest, tenant: str = tenant) -> str:
            return f"SUMMARY BY {tenant}"

        result = compiler.compile_string(
            "S.<<agent.chat.history>>", context=ctx, budget=1500, summarizer=summarize
        )
        seen.append(result.request["messages"][1]["content"])
        del summarize  # its id() may now be reused by the next tenant's function
    for tenant, text in zip(("tenant-A", "tenant-B", "tenant-C"), seen, strict=True):
        assert f"SUMMARY BY {tenant}" in text


def test_a_caller_owned_cache_keeps_summarizers_apart_by_cache_key() -> None:
    chat = [{"role": "user", "content": f"Turn {i}. " + "word " * 30} for i in range(200)]
    cache = SummaryCache()

    class Tenant:
        def __init__(self, name: str) -> None:
            self.cache_key = name

        def __call__(self, request: SummaryRequest) -> str:
            return f"SUMMARY BY {self.cache_key}"

    for name in ("one", "two"):
        result = compiler.compile_string(
            "S.<<agent.chat.history>>",
            context={"chat": chat},
            budget=1500,
            summarizer=Tenant(name),
            summary_cache=cache,
        )
        assert f"SUMMARY BY {name}" in result.request["messages"][1]["content"]


# -- issue 8, second round: what an attack review found after the first fixes ---------------


def _lore(tmp_path: Path, entries: list[dict[str, Any]], **book: Any) -> str:
    data = {"entries": {str(i): {"uid": i, **e} for i, e in enumerate(entries)}, **book}
    (tmp_path / "lore.json").write_text(json.dumps(data))
    return str(tmp_path / "lore.json")


@pytest.mark.parametrize(
    "context_policy",
    [
        {"include": ["chat.history.tail", "world.activated"], "historyTailMessages": 3},
        {"exclude": ["chat.history"]},
    ],
)
def test_hidden_chat_never_activates_world_info(
    tmp_path: Path, context_policy: dict[str, Any]
) -> None:
    chat = [{"role": "user", "content": "my password is hunter2"}]
    chat += [{"role": "user", "content": f"filler {i}"} for i in range(30)]
    entries = [
        {"key": [f"/password is {c}/"], "content": f"LEAK-{c}", "scanDepth": 1000}
        for c in "abcdefghijklmnop"
    ]
    ctx = {"chat": chat, "worldInfo": _lore(tmp_path, entries)}
    profile = resolve_profile(run={"context": context_policy})
    template = "W: <<agent.world.activated>>"
    if "include" in context_policy:
        template += "<<agent.chat.history>>"
    result = compiler.compile_string(template, context=ctx, profile=profile)
    assert "LEAK" not in json.dumps(result.request)
    shown = compiler.compile_string(template + "<<agent.chat.history>>", context=ctx)
    assert "LEAK-h" in json.dumps(shown.request)  # visible, the same entry does activate


def test_a_symlink_swapped_in_after_the_check_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compiler.inputs.workspace import Workspace

    ws = tmp_path / "ws"
    (ws / "scratch" / "pub").mkdir(parents=True)
    (ws / "scratch" / "pub" / "x.md").write_text("benign")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.md").write_text("SECRET-OUTSIDE")
    checked = Workspace.real_relpath

    def check_then_swap(self: Workspace, path: str) -> str:
        real = checked(self, path)  # the check passes on the real directory...
        (ws / "scratch" / "pub").rename(tmp_path / "was-pub")
        (ws / "scratch" / "pub").symlink_to(tmp_path / "outside")  # ...then it is swapped
        return real

    monkeypatch.setattr(Workspace, "real_relpath", check_then_swap)
    with pytest.raises(APCError) as info:
        Workspace(ws).read("scratch/pub/x.md")
    assert info.value.code == "workspace.path_denied"
    assert "SECRET" not in str(info.value)


MARKER_BYPASSES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    # (entry content, extra preset fields, run context additions)
    ("{{// \\<<agent.}}<{{noop}}<agent.plan>>", {}, {}),
    ("{{// <<agent.}}<{{noop}}<agent.plan>>", {}, {}),
    ("<{{NOOP}}<agent.plan>>", {}, {}),
    ("<agent.plan>>", {}, {"character": {"name": "S", "system_prompt": "<{{original}}"}}),
    (
        "main",
        {},
        {"character": {"name": "S", "system_prompt": "{{// <<agent.}}<{{noop}}<agent.plan>>"}},
    ),
    ("main", {}, {"character": {"name": "S", "description": "<{{noop}}<agent.plan>>"}}),
    ("main", {"scenario_format": "<{{// c}}<agent.diff>> {{scenario}}"}, {}),
    ("main", {"wi_format": "<{{noop}}<agent.plan>> {0}"}, {"worldInfo": [{"content": "w"}]}),
    ("main", {}, {"persona": {"name": "A", "description": "<{{noop}}<agent.plan>>"}}),
    ("main", {}, {"worldInfo": [{"content": "W<{{noop}}<agent.plan>>"}]}),
]


@pytest.mark.parametrize(("content", "fields", "ctx"), MARKER_BYPASSES)
@pytest.mark.parametrize("mode", ["agent", "legacy"])
def test_no_assembled_marker_reaches_the_request(
    tmp_path: Path, content: str, fields: dict[str, Any], ctx: dict[str, Any], mode: str
) -> None:
    prompts: list[dict[str, Any]] = [
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": content},
        {"identifier": "worldInfoBefore", "marker": True},
        {"identifier": "charDescription", "marker": True},
        {"identifier": "scenario", "marker": True},
        {"identifier": "personaDescription", "marker": True},
    ]
    path = _preset(tmp_path, *prompts)
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))
    character = ctx.get("character", {"name": "S", "scenario": "a road"})
    context = {"plan": "p", "diff": "d", **ctx, "character": character}
    try:
        result = compiler.compile(path, context=context, mode=mode)  # type: ignore[arg-type]
    except APCError as exc:
        assert exc.code == "agent.prompt_marker_unmaterialized"
    else:
        raise AssertionError(f"sent: {json.dumps(result.request)[:300]}")


def test_data_openers_and_values_are_not_flagged(tmp_path: Path) -> None:
    path = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": "Be {{char}}. \\<<agent.literal>>"},
        {"identifier": "charDescription", "marker": True},
    )
    card = {"name": "<<agent.name>>", "description": "says <<agent.plan>> {{// c}} often"}
    result = compiler.compile(path, context={"character": card}, mode="agent")
    texts = [m["content"] for m in result.request["messages"]]
    assert "Be <<agent.name>>. <<agent.literal>>" in texts
    assert "says <<agent.plan>>  often" in texts


def test_lorebook_work_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler.st.world import activation as world

    huge = "/(?:" + "|".join(f"w{i}" for i in range(20_000)) + ")/"
    chat = [{"role": "user", "content": "w19999 " + "text " * 400} for _ in range(50)]
    entries = [{"key": [huge], "content": "HUGE"}]
    entries += [{"key": [f"k{i}-{j}" for j in range(20)], "content": f"E{i}"} for i in range(200)]
    monkeypatch.setattr(world, "SCAN_BYTES_BUDGET", 2_000_000)  # keep the test small
    for entry in entries:
        entry["scanDepth"] = 1000
    ctx = {"chat": chat, "worldInfo": _lore(tmp_path, entries)}
    result = compiler.compile_string("W: <<agent.world.activated>>", context=ctx)
    codes = {w.code for w in result.warnings}
    assert {"world.regex_too_complex", "world.scan_budget"} <= codes
    assert "HUGE" not in json.dumps(result.request)


def test_a_run_tool_in_capitals_is_still_denied() -> None:
    tool = {"name": "Mcp.Exec", "description": "run", "parameters": {"type": "object"}}
    profile = resolve_profile(run={"tools": {"allow": ["*"], "deny": ["mcp.*"]}})
    result = compiler.compile_string(
        "T <<agent.tools.available>>", context={"tools": [tool]}, profile=profile
    )
    assert "Mcp_Exec" not in json.dumps(result.request)


def test_a_preset_holding_every_sentinel_still_parses(tmp_path: Path) -> None:
    every = "".join(chr(c) for c in range(0xFDD0, 0xFDF0))
    path = _preset(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": every + "{{// c}}end"},
    )
    result = compiler.compile(path, mode="agent")
    assert every + "end" in [m["content"] for m in result.request["messages"]]


def test_a_skill_linking_outside_its_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "skills" / "evil").mkdir(parents=True)
    (tmp_path / "secret.md").write_text("SECRET-SKILL")
    (tmp_path / "skills" / "evil" / "SKILL.md").symlink_to(tmp_path / "secret.md")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "SKILL.md").write_text("SECRET-DIR")
    (tmp_path / "skills" / "moved").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "run.json").write_text(json.dumps({"skills": "skills"}))
    for name in ("evil", "moved"):
        with pytest.raises(APCError) as info:
            compiler.compile_string(f'<<agent.skill "{name}">>', context=tmp_path / "run.json")
        assert info.value.code == "context.invalid_skill"
        assert "SECRET" not in str(info.value)
