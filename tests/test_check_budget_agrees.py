"""``check_budget`` (``apc check --budget``) and a compile agree: when the floor fits the
budget but a compile at it fails for the budget (the estimating dialects hold back a safety
margin of it), the check reports ``context.budget_infeasible`` instead of raising the
compile's error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler
from compiler.cli import main
from compiler.errors import BudgetError

CHAT = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"Turn {i}. " + "word " * 12}
    for i in range(31)
]


def template(tmp_path: Path) -> Path:
    path = tmp_path / "t.txt"
    path.write_text("System.<<agent.chat.history>>")
    return path


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_budget_within_the_safety_margin_is_infeasible_not_raised(
    tmp_path: Path, provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, ctx = template(tmp_path), {"chat": CHAT}
    floor = compiler.check_budget(path, context=ctx, provider=provider).floor_tokens
    with pytest.raises(BudgetError):  # the margin: the fit has less than the budget
        compiler.compile(path, context=ctx, budget=floor, provider=provider)
    found = compiler.check_budget(path, context=ctx, budget=floor, provider=provider)
    assert found.problem is not None and f"need {floor} tokens" in found.problem
    codes = [d.code for d in found.diagnostics(str(path))]
    assert codes[-1] == "context.budget_infeasible"
    assert "held back" in (found.diagnostics(str(path))[-1].hint or "")
    args = ["check", str(path), "--provider", provider, "--budget", str(floor)]
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    assert main([*args, "--context", str(tmp_path / "run.json")]) == 1
    assert "error[context.budget_infeasible]" in capsys.readouterr().err


def test_strict_does_not_make_the_unbounded_compile_a_finding(tmp_path: Path) -> None:
    """The budget check compiles at an unbounded budget on purpose: under ``strict`` that is
    no ``context.budget_over_window`` (it was, for every strict check of a known model)."""
    path, ctx = template(tmp_path), {"chat": CHAT}
    plain = compiler.check_budget(path, context=ctx, budget=5)
    strict = compiler.check_budget(path, context=ctx, budget=5, strict=True)
    assert strict.diagnostics(str(path)) == plain.diagnostics(str(path))
    assert [d.code for d in plain.diagnostics(str(path))] == ["context.budget_infeasible"]
