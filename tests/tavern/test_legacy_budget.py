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


def test_the_room_history_leaves_goes_to_the_examples_block_by_block(tmp_path: Path) -> None:
    """As SillyTavern's populateDialogueExamples (st-oracle captures corpus_aqua_long_tight,
    synth_long_tight): history takes what it can, the examples get the rest; a block stops
    at its first message that does not fit (its header goes with it when none fits) and the
    next block is still tried."""
    examples = "<START>\n{{user}}: Hi\n{{char}}: " + "long " * 60 + "\n<START>\n{{user}}: Bye"
    plain = {**CARD, "mes_example": ""}
    with_examples = {**CARD, "mes_example": examples}

    def run(card: dict[str, str], budget: int) -> tuple[list[str], int]:
        preset = {
            "prompts": [{"identifier": "main", "role": "system", "content": "Main"}]
            + [{"identifier": i, "marker": True} for i in IDS[1:]],
            "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in IDS]}],
            "new_chat_prompt": "",
        }
        (tmp_path / "preset.json").write_text(json.dumps(preset))
        ctx = {"character": card, "persona": {"name": "Kazuma", "description": "A boy."}}
        chat = [{**m, "content": m["content"] * 2} for m in CHAT]  # ~65 tokens each
        result = compiler.compile(
            tmp_path / "preset.json", context={**ctx, "chat": chat}, mode="legacy", budget=budget
        )
        messages = [str(m["content"]) for m in result.request["messages"]]
        return messages, budget - result.ledger.total_tokens

    # a budget whose history cut leaves room for both short blocks but not the long message
    budget = next(b for b in range(600, 700) if 40 <= run(plain, b)[1] <= 50)
    history, _ = run(plain, budget)
    got, _ = run(with_examples, budget)
    assert got[3:7] == ["[Example Chat]", "Hi", "[Example Chat]", "Bye"]
    assert got[7:] == history[3:]  # the examples never take history's room
