"""What a preset author writes for agent mode is what is sent: an entry holding an Agent
entry's macro counts as that entry, an Agent entry keeps its own text, a preset with
``<<agent.*>>`` macros compiles in agent mode (and a legacy compile of one says what it
removes), and ``apc check --budget`` reports each warning once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.profile import resolve_profile

CHAT = [
    {"role": "user", "content": "Hi there"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Write a poem"},
]
TASK = "Write the poem to output/poem.md"
CONTEXT: dict[str, Any] = {"chat": CHAT, "character": {"name": "Mira"}, "task": TASK}
SYSTEM = resolve_profile().effective_system_prompt().strip()
ORDERED = ["main", "hist", "chatHistory", "agentTask", "agentResults"]


def write(tmp_path: Path, prompts: list[dict[str, Any]], **extra: Any) -> Path:
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    data = {"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps({**data, **extra}))
    return path


def texts(result: compiler.CompileResult) -> list[str]:
    return [str(m.get("content") or "") for m in result.request["messages"]]


def codes(result: compiler.CompileResult | compiler.PresetCheck, code: str) -> list[str]:
    return [w.message for w in result.warnings if w.code == code]


MAIN = {"identifier": "main", "content": "You are {{char}}.\n\n<<agent.system_prompt>>"}
HIST = {"identifier": "hist", "content": "## Conversation\n<<agent.chat.history>>\n## End"}
MARKER = {"identifier": "chatHistory", "marker": True}


def test_an_entry_holding_the_macro_counts_as_that_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [MAIN, HIST, MARKER])
    context = {**CONTEXT, "chatMetadata": {"note_prompt": "Keep it short", "note_depth": 1}}
    result = compiler.compile(path, context=context, mode="agent")
    sent = texts(result)
    assert sent[0] == f"You are Mira.\n\n{SYSTEM}"
    assert sum(SYSTEM in t for t in sent) == 1  # the system prompt once
    assert [t for t in sent if t in ("Hi there", "Write a poem")] == ["Hi there", "Write a poem"]
    # the task just before the entry that holds the chat; the note goes into that chat
    assert sent[1:] == [TASK, "## Conversation", *sent[3:5], "Keep it short", sent[6], "## End"]
    inserted = codes(result, "agent.prompt_entry_inserted")
    assert len(inserted) == 2 and "agentSystemPrompt" not in " ".join(inserted)
    assert main(["check", str(path), "--mode", "agent", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().err)
    assert [d["message"] for d in found] == inserted  # check says what compile does


def test_agent_entries_keep_their_own_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {"identifier": "agentSystemPrompt", "content": "Rules:\n<<agent.system_prompt>>\nEnd."},
            {"identifier": "main", "content": "Be {{char}}."},
            MARKER,
            {"identifier": "agentTask", "role": "system", "content": "## Your task"},
            {"identifier": "agentResults", "content": "## Tool results"},
        ],
    )
    results = [{"callId": "c1", "tool": "workspace.read_file", "content": "old draft"}]
    result = compiler.compile(path, context={**CONTEXT, "toolResults": results})
    sent = result.request["messages"]
    first = sent[0]["content"]  # the author's text around the macro
    assert first.startswith(f"Rules:\n{SYSTEM}") and first.endswith("\nEnd.")
    assert {"role": "user", "content": f"## Your task\n{TASK}"} in sent  # one user message
    at = texts(result).index("## Tool results")  # no macro: the results after the text
    assert sent[at + 1]["role"] == "assistant" and sent[at + 2]["content"] == "old draft"
    assert not codes(result, "agent.prompt_entry_inserted")
    no_task = compiler.compile(path, context={**CONTEXT, "task": None})
    assert "## Your task" not in texts(no_task)  # the entry stands for the task: nothing


def test_a_preset_with_agent_macros_compiles_in_agent_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [MAIN, HIST])
    result = compiler.compile(path, context=CONTEXT)  # no schema, no mode: agent
    assert "tools" in result.request and SYSTEM in texts(result)[0] and TASK in texts(result)
    assert not codes(result, "agent.macros_in_legacy")
    check = compiler.check(path)
    assert isinstance(check, compiler.PresetCheck) and check.mode == "agent"
    assert main(["check", str(path)]) == 0
    assert "agent.macros_in_legacy" not in capsys.readouterr().err
    # a plain SillyTavern preset stays legacy; so does one whose macro is never sent
    plain = write(tmp_path, [{"identifier": "main", "content": "Be {{char}}."}, MARKER])
    assert "tools" not in compiler.compile(plain, context=CONTEXT).request
    off = {**HIST, "injection_position": 1}
    assert compiler.check(write(tmp_path, [MAIN | {"content": "Hi"}, off])).mode == "legacy"  # type: ignore[union-attr]


@pytest.mark.parametrize("how", ["--mode legacy", "disabled schema"])
def test_a_legacy_compile_says_which_macros_it_removes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    schema = {"agent": {"enabled": False, "defaultProfile": "p", "profiles": [{"id": "p"}]}}
    path = write(tmp_path, [MAIN, HIST, MARKER], **(schema if how != "--mode legacy" else {}))
    mode: Any = "legacy" if how == "--mode legacy" else None
    result = compiler.compile(path, context=CONTEXT, mode=mode)
    assert "tools" not in result.request and texts(result)[0] == "You are Mira.\n\n"
    found = [w for w in result.warnings if w.code == "agent.macros_in_legacy"]
    assert [(w.span.file, w.span.line, w.span.column) for w in found if w.span] == [
        (f"{path}#prompts[0].content", 3, 1),
        (f"{path}#prompts[1].content", 2, 1),
    ]
    check = compiler.check(path, mode=mode)
    assert isinstance(check, compiler.PresetCheck) and check.mode == "legacy"
    assert [w for w in check.warnings if w.code == "agent.macros_in_legacy"] == found
    args = ["--mode", "legacy"] if mode else []
    assert main(["check", str(path), *args]) == 0
    err = capsys.readouterr().err
    assert f"{path}#prompts[0].content:3:1: warning[agent.macros_in_legacy]" in err
    ctx = tmp_path / "run.json"
    ctx.write_text(json.dumps(CONTEXT))
    assert main(["compile", str(path), "--context", str(ctx), *args]) == 0
    assert capsys.readouterr().err.count("warning[agent.macros_in_legacy]") == 2
    assert main(["compile", str(path), "--context", str(ctx), "--strict", *args]) == 1
    assert "error[agent.macros_in_legacy]" in capsys.readouterr().err


def test_check_with_a_budget_reports_each_warning_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [{"identifier": "main", "content": "Hi {{char}}."}, MARKER])
    ctx = tmp_path / "run.json"
    ctx.write_text(json.dumps(CONTEXT))
    args = ["check", str(path), "--mode", "agent", "--budget", "3000", "--context", str(ctx)]
    assert main(args) == 0
    out = capsys.readouterr()
    assert out.err.count("warning[agent.prompt_entry_inserted]") == 3
    assert out.out == "ok: 1 file, 0 errors, 3 warnings\n"
    legacy = write(tmp_path, [MAIN, MARKER])
    assert main(["check", str(legacy), "--mode", "legacy", "--budget", "3000"]) == 0
    assert capsys.readouterr().err.count("warning[agent.macros_in_legacy]") == 1


def test_an_agent_entry_without_its_macro_gets_it_after_its_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {"identifier": "agentSystemPrompt", "content": "Stay in character."},
            MAIN | {"content": "Hi"},
        ],
    )
    result = compiler.compile(path, context=CONTEXT, mode="agent")
    assert texts(result)[0] == f"Stay in character.\n{SYSTEM}"


def test_agent_task_is_no_macro_and_the_error_says_where_the_task_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = {"identifier": "agentTask", "content": "Task:\n<<agent.task>>"}
    path = write(tmp_path, [MAIN, MARKER, task])
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}#prompts[2].content:2:1: error[template.unknown_macro]" in err
    assert "agentTask entry sends its own text, then the task" in err


@pytest.mark.parametrize("mode", ["agent", "legacy"])
def test_check_with_a_budget_reports_a_literal_st_macro_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    """The compile a budget check runs finds the macro the static check found (there with its
    position): it is reported once, where it is."""
    entry = {"identifier": "main", "content": "Hi {{unknownthing}} and {{bogus::x}}."}
    path = write(tmp_path, [entry, MARKER])
    ctx = tmp_path / "run.json"
    ctx.write_text(json.dumps(CONTEXT))
    args = ["check", str(path), "--mode", mode, "--budget", "3000", "--context", str(ctx)]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert err.count("warning[template.unknown_st_macro]") == 2
    assert err.count(f"{path}#prompts[0].content:1:4: warning[template.unknown_st_macro]") == 1
