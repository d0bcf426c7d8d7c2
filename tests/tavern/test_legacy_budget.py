"""Legacy budgets as SillyTavern fills them: the fixed prompts first (they must fit), then
history newest first, then the dialogue examples (issue 12, item 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler
from compiler.errors import BudgetError

IDS = ["main", "charDescription", "personaDescription", "dialogueExamples", "chatHistory"]
CARD = {"name": "Aqua", "description": "Aqua is a goddess.", "mes_example": "{{char}}: Yo"}
CHAT = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "word " * 30}
    for i in range(40)
]


def contents(tmp_path: Path, budget: int) -> list[str]:
    preset = {
        "prompts": [{"identifier": "main", "role": "system", "content": "Main"}]
        + [{"identifier": i, "marker": True} for i in IDS[1:]],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in IDS]}],
        "new_chat_prompt": "",
    }
    ctx = {"character": CARD, "persona": {"name": "Kazuma", "description": "A boy."}, "chat": CHAT}
    (tmp_path / "preset.json").write_text(json.dumps(preset))
    result = compiler.compile(tmp_path / "preset.json", context=ctx, mode="legacy", budget=budget)
    return [str(m["content"]) for m in result.request["messages"]]


def test_everything_fits_at_a_large_budget(tmp_path: Path) -> None:
    got = contents(tmp_path, 100_000)
    assert got[:5] == ["Main", "Aqua is a goddess.", "A boy.", "[Example Chat]", "Yo"]
    assert len(got) == 5 + len(CHAT)


def test_history_is_cut_before_the_card_and_the_examples_go_first(tmp_path: Path) -> None:
    got = contents(tmp_path, 600)
    assert got[:3] == ["Main", "Aqua is a goddess.", "A boy."]
    assert "Yo" not in got and "[Example Chat]" not in got
    chat = got[3:]
    assert 0 < len(chat) < len(CHAT) and chat[-1] == CHAT[-1]["content"]


def test_fixed_prompts_that_cannot_fit_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(BudgetError) as err:
        contents(tmp_path, 12)
    assert err.value.code == "context.budget_exceeded"
