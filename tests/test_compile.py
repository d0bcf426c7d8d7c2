"""End to end: template + run context -> OpenAI Chat Completions request, from API and CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler._base.tokens import counter_for
from compiler.cli import main
from compiler.errors import BudgetError, LoweringError, PolicyError
from compiler.providers.openai_chat import DIALECT, cookbook_function_tokens

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

TEMPLATE = EXAMPLES / "writer" / "template.txt"
RUN = EXAMPLES / "writer" / "run.json"


def chat(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i} " * 5}
        for i in range(n)
    ]


def test_example_compiles_to_a_chat_completions_request() -> None:
    result = compiler.compile(TEMPLATE, context=RUN)
    req = result.request
    assert req["model"] == "gpt-4o"
    roles = [m["role"] for m in req["messages"]]
    assert roles == ["system", "user", "assistant", "user", "system"]
    system = req["messages"][0]["content"]
    assert "Mira left the village before dawn" in system  # agent.file read the workspace
    assert "1. Mira reaches the ferry." in system  # agent.plan
    assert "output/main.md\nplan/plan.md\nscratch/notes.md" in system  # workspace tree
    assert req["messages"][1]["name"] == "Sam"
    # exactly default-writer's visible tools: the run's three definitions first, then the
    # other visible known tools with their built-in definitions, in catalogue order
    assert [t["function"]["name"] for t in req["tools"]] == [
        "workspace_read_file",
        "workspace_write_file",
        "workspace_finish",
        "chat_search",
        "chat_read_messages",
        "worldinfo_read_activated",
        "skill_list",
        "skill_search",
        "skill_read",
        "workspace_list_files",
        "workspace_search_files",
        "workspace_apply_patch",
    ]
    assert req["tools"][0]["function"]["description"] == "Read a file from the run workspace."
    assert req["messages"][-1]["content"].startswith("Write the next scene")
    assert result.ledger.total_tokens == DIALECT.count_request(req, counter_for("o200k_base"))


def test_text_before_and_after_history_are_separate_messages() -> None:
    result = compiler.compile_string(
        "Before.\n<<agent.chat.history>>\nAfter.", context={"chat": chat(2)}
    )
    contents = [m["content"] for m in result.request["messages"]]
    assert contents[0] == "Before." and contents[-1] == "After."
    assert len(contents) == 4


def test_data_is_never_expanded() -> None:
    ctx = {"chat": [{"role": "user", "content": "say <<agent.plan>> please"}], "plan": "SECRET"}
    result = compiler.compile_string("<<agent.chat.history>>", context=ctx)
    assert result.request["messages"] == [{"role": "user", "content": "say <<agent.plan>> please"}]


def test_budget_drops_oldest_history_and_never_exceeds() -> None:
    ctx = {"chat": chat(50)}
    full = compiler.compile_string("System.\n<<agent.chat.history>>", context=ctx)
    budget = full.ledger.total_tokens // 2
    cut = compiler.compile_string("System.\n<<agent.chat.history>>", context=ctx, budget=budget)
    total = DIALECT.count_request(cut.request, counter_for("o200k_base"))
    assert total <= budget
    assert cut.ledger.total_tokens == total
    summary, *kept = cut.request["messages"][1:]
    assert summary["role"] == "system" and "older messages" in summary["content"]
    assert kept == full.request["messages"][-len(kept) :]  # the newest survive, in order
    assert 0 < len(kept) < 50
    assert total >= 0.95 * budget
    cuts = [e for e in cut.events if e.type == "context_component_cut"]
    assert cuts and cuts[0].payload["reason"] == "budget"
    assert not [e for e in cut.events if e.type == "context_component_skipped"]


def test_tool_call_and_results_are_cut_together() -> None:
    messages = [
        {"role": "user", "content": "x " * 50},
        {
            "role": "assistant",
            "content": None,
            "toolCalls": [{"id": "c1", "function": {"name": "chat.search", "arguments": "{}"}}],
        },
        {"role": "tool", "toolCallId": "c1", "content": "found " * 30},
        {"role": "user", "content": "thanks"},
    ]
    full = compiler.compile_string("Go.<<agent.chat.history>>", context={"chat": messages})
    kept_counts = set()
    for budget in range(10, full.ledger.total_tokens + 1):
        template = 'Go.<<agent.chat.history strategy="truncate">>'
        try:
            result = compiler.compile_string(template, context={"chat": messages}, budget=budget)
        except BudgetError:  # under the floor: the newest turn ("thanks") is never cut
            continue
        history = result.request["messages"][1:]
        assert not history or history[0]["role"] != "tool"
        kept_counts.add(len(history))
    assert kept_counts == {1, 3, 4}  # whole units only: the call and its result together


def test_empty_request_is_an_error() -> None:
    with pytest.raises(LoweringError) as info:
        compiler.compile_string("   \n", context={})
    assert info.value.code == "lower.empty_request"


def test_budget_that_cannot_be_met_fails_with_numbers() -> None:
    with pytest.raises(BudgetError) as info:
        compiler.compile(TEMPLATE, context=RUN, budget=50)
    assert info.value.code == "context.budget_exceeded"
    assert info.value.details["budget"] == 50


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "/etc/passwd",
        "output/../../x",
        "C:/x",
        "output\\..\\..\\x",
        "a\x00b",
        "notaroot/x",
    ],
)
def test_workspace_paths_cannot_leave(path: str) -> None:
    ctx = {"workspace": {"files": {"output/main.md": "ok"}}}
    escaped = path.replace("\\", "\\\\").replace("\x00", "\\u0000")
    with pytest.raises(PolicyError) as info:
        compiler.compile_string(
            f'<<agent.file "{escaped}">>'.replace("\\u0000", "\x00"), context=ctx
        )
    assert info.value.code == "workspace.path_denied"


def test_symlink_out_of_the_root_is_denied(tmp_path: Path) -> None:
    (tmp_path / "ws" / "output").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    (tmp_path / "ws" / "output" / "link.md").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(PolicyError):
        compiler.compile_string(
            '<<agent.file "output/link.md">>', context={"workspace": str(tmp_path / "ws")}
        )


# -- CLI ---------------------------------------------------------------------------------


def test_cli_compile_prints_request(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(TEMPLATE), "--context", str(RUN)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == compiler.compile(TEMPLATE, context=RUN).request


def test_cli_output_is_atomic_and_absent_on_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "req.json"
    assert main(["compile", str(TEMPLATE), "--context", str(RUN), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["model"] == "gpt-4o"
    bad = tmp_path / "bad.json"
    assert (
        main(["compile", str(TEMPLATE), "--context", str(RUN), "--budget", "10", "-o", str(bad)])
        == 1
    )
    assert not bad.exists() and list(tmp_path.iterdir()) == [out]
    assert "error[context.budget_exceeded]" in capsys.readouterr().err


def test_cli_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.txt"
    good.write_text("<<agent.plan>> {{agent.plan}}")
    bad = tmp_path / "bad.txt"
    bad.write_text("Read: <<agent.fiel>>\n")
    assert main(["check", str(good)]) == 0
    assert "warning[template.legacy_agent_macro]" in capsys.readouterr().err
    assert main(["check", str(good), str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:1:7: error[template.unknown_macro]: unknown macro 'agent.fiel'" in err
    assert "  |       ^^^^^^^^^^^^^^" in err
    assert "= hint: did you mean 'agent.file'?" in err
    assert main(["check", str(bad), "--format", "json"]) == 1
    (d,) = json.loads(capsys.readouterr().err)
    assert (d["code"], d["line"], d["column"], d["file"]) == (
        "template.unknown_macro",
        1,
        7,
        str(bad),
    )
    assert main(["check", str(tmp_path / "missing.txt")]) == 2
    assert main(["check"]) == 2
    assert main(["frobnicate"]) == 2


def test_cli_broken_context_json_names_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run.json"
    run.write_text('{"chat": [}')
    assert main(["compile", str(TEMPLATE), "--context", str(run)]) == 1
    err = capsys.readouterr().err
    assert f"{run}:1:" in err and "context.invalid_json" in err and "Traceback" not in err
    run.write_text('{"chat": [], "tols": []}')
    assert main(["compile", str(TEMPLATE), "--context", str(run)]) == 1
    err = capsys.readouterr().err
    assert "context.unknown_field" in err and "did you mean 'tools'?" in err


def test_cli_unknown_model_and_provider(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(TEMPLATE), "--context", str(RUN), "--model", "mystery-1"]) == 1
    assert "tokenizer.unknown_model" in capsys.readouterr().err
    assert main(["compile", str(TEMPLATE), "--context", str(RUN), "--provider", "opneai"]) == 1
    assert "did you mean 'openai'?" in capsys.readouterr().err
    assert (
        main(
            [
                "compile",
                str(TEMPLATE),
                "--context",
                str(RUN),
                "--model",
                "mystery-1",
                "--encoding",
                "cl100k_base",
            ]
        )
        == 0
    )


def test_cookbook_counts_are_pinned() -> None:
    """Known OpenAI counts (o200k_base), so the cost model itself is checked, not just reused."""
    counter = counter_for("o200k_base")
    system_hi = {"model": "gpt-4o", "messages": [{"role": "system", "content": "hi"}]}
    assert DIALECT.count_request(system_hi, counter) == 8  # 3 + system(1) + hi(1) + 3 priming
    named = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hello world", "name": "Sam"}],
    }
    assert DIALECT.count_request(named, counter) == 11  # 3 + user + 2 + Sam(1) + 1 + 3
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name."},
                    "unit": {"type": "string", "enum": ["c", "f"]},
                },
            },
        },
    }
    with_tool = {**system_hi, "tools": [tool]}
    # the cookbook: 7 + "get_weather:Get the weather"(5) + 3 + (3 + "city:string:City name"(5))
    #   + (3 - 3 + (3+1) + (3+1) + "unit:string:"(3)) = 34 (+ 12 once)
    assert cookbook_function_tokens(tool["function"], counter) == 34
    # the count is the larger of that and 7 + the definition's compact JSON (46 tokens)
    compact = json.dumps(tool["function"], separators=(",", ":"))
    assert counter.count(compact) == 46
    assert DIALECT.count_request(with_tool, counter) - 8 == 12 + max(34, 7 + 46)
