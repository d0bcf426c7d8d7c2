"""Bad inputs end in one coded error, never a traceback, and nothing half-written."""

from __future__ import annotations

import enum
import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import APCError, ContextError, PolicyError
from compiler.profile import resolve_profile

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "writer"


def code_of(source: str, context: dict[str, Any]) -> str:
    with pytest.raises(APCError) as info:
        compiler.compile_string(source, context=context)
    return info.value.code


@pytest.mark.parametrize(
    ("context", "code"),
    [
        ({"chat": [{"role": "function", "content": "x"}]}, "context.invalid_context"),
        ({"chat": 3}, "context.invalid_context"),
        (
            {"chat": [{"role": "assistant", "toolCalls": [{"id": "c", "function": "f"}]}]},
            "context.invalid_context",
        ),
        (
            {
                "chat": [
                    {
                        "role": "assistant",
                        "toolCalls": [{"id": "c", "name": "t", "arguments": "[1]"}],
                    }
                ]
            },
            "context.invalid_context",
        ),
        (
            {"chat": [{"role": "assistant", "toolCalls": [{"name": "t", "arguments": {}}]}]},
            "context.invalid_context",
        ),
        (
            {"chat": [{"role": "user", "content": "x", "toolCalls": [{"id": "c", "name": "t"}]}]},
            "lower.invalid_tool_call",
        ),
        (
            {"chat": [{"role": "tool", "toolCallId": "nope", "content": "x"}]},
            "lower.orphan_tool_result",
        ),
        ({"tools": [{"name": "t", "parameters": {"properties": [1]}}]}, "context.invalid_context"),
    ],
)
def test_broken_run_context(context: dict[str, Any], code: str) -> None:
    assert code_of("Hi <<agent.chat.history>> <<agent.tools.available>>", context) == code


@pytest.mark.parametrize(
    ("context", "message", "path"),
    [
        (  # a union's member tags (list[...], str) are not keys of the data
            {"worldInfo": 5},
            "run context field 'worldInfo': Input should be a valid list, or a valid string"
            " (found 5)",
            "worldInfo",
        ),
        (
            {"character": 5},
            "run context field 'character': Input should be a valid dictionary, or a valid"
            " string (found 5)",
            "character",
        ),
        (
            {"skills": {"plan": 5}},
            "run context field 'plan': Input should be a valid string (found 5)",
            "skills.plan",
        ),
        (  # the member that takes a list says what is wrong inside it
            {"worldInfo": [5]},
            "Input should be a valid dictionary (found 5)",
            "worldInfo[0]",
        ),
    ],
)
def test_a_wrong_type_says_what_the_field_takes(
    context: dict[str, Any], message: str, path: str
) -> None:
    """Each of a union's members is named in one message at the field's own path."""
    with pytest.raises(ContextError) as info:
        compiler.compile_string("x", context=context)
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.code, diagnostic.message, diagnostic.path) == (
        "context.invalid_context",
        message,
        path,
    )


def test_a_lorebook_given_as_world_info_says_where_it_goes() -> None:
    book = {"entries": {"0": {"uid": 0, "key": ["ferry"], "content": "The ferry."}}}
    with pytest.raises(ContextError) as info:
        compiler.compile_string("x", context={"worldInfo": book})
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.path == "worldInfo" and "not an object" in diagnostic.message
    assert diagnostic.hint is not None and '"lorebooks"' in diagnostic.hint
    inline = compiler.compile_string(
        "<<agent.world.activated>> <<agent.chat.history>>",
        context={"lorebooks": {"global": book}, "chat": [{"role": "user", "content": "ferry?"}]},
    )  # where the hint says it goes, it is read
    assert "The ferry." in json.dumps(inline.request)


def test_tool_names_must_stay_unique_after_aliasing() -> None:
    tools = [
        {"name": "workspace.read_file", "parameters": {"type": "object"}},
        {"name": "workspace_read_file", "parameters": {"type": "object"}},
    ]
    allow = {"tools": {"allow": ["workspace.*", "workspace_read_file"]}}
    with pytest.raises(APCError) as info:
        compiler.compile_string(
            "T<<agent.tools.available>>",
            context={"tools": tools},
            profile=resolve_profile(run=allow),
        )
    assert info.value.code == "lower.duplicate_tool_name"


