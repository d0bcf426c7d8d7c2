"""The bounds of SillyTavern's macros: the work of a whole compile (one budget for all its
texts), and the numbers in macro arguments."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

import compiler
import compiler.st.macros
from compiler.errors import APCError
from compiler.st.macros import (
    MAX_MACRO_CHARS,
    MAX_MACRO_DIGITS,
    MacroBudget,
    MacroEnv,
    literal_macros,
    substitute,
)

ENV = MacroEnv(now=datetime(2024, 3, 5, 14, 7, 9), seed=7)
LONG = "9" * 5_000  # over Python's 4,300-digit limit of int()


def _doubling_preset(entries: int) -> dict[str, Any]:
    """``entries`` preset entries, each doubling the chat variable ``a`` 20 times and
    sending it: 16 characters become 16 Mi in each entry, under the per-text limit."""
    text = "{{addvar::a::{{getvar::a}}}}" * 19 + "{{getvar::a}}"
    ids = [f"p{i}" for i in range(entries)]
    return {
        "prompts": [{"identifier": i, "role": "system", "content": text} for i in ids],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in ids]}],
    }


@pytest.mark.parametrize("entries", [128, 256])
def test_macro_work_is_bounded_per_compile(entries: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: each entry stayed under the 16 Mi per-text limit, so 128 entries built 2 GiB
    of text (1.5 GB, 15 s) and failed only at the budget (context.budget_exceeded). Now
    the compile's one budget stops the first entry, before the variable passes it."""
    budgets: list[MacroBudget] = []

    class Counted(MacroBudget):
        def __init__(self) -> None:
            super().__init__()
            budgets.append(self)

    monkeypatch.setattr(compiler.st.macros, "MacroBudget", Counted)  # the assembler's, on first use
    preset = json.dumps(_doubling_preset(entries))
    assert len(preset) < 200_000
    with pytest.raises(APCError) as info:
        compiler.compile_string(preset, kind="preset", context={"variables": {"a": "y" * 16}})
    assert info.value.code == "template.macro_budget"
    (budget,) = budgets
    # the work done: the limit plus the one charge that passed it (refused before it was
    # built); no variable longer than half the limit was ever stored
    assert budget.chars <= 2 * MAX_MACRO_CHARS
    assert budget.peak_variable <= MAX_MACRO_CHARS // 2
    assert budget.steps < 40  # the first entry: 20 doublings


def test_the_budget_is_shared_by_the_texts_of_a_compile() -> None:
    """Texts each well under the per-text limit (1 MB each): a few fill in, 40 (40 MB) do
    not."""
    card = {"name": "Mira", "description": "x" * 250_000}

    def preset(entries: int) -> str:
        data = _doubling_preset(entries)
        for p in data["prompts"]:
            p["content"] = "{{description}}" * 4
        return json.dumps(data)

    result = compiler.compile_string(
        preset(4), kind="preset", context={"character": card}, budget=10_000_000
    )
    assert "x" * 1_000 in result.request["messages"][0]["content"]
    with pytest.raises(APCError) as info:
        compiler.compile_string(
            preset(40), kind="preset", context={"character": card}, budget=10_000_000
        )
    assert info.value.code == "template.macro_budget"


def test_nested_literal_macros_cannot_copy_a_value_over_and_over() -> None:
    """Each unknown ``{{x...}}`` around a long value rebuilds it: charged as built."""
    depth = 200
    text = "{{x" * depth + "{{description}}" + "}}" * depth
    budget = MacroBudget(chars=10_000_000)
    with pytest.raises(APCError) as info:
        substitute(text, {"description": "d" * 100_000}, ENV, budget=budget)
    assert info.value.code == "template.macro_budget"
    assert budget.chars <= 10_000_000 + 2 * 100_000 + 4 * depth


def test_dice_are_steps() -> None:
    budget = MacroBudget(steps=10_000)
    with pytest.raises(APCError) as info:
        substitute("{{roll:1000d6}}" * 11, {}, ENV, budget=budget)
    assert info.value.code == "template.macro_budget"
    assert budget.steps <= 10_000 + 1_000


@pytest.mark.parametrize(
    "text",
    [
        "{{roll:" + LONG + "}}",
        "{{roll:1d" + LONG + "}}",
        "{{roll:" + LONG + "d6}}",
        "{{roll:2d6+" + LONG + "}}",
        "{{roll:2d6 - " + LONG + "}}",
        "{{time_UTC+" + LONG + "}}",
        "{{time_UTC-" + LONG + "}}",
        "{{roll:1d1" + "0" * MAX_MACRO_DIGITS + "}}",  # 16 digits
        "{{roll:1d\u0669}}",  # an Arabic-Indic 9: JavaScript's \d is ASCII
    ],
)
def test_a_number_past_its_range_leaves_the_macro_as_written(text: str) -> None:
    """Before: Python's integer-digit ValueError (through apc serve, a 500)."""
    assert substitute(text, {}, ENV) == text
    assert literal_macros(text) == [text]


def test_numbers_within_range() -> None:
    assert int(substitute("{{roll:1d" + "9" * MAX_MACRO_DIGITS + "}}", {}, ENV)) >= 1
    assert substitute("{{roll:1d1+" + "9" * MAX_MACRO_DIGITS + "}}", {}, ENV) == "1" + "0" * 15
    # variables hold text: a long number is a float, printed as JavaScript prints it
    assert substitute("{{addvar::a::" + LONG + "}}{{getvar::a}}", {}, ENV) == "Infinity"
    assert substitute("{{setvar::a::1e300}}{{incvar::a}}", {}, ENV) == "1e+300"
    assert substitute("{{setvar::a::99999999999999999999}}{{incvar::a}}", {}, ENV) == (
        "100000000000000000000"
    )


def test_a_long_number_in_a_preset_is_a_warning_not_a_crash() -> None:
    preset = {
        "prompts": [{"identifier": "main", "role": "system", "content": "{{roll:1d" + LONG + "}}"}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main"}]}],
    }
    result = compiler.compile_string(json.dumps(preset), kind="preset", mode="legacy")
    assert result.request["messages"][0]["content"] == "{{roll:1d" + LONG + "}}"
    assert "template.unknown_st_macro" in [w.code for w in result.warnings]
