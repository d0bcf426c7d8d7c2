"""Bad inputs end in one coded error, never a traceback, and nothing half-written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import APCError, PolicyError
from compiler.profile import resolve_profile

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "writer"


def code_of(source: str, context: dict[str, Any]) -> str:
    with pytest.raises(APCError) as info:
        compiler.compile(source, context=context)
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


def test_tool_names_must_stay_unique_after_aliasing() -> None:
    tools = [
        {"name": "workspace.read_file", "parameters": {"type": "object"}},
        {"name": "workspace_read_file", "parameters": {"type": "object"}},
    ]
    allow = {"tools": {"allow": ["workspace.*", "workspace_read_file"]}}
    with pytest.raises(APCError) as info:
        compiler.compile(
            "T<<agent.tools.available>>",
            context={"tools": tools},
            profile=resolve_profile(run=allow),
        )
    assert info.value.code == "lower.duplicate_tool_name"


def test_long_single_line_template_is_text() -> None:
    result = compiler.compile("x" * 300, context={})
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
        compiler.compile(
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
        compiler.compile(
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