def test_long_single_line_template_is_text() -> None:
    result = compiler.compile_string("x" * 300, context={})
    assert result.request["messages"][0]["content"] == "x" * 300


def test_template_file_bytes_kept(tmp_path: Path) -> None:
    ok = tmp_path / "ok.txt"
    ok.write_bytes("\ufeffHi\r\nthere".encode())
    result = compiler.compile(ok, context={})
    assert result.request["messages"][0]["content"] == "Hi\r\nthere"  # CRLF kept, BOM dropped
    bad = tmp_path / "bad.txt"
    bad.write_bytes("\ufeffHello\r\nWorld <<agent.fiel>>".encode())
    with pytest.raises(APCError) as info:
        compiler.check(bad)
    assert info.value.span is not None
    assert (info.value.span.line, info.value.span.column) == (2, 7)


def test_symlinked_root_is_denied(tmp_path: Path) -> None:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.txt").write_text("SECRET")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "plan").symlink_to(tmp_path / "secret")
    with pytest.raises(PolicyError) as info:
        compiler.compile_string(
            '<<agent.file "plan/key.txt">>', context={"workspace": str(tmp_path / "ws")}
        )
    assert info.value.code == "workspace.path_denied"


def test_fifo_in_workspace_is_refused_not_read(tmp_path: Path) -> None:
    (tmp_path / "output").mkdir()
    os.mkfifo(tmp_path / "output" / "pipe")
    assert (
        code_of('<<agent.file "output/pipe">>', {"workspace": str(tmp_path)})
        == "workspace.file_unreadable"
    )


def test_check_reports_every_file_even_after_an_unreadable_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("<<agent.fiel>>")
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    good = tmp_path / "good.txt"
    good.write_text("{{agent.plan}}")
    assert main(["check", str(bad), str(binary), str(good)]) == 1
    err = capsys.readouterr().err
    assert "template.unknown_macro" in err and "template.unreadable" in err
    assert "template.legacy_agent_macro" in err


def test_output_to_a_directory_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["compile", str(EXAMPLES / "template.txt"), "--context", str(EXAMPLES / "run.json")]
    assert main([*args, "-o", str(tmp_path)]) == 1
    assert "io.write_failed" in capsys.readouterr().err
    assert main([*args, "--journal", str(tmp_path)]) == 1
    assert "io.write_failed" in capsys.readouterr().err
    assert main([*args, "--max-completion-tokens", "0"]) == 2


def test_successful_compile_prints_nothing_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compile", str(EXAMPLES / "template.txt"), "--context", str(EXAMPLES / "run.json")]
    assert main([*args, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)["model"] == "gpt-4o"


def test_broken_inline_card_is_an_error_with_its_path() -> None:
    with pytest.raises(APCError) as info:
        compiler.compile_string(
            "Hi <<agent.character>>", context={"character": {"name": "A", "description": 3}}
        )
    assert (info.value.code, info.value.path) == ("context.invalid_card", "character.description")


def test_missing_card_file_is_the_contexts_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"character": "nope.png"}))
    assert main(["compile", str(EXAMPLES / "template.txt"), "--context", str(run)]) == 1
    assert "context.file_not_found" in capsys.readouterr().err
    assert main(["compile", str(EXAMPLES / "template.txt"), "--context", str(tmp_path)]) == 2
    assert "not a file" in capsys.readouterr().err


# -- issue 9: every bad input is a coded error, never a traceback --------------------------

RESULT = '{"toolResults": [{"callId": "a", "tool": "t", "arguments": {"x": %s}}]}'
BAD_JSON = {
    "huge integer": '{"chat": [], "x": ' + "9" * 5000 + "}",
    "NaN": RESULT % "NaN",
    "Infinity": RESULT % "-Infinity",
    "overflowing float": RESULT % "1e999",
    "deep nesting": '{"chat": ' + "[" * 100_000 + "]" * 100_000 + "}",
}


