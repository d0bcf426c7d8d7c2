"""A legacy preset with ``squash_system_messages`` is fitted as SillyTavern fits it: every
prompt is counted apart, with its message framing, before ``squashSystemMessages`` merges
the system messages (public/scripts/openai.js: populateChatCompletion counts each Message,
squashSystemMessages runs after it). So the history and the dialogue examples kept are
those of the same preset without squash, and the request sent is that request squashed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler._base.tokens import TokenCounter
from compiler.cli.commands.explain import render_ledger
from compiler.errors import BudgetError
from compiler.providers import get_dialect
from compiler.providers.layout import squash_system

IDS = [
    "main",
    "charDescription",
    "charPersonality",
    "scenario",
    "personaDescription",
    "dialogueExamples",
    "chatHistory",
    "jailbreak",
]
CARD = {
    "name": "Aqua",
    "description": "Aqua is a goddess of water.",
    "personality": "loud, kind",
    "scenario": "A guild hall in Axel.",
    "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Yo! "
    + "splash " * 20
    + "\n<START>\n{{user}}: Bye\n{{char}}: "
    + "wave " * 30,
}
CHAT = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "word " * 12}
    for i in range(24)
]
FIXED = ("[Start a new Chat]", "[Example Chat]")  # SillyTavern's newMainChat / newChat


def compiled(tmp_path: Path, squash: bool, budget: int, mode: str = "legacy") -> Any:
    preset = {
        "prompts": [
            {"identifier": "main", "role": "system", "content": "Main"},
            {"identifier": "jailbreak", "role": "system", "content": "Reply as {{char}}."},
        ]
        + [{"identifier": i, "marker": True} for i in IDS if i not in ("main", "jailbreak")],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in IDS]}],
        "squash_system_messages": squash,
    }
    ctx = {"character": CARD, "persona": {"name": "Kazuma", "description": "A boy."}, "chat": CHAT}
    path = tmp_path / f"preset-{squash}.json"
    path.write_text(json.dumps(preset), encoding="utf-8")
    return compiler.compile(path, context=ctx, mode=mode, budget=budget, model="gpt-4o")


def squashed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return squash_system(messages, [m["content"] in FIXED for m in messages])  # type: ignore[arg-type]


def count(messages: list[dict[str, Any]]) -> int:
    dialect = get_dialect("openai")
    return dialect.count_request({"messages": messages}, TokenCounter("o200k_base"))


@pytest.mark.parametrize("budget", range(260, 700, 9))
def test_the_request_is_the_unsquashed_one_squashed(tmp_path: Path, budget: int) -> None:
    """At every budget (the history cut at each of its messages, the examples block by
    block), squash changes what is sent, never what is kept."""
    try:
        apart = compiled(tmp_path, False, budget)
    except BudgetError:
        with pytest.raises(BudgetError):  # the fixed prompts alone do not fit either way
            compiled(tmp_path, True, budget)
        return
    merged = compiled(tmp_path, True, budget)
    assert merged.request["messages"] == squashed(apart.request["messages"])
    ledger = merged.ledger
    assert ledger.total_tokens + ledger.squash_saved_tokens == apart.ledger.total_tokens
    assert ledger.total_tokens + ledger.squash_saved_tokens <= budget
    used = sum(e.tokens_used for e in ledger.entries)
    assert used + ledger.overhead_tokens == ledger.total_tokens == count(merged.request["messages"])


def test_a_message_is_kept_only_when_its_unsquashed_count_fits(tmp_path: Path) -> None:
    """SillyTavern's edge: the whole chat fits at the unsquashed count and not one token
    less, however much the merge would have saved."""
    whole = compiled(tmp_path, True, 100_000)
    need = whole.ledger.total_tokens + whole.ledger.squash_saved_tokens
    assert whole.ledger.squash_saved_tokens >= 3 * 4  # five system prompts merge into one
    at = compiled(tmp_path, True, need)
    assert at.request["messages"] == whole.request["messages"]
    under = compiled(tmp_path, True, need - 1)
    lost = len(whole.request["messages"]) - len(under.request["messages"])
    assert lost >= 1
    assert under.ledger.total_tokens < need - 1 - 3 * 4  # the merged request had room


def test_the_fixed_prompts_are_counted_apart_too(tmp_path: Path) -> None:
    """The fixed prompts must fit as SillyTavern counts them: apart."""
    floor = compiled(tmp_path, False, 100_000)
    fixed = [
        m for m in floor.request["messages"] if m["role"] == "system" and "name" not in m
    ]  # the card, persona and preset prompts, the examples' and chat's headers
    assert len(fixed) >= 6
    with pytest.raises(BudgetError):
        compiled(tmp_path, True, count(fixed) - 1)


def test_the_budget_check_counts_them_apart(tmp_path: Path) -> None:
    preset = {
        "prompts": [{"identifier": i, "role": "system", "content": f"Rule {i}."} for i in "abcdef"],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": i} for i in "abcdef"]}],
        "squash_system_messages": True,
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset), encoding="utf-8")
    apart = count([{"role": "system", "content": f"Rule {i}."} for i in "abcdef"])
    for budget, problem in ((apart - 1, True), (apart, False)):
        check = compiler.check_budget(path, mode="legacy", budget=budget)
        assert check.floor_tokens == apart
        assert (check.problem is not None) is problem
    result = compiler.compile(path, mode="legacy", budget=apart)
    assert len(result.request["messages"]) == 1
    assert result.ledger.total_tokens + result.ledger.squash_saved_tokens == apart


def test_agent_mode_counts_the_request_as_sent(tmp_path: Path) -> None:
    """Agent mode's budget is the compiler's own: it counts the merged request."""
    result = compiled(tmp_path, True, 100_000, mode="agent")
    assert result.ledger.squash_saved_tokens == 0


def test_explain_says_what_the_budget_counted(tmp_path: Path) -> None:
    ledger = compiled(tmp_path, True, 100_000).ledger
    text = render_ledger(ledger)
    held = ledger.total_tokens + ledger.squash_saved_tokens
    assert f"the budget counted {held:,} tokens" in text
    assert "squash_system_messages" not in render_ledger(compiled(tmp_path, False, 100_000).ledger)
    dumped = ledger.model_dump(mode="json", by_alias=True)
    assert dumped["squashSavedTokens"] == ledger.squash_saved_tokens