@pytest.mark.parametrize("name", sorted(BAD_JSON))
def test_hostile_json_in_the_run_context_is_a_coded_error(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.txt").write_text("Hi <<agent.tool_results>>")
    (tmp_path / "run.json").write_text(BAD_JSON[name])
    out = tmp_path / "out.json"
    args = ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    assert main([*args, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "error[context.invalid_json]" in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("where", ["profile", "preset", "platform"])
def test_deeply_nested_layers_are_coded_errors(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "t.txt").write_text("Hi")
    (tmp_path / "bad.json").write_text(deep)
    option = {"profile": "--run", "preset": "--preset", "platform": "--platform"}[where]
    assert main(["compile", str(tmp_path / "t.txt"), option, str(tmp_path / "bad.json")]) == 1
    err = capsys.readouterr().err
    assert "error[context.invalid_json]" in err and "nested too deeply" in err


def test_tool_call_arguments_are_read_strictly() -> None:
    for arguments in ('{"x": NaN}', "[" * 100_000, '{"n": ' + "1" * 5000 + "}"):
        chat = [
            {"role": "assistant", "toolCalls": [{"id": "c", "name": "t", "arguments": arguments}]},
            {"role": "tool", "toolCallId": "c", "content": "ok"},
        ]
        with pytest.raises(APCError) as info:
            compiler.compile_string("<<agent.chat.history>>", context={"chat": chat})
        assert info.value.code == "context.invalid_json"
        assert info.value.path == "chat[0].toolCalls[0]" and info.value.file == "<inline>"


def test_non_finite_numbers_from_python_objects_are_refused() -> None:
    ctx = {"toolResults": [{"callId": "a", "tool": "t", "arguments": {"x": float("nan")}}]}
    assert code_of("Hi <<agent.tool_results>>", ctx) == "context.invalid_json"


def test_a_huge_integer_argument_in_a_template_is_a_diagnostic() -> None:
    with pytest.raises(APCError) as info:
        compiler.compile_string("<<agent.plan budget=" + "9" * 5000 + ">>", context={"plan": "p"})
    assert info.value.code == "template.bad_argument"
    assert "too large" in info.value.message


def test_a_lorebook_with_a_negative_scan_depth_is_refused(tmp_path: Path) -> None:
    book = {"entries": [{"id": 0, "keys": ["x"], "content": "c"}], "scan_depth": -2}
    (tmp_path / "book.json").write_text(json.dumps(book))
    ctx = {"worldInfo": str(tmp_path / "book.json"), "chat": [{"role": "user", "content": "x"}]}
    assert code_of("<<agent.world.activated>>", ctx) == "context.invalid_world"


def test_lone_surrogates_become_replacement_characters_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.txt").write_text("Chat: <<agent.chat.history>>")
    (tmp_path / "run.json").write_text('{"chat": [{"role": "user", "content": "cut \\ud83d"}]}')
    (tmp_path / "c.jsonl").write_text(
        '{"user_name": "A", "character_name": "B"}\n'
        '{"name": "A", "is_user": true, "mes": "emoji \\ud83d\\ude00 and half \\udc00"}\n'
    )
    (tmp_path / "run2.json").write_text('{"chat": "c.jsonl"}')
    for run in ("run.json", "run2.json"):
        args = ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / run)]
        assert main(args) == 0
        captured = capsys.readouterr()
        assert "warning[context.lone_surrogate]" in captured.err
        assert "\ufffd" in json.loads(captured.out)["messages"][1]["content"]
    result = compiler.compile_string(
        "Chat: <<agent.chat.history>>", context={"chat": [{"role": "user", "content": "a\ud800"}]}
    )
    assert result.request["messages"][1]["content"] == "a\ufffd"
    assert [w.code for w in result.warnings] == ["context.lone_surrogate"]
    assert json.dumps(result.request, ensure_ascii=False).encode("utf-8")
    paired = compiler.compile_string(
        "Chat: <<agent.chat.history>>", context={"chat": [{"role": "user", "content": "😀"}]}
    )
    assert paired.warnings == [] and "😀" in paired.request["messages"][1]["content"]


def test_unreadable_skills_and_workspace_files_are_coded(tmp_path: Path) -> None:
    (tmp_path / "skills" / "latin").mkdir(parents=True)
    (tmp_path / "skills" / "latin" / "SKILL.md").write_bytes(b"caf\xe9")
    ws = tmp_path / "ws" / "summaries"
    ws.mkdir(parents=True)
    (ws / "loop.md").symlink_to(ws / "loop.md")
    (ws / "chat.md").symlink_to(ws / "chat.md")
    (tmp_path / "run.json").write_text(
        json.dumps(
            {"skills": "skills", "workspace": "ws", "chat": [{"role": "user", "content": "x"}]}
        )
    )
    run = tmp_path / "run.json"
    with pytest.raises(APCError) as info:
        compiler.compile_string('<<agent.skill "latin">>', context=run)
    assert info.value.code == "context.invalid_skill"
    with pytest.raises(APCError) as info:
        compiler.compile_string('<<agent.file "summaries/loop.md">>', context=run)
    assert info.value.code == "workspace.path_denied"
    # a looping summaries/chat.md no longer breaks every history compile
    ok = compiler.compile_string("S <<agent.chat.history>>", context=run, budget=30)
    assert ok.request["messages"][-1]["content"] == "x"
    with pytest.raises(APCError) as info:
        compiler.compile_string('<<agent.file "output/' + "n" * 300 + '.md">>', context=run)
    assert info.value.code in ("workspace.file_unreadable", "workspace.file_not_found")


def test_inputs_must_be_regular_files_within_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from compiler.syntax.parser import MAX_TEMPLATE_CHARS

    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)  # reading it would block forever
    (tmp_path / "t.txt").write_text("Hi")
    assert main(["compile", str(tmp_path / "t.txt"), "--context", str(fifo)]) == 2
    assert "not a file" in capsys.readouterr().err
    with pytest.raises(APCError) as info:
        compiler.compile(tmp_path / "t.txt", context=fifo)
    assert info.value.code == "context.file_unreadable"
    big = tmp_path / "big.txt"
    big.write_text("<<agent.plan>>" * (MAX_TEMPLATE_CHARS // 14 + 1))
    with pytest.raises(APCError) as info:
        compiler.compile(big)
    assert info.value.code == "template.too_large"
    preset = {
        "prompts": [
            {"identifier": f"p{i}", "content": "x" * (MAX_TEMPLATE_CHARS // 2)} for i in range(3)
        ]
    }
    (tmp_path / "p.json").write_text(json.dumps(preset))
    with pytest.raises(APCError) as info:
        compiler.compile(tmp_path / "p.json")
    assert info.value.code == "template.too_large"


def test_a_broken_card_has_one_code_through_every_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "card.json").write_text('{"spec": "chara_card_v2", "data": 3}')
    (tmp_path / "run.json").write_text('{"character": "card.json"}')
    (tmp_path / "t.txt").write_text("Hi")
    with pytest.raises(APCError) as info:
        compiler.compile(tmp_path / "t.txt", context=tmp_path / "run.json")
    api_code = info.value.code
    assert main(["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]) == 1
    assert f"error[{api_code}]" in capsys.readouterr().err
    assert api_code == "context.invalid_card"


def test_one_converter_gives_did_you_mean_from_the_object_at_the_path() -> None:
    ctx = {"toolResults": [{"callId": "a", "tol": "dice.roll"}]}
    with pytest.raises(APCError) as info:
        compiler.compile_string("Hi", context=ctx)
    assert info.value.code == "context.unknown_field"
    assert info.value.path == "toolResults[0].tol"
    assert info.value.hint == "did you mean 'tool'?"
    with pytest.raises(APCError) as top:
        compiler.compile_string("Hi", context={"tols": []})
    assert top.value.hint == "did you mean 'tools'?"
    with pytest.raises(APCError) as profile:
        resolve_profile(run={"tools": {"alow": []}})
    assert profile.value.code == "profile.unknown_field" and profile.value.hint == (
        "did you mean 'allow'?"
    )


def test_each_input_is_read_once_per_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Sera", "extensions": {"agent": {"enabled": True}}},
    }
    preset = {
        "prompts": [
            {"identifier": "agentSystemPrompt", "marker": True},
            {"identifier": "main", "content": "Be {{char}}."},
            {"identifier": "chatHistory", "marker": True},
        ],
        "agent": {"enabled": True},
    }
    (tmp_path / "card.json").write_text(json.dumps(card))
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    (tmp_path / "run.json").write_text(
        json.dumps({"character": "card.json", "chat": [{"role": "user", "content": "hi"}]})
    )
    opened: list[str] = []
    real_open = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.path.basename(os.fspath(path)))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    args = ["compile", str(tmp_path / "preset.json"), "--context", str(tmp_path / "run.json")]
    assert main(args) == 0, capsys.readouterr().err
    assert "Be Sera." in capsys.readouterr().out
    for name in ("preset.json", "run.json", "card.json"):
        assert opened.count(name) == 1, (name, opened)
    opened.clear()
    compiler.compile(tmp_path / "preset.json", context=tmp_path / "run.json")
    for name in ("preset.json", "run.json", "card.json"):
        assert opened.count(name) == 1, (name, opened)


# -- issue 9, second round: what a review of the first fixes found --------------------------


def test_a_directory_where_a_file_should_be_is_coded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "output" / "sub").mkdir(parents=True)
    (ws / "summaries" / "chat.md").mkdir(parents=True)  # a folder where the summary would be
    (tmp_path / "run.json").write_text(
        json.dumps(
            {"workspace": "ws", "chat": [{"role": "user", "content": f"m{i}"} for i in range(40)]}
        )
    )
    run = tmp_path / "run.json"
    with pytest.raises(APCError) as info:
        compiler.compile_string('<<agent.file "output/sub">>', context=run)
    assert info.value.code == "workspace.file_unreadable"
    ok = compiler.compile_string("S <<agent.chat.history>>", context=run, budget=40)
    assert ok.request["messages"][-1]["content"] == "m39"  # the folder is no summary, no crash
    with pytest.raises(APCError) as info:
        compiler.compile_string('<<agent.file "output/sub/../x">>', context=run)
    (ws / "output" / "a.md").write_text("a")
    with pytest.raises(APCError) as info:
        compiler.compile_string('<<agent.file "output/a.md/x">>', context=run)
    assert info.value.code == "workspace.file_not_found"


@pytest.mark.parametrize("bad", ["n" * 300, "a\x00b"])
def test_paths_the_os_cannot_take_are_coded(
    tmp_path: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.txt").write_text("Hi <<agent.chat.history>>")
    for key in ("chat", "character", "worldInfo"):
        with pytest.raises(APCError):
            compiler.compile(tmp_path / "t.txt", context={key: bad})
    with pytest.raises(APCError):
        compiler.compile_string('<<agent.file "output/a.md">>', context={"workspace": bad})
    with pytest.raises(APCError):
        compiler.compile_string('<<agent.skill "x">>', context={"skills": bad})
    with pytest.raises(APCError):
        compiler.compile(tmp_path / bad if "\x00" not in bad else bad)
    if "\x00" not in bad:  # argv cannot carry a NUL
        for args in (
            ["compile", bad],
            ["compile", str(tmp_path / "t.txt"), "--context", bad],
            ["check", bad],
            ["profile", "resolve", "--data-root", bad, "--profile", "p"],
        ):
            assert main(args) in (1, 2)
            assert "Traceback" not in capsys.readouterr().err


def test_a_symlink_loop_as_the_workspace_is_coded(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(APCError) as info:
        compiler.compile_string(
            '<<agent.file "output/a.md">>', context={"workspace": str(tmp_path / "loop")}
        )
    assert info.value.code == "context.workspace_not_found"


def test_nesting_past_the_serializer_is_too_deep_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = {"a": deep}
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "S", "extensions": deep},
    }
    (tmp_path / "card.json").write_text(json.dumps(card))
    (tmp_path / "t.txt").write_text("Hi")
    (tmp_path / "run.json").write_text(json.dumps({"character": "card.json"}))
    journal = tmp_path / "j.jsonl"
    args = ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    assert main([*args, "--journal", str(journal)]) == 1
    err = capsys.readouterr().err
    assert "error[context.too_deep]" in err and "Traceback" not in err
    assert json.loads(journal.read_text().splitlines()[-1])["type"] == "context_assembly_failed"
    results = {"toolResults": [{"callId": "a", "tool": "t", "arguments": deep}]}
    (tmp_path / "run2.json").write_text(json.dumps(results))
    (tmp_path / "t2.txt").write_text("Hi <<agent.tool_results>>")
    frame = ["compile", str(tmp_path / "t2.txt"), "--context", str(tmp_path / "run2.json")]
    assert main([*frame, "--emit", "frame"]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_lone_surrogates_warn_from_every_reader(tmp_path: Path) -> None:
    lore = {"entries": {"0": {"uid": 0, "key": ["x"], "content": "cut \ud83d", "constant": True}}}
    (tmp_path / "lore.json").write_text(json.dumps(lore))
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "S\udc00"}}
    (tmp_path / "card.json").write_text(json.dumps(card))
    preset = {"prompts": [{"identifier": "main", "content": "Be \ud83d."}]}
    (tmp_path / "p.json").write_text(json.dumps(preset))
    ctx = {"worldInfo": str(tmp_path / "lore.json"), "character": str(tmp_path / "card.json")}
    result = compiler.compile(tmp_path / "p.json", context=ctx)
    warned = {w.file for w in result.warnings if w.code == "context.lone_surrogate"}
    assert warned == {str(tmp_path / n) for n in ("lore.json", "card.json", "p.json")}
    with pytest.raises(APCError):
        compiler.compile(tmp_path / "p.json", context=ctx, strict=True)


def test_python_objects_meet_the_limits_json_text_meets() -> None:
    ctx = {"toolResults": [{"callId": "a", "tool": "t", "arguments": {"a": 10**5000}}]}
    assert code_of("Hi <<agent.tool_results>>", ctx) == "context.invalid_json"
    ctx = {"toolResults": [{"callId": "a", "tool": "t", "arguments": {"a": 10**150}}]}
    assert code_of("Hi <<agent.tool_results>>", ctx) == "context.invalid_json"
    for bad in ({"budget": -5}, {"reserve": -1}, {"max_completion_tokens": 0}, {"budget": 1.5}):
        with pytest.raises(ValueError):
            compiler.CompileOptions(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        compiler.compile_string("Hi", cache_stable=-1)


def test_an_unreadable_stored_profile_is_not_a_missing_one(tmp_path: Path) -> None:
    folder = tmp_path / "_tauritavern" / "agent-profiles" / "profiles"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "p1.json")
    with pytest.raises(APCError) as info:
        resolve_profile(profile_id="p1", data_root=tmp_path)
    assert info.value.code == "context.file_unreadable"


def test_check_refuses_what_compile_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preset = {
        "prompts": [{"identifier": "main", "content": "Hi"}],
        "agent": {"enabled": True, "profiles": [{"id": "p", "tools": {"alow": []}}]},
    }
    (tmp_path / "p.json").write_text(json.dumps(preset))
    assert main(["check", str(tmp_path / "p.json")]) == 1
    assert "error[profile.unknown_field]" in capsys.readouterr().err
    (tmp_path / "t.txt").write_text("Hi <<agent.chat.history>>")
    (tmp_path / "run.json").write_text('{"chat": [{"role": "user", "content": "cut \\ud83d"}]}')
    args = ["check", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    assert main(args) == 0
    assert "warning[context.lone_surrogate]" in capsys.readouterr().err
    assert main([*args, "--strict"]) == 1
    for bad in (["--budget", "-5"], ["--reserve", "-1"], ["--max-completion-tokens", "0"]):
        assert main(["check", str(tmp_path / "t.txt"), *bad]) == 2


def test_a_platform_file_is_strict_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.txt").write_text("Hi")
    (tmp_path / "platform.json").write_text('{"disabledProvider": ["openrouter"]}')
    assert (
        main(["compile", str(tmp_path / "t.txt"), "--platform", str(tmp_path / "platform.json")])
        == 1
    )
    err = capsys.readouterr().err
    assert "error[profile.unknown_field]" in err and "platform.json" in err
    assert "did you mean 'disabledProviders'?" in err


def test_inline_world_entries_are_checked() -> None:
    for entry in ({"content": 1}, {"content": "x", "position": "nowhere"}):
        assert code_of("W <<agent.world.activated>>", {"worldInfo": [entry]}) == (
            "context.invalid_context"
        )
    kept = {"content": "x", "position": "after", "key": ["a"], "uid": 3}
    result = compiler.compile_string("W <<agent.world.activated>>", context={"worldInfo": [kept]})
    assert result.request["messages"][0]["content"] == "W x"


@pytest.mark.parametrize(
    ("value", "repaired"),
    [
        ({"chat": [{"content": "ok"}], "n": 10**99}, 0),  # plain JSON: returned as is
        ({"deep": [[{"k": "cut \ud83d here"}]]}, 1),  # a surrogate below the top
        ({"k\udc00": "v"}, 1),  # in a key
        ({"t": ("a\ud800", "b")}, 1),  # not JSON (a tuple): the careful walk
        ({"p": Path("x"), "s": "\udfff"}, 1),  # not JSON at all: the careful walk
        ({"s": "9" * 500}, 0),  # a long digit run in a string is text, not a number
    ],
)
def test_sanitize_finds_every_repair_whatever_the_path(value: Any, repaired: int) -> None:
    from compiler.inputs.read import sanitize

    out, count = sanitize(value)
    assert count == repaired
    json.dumps(out, ensure_ascii=False, default=str).encode("utf-8")  # raises on a surrogate


@pytest.mark.parametrize("value", [{"n": [10**100]}, {"x": {"f": float("nan")}}])
def test_sanitize_refuses_what_json_text_cannot_hold(value: Any) -> None:
    from compiler.inputs.read import sanitize

    with pytest.raises(ContextError) as err:
        sanitize(value)
    assert err.value.code == "context.invalid_json"


class _Level(enum.IntEnum):
    HIGH = 2


class _Text(str):
    __slots__ = ()


@pytest.mark.parametrize("extra", [{}, {"cut": "\ud800"}])  # the fast path; the careful walk
def test_sanitize_gives_the_same_plain_json_whichever_the_path(extra: dict[str, str]) -> None:
    """A caller's tuples, enum numbers, str and dict subclasses and non-text keys come out
    as JSON would carry them (lists, plain values, text keys), with or without a repair."""
    from compiler.inputs.read import sanitize

    inner = {"k": [1]}
    value = {
        "t": ("a", "b"),
        1: _Level.HIGH,
        "s": _Text("x"),
        "od": OrderedDict(k=inner),
        None: True,
        2.5: "f",
    } | extra
    out, _ = sanitize(value)
    assert type(out["t"]) is list and out["t"] == ["a", "b"]
    assert type(out["1"]) is int and out["1"] == 2
    assert type(out["s"]) is str and type(out["od"]) is dict
    assert out["null"] is True and out["2.5"] == "f"
    out["od"]["k"]["k"].append(2)
    assert inner == {"k": [1]}  # never the caller's own objects


@pytest.mark.parametrize("value", [{(1, 2): "x"}, {"a": {frozenset(): 1}, "s": "\ud800"}])
def test_sanitize_refuses_a_key_json_cannot_hold(value: dict[Any, Any]) -> None:
    from compiler.inputs.read import sanitize

    with pytest.raises(ContextError) as err:
        sanitize(value)
    assert err.value.code == "context.invalid_json"


@pytest.mark.parametrize(
    ("chat", "repaired"),
    [
        ([{"role": "user", "content": "plain"}], 0),  # the quick check
        ([{"role": "user", "content": "bad \udc80 half"}], 1),  # a surrogate: the walk
        ([{"role": "user", "content": "ok", "name": ("t", "u")}], 0),  # not flat: the walk
    ],
)
def test_a_run_context_s_chat_is_checked_whichever_path(
    chat: list[dict[str, Any]], repaired: int
) -> None:
    from compiler.inputs.run import _sanitized

    given = {"chat": chat, "seed": 3}
    data, count, _plain = _sanitized(given)
    assert count == repaired and data["seed"] == 3
    assert data["chat"] is not chat and data["chat"][0] is not chat[0]  # a copy, never theirs
    assert "\udc80" not in json.dumps(data, ensure_ascii=False, default=str)


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_source_name_that_is_not_utf8_is_written_to_an_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """``-o FILE`` writes what standard output would, and JSON stays valid UTF-8 (the name's
    lone surrogate as its escape)."""
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"t\xff.txt")
    Path(name).write_text("Hello <<agent.plan>>\n")
    assert main(["explain", name, "--format", fmt, "-o", "out"]) == 0
    data = Path("out").read_bytes()
    if fmt == "json":
        assert json.loads(data.decode("utf-8"))["entries"]
        assert b"t\\udcff.txt" in data
    else:
        assert data.startswith(b"openai gpt-4o")
