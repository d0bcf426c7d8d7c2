"""The text a SillyTavern preset places inside the chat history counts in its own ledger
category: world info at depth (``worldInfo``, with the world info blocks), the Author's Note
(``authorsNote``), the Character's Note (``charactersNote``), the persona at depth
(``persona``) and the preset's in-chat entries (``injection``); in the ledger, ``apc
explain`` and ``apc bench``, and for the category budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler._base.frame import Component, ComponentKind, ContextFrame, Message
from compiler._base.journal import Journal
from compiler._base.tokens import counter_for
from compiler.cli import main
from compiler.fit import CategoryBudgets, fit
from compiler.providers.openai_chat import DIALECT

COUNTER = counter_for("o200k_base")
PRESET = {
    "prompts": [
        {"identifier": "main", "role": "system", "content": "Write the next reply."},
        {"identifier": "worldInfoBefore", "marker": True},
        {"identifier": "chatHistory", "marker": True},
        {
            "identifier": "inj",
            "role": "user",
            "content": "Stay in character, always.",
            "injection_position": 1,
            "injection_depth": 1,
        },
    ],
    "prompt_order": [
        {
            "character_id": 100001,
            "order": [
                {"identifier": i, "enabled": True}
                for i in ("main", "worldInfoBefore", "chatHistory", "inj")
            ],
        }
    ],
}
AT_DEPTH = "Eldoria is a kingdom of old forests and older grudges."
BOOK = {
    "entries": {
        "0": {"uid": 0, "constant": True, "content": AT_DEPTH, "position": 4, "depth": 2},
        "1": {"uid": 1, "constant": True, "content": "The glade is sacred.", "position": 0},
    }
}
NOTE = {
    "note_prompt": "Keep it short.",
    "note_position": 1,
    "note_depth": 3,
    "note_role": 0,
    "note_interval": 1,
}
CHAT = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i} of the story " * 3}
    for i in range(7)
]


def write(tmp_path: Path, **extra: Any) -> tuple[Path, Path]:
    (tmp_path / "preset.json").write_text(json.dumps(PRESET))
    (tmp_path / "book.json").write_text(json.dumps(BOOK))
    run = {
        "character": {"name": "Aqua", "description": "Goddess."},
        "persona": {"name": "Kazuma"},
        "worldInfo": "book.json",
        "chatMetadata": NOTE,
        "chat": CHAT,
        **extra,
    }
    (tmp_path / "run.json").write_text(json.dumps(run))
    return tmp_path / "preset.json", tmp_path / "run.json"


def cost(message: dict[str, Any]) -> int:
    return DIALECT.message_tokens({"role": message["role"], "content": message["content"]}, COUNTER)


def placed(result: compiler.CompileResult, content: str) -> int:
    """The text of the request's message whose content is ``content`` (its category's
    share; the message's framing is the chat's, ``history``)."""
    (message,) = [m for m in result.request["messages"] if m.get("content") == content]
    return COUNTER.count(message["content"])


def framing(result: compiler.CompileResult, *contents: str) -> int:
    """What the messages of ``contents`` cost beyond their text."""
    out = 0
    for content in contents:
        (message,) = [m for m in result.request["messages"] if m.get("content") == content]
        out += cost(message) - COUNTER.count(content)
    return out


def test_placed_text_counts_in_its_own_category(tmp_path: Path) -> None:
    preset, run = write(tmp_path)
    result = compiler.compile(preset, context=run, mode="legacy")
    ledger = result.ledger
    cats = {name: c.used for name, c in ledger.categories.items()}
    wi, note = placed(result, AT_DEPTH), placed(result, "Keep it short.")
    injection = placed(result, "Stay in character, always.")
    block = ledger.entry("001:world.activated")
    assert block.kind == "WorldInfo"
    assert cats["worldInfo"] == block.tokens_used + wi  # one category: blocks and in chat
    assert cats["authorsNote"] == note and cats["injection"] == injection
    history = next(e for e in ledger.entries if e.kind == "ChatHistory")
    assert history.used_by_category == {
        "history": sum(cost(m) for m in CHAT)
        + framing(result, AT_DEPTH, "Keep it short.", "Stay in character, always."),
        "worldInfo": wi,
        "authorsNote": note,
        "injection": injection,
    }
    assert sum(history.used_by_category.values()) == history.tokens_used
    assert cats["history"] == history.tokens_used - wi - note - injection
    # the categories and the components in none sum to the components' total
    loose = sum(e.tokens_used for e in ledger.entries if e.category is None)
    assert sum(cats.values()) + loose == ledger.total_tokens - ledger.overhead_tokens


def test_a_message_joining_two_categories_is_split(tmp_path: Path) -> None:
    """The Character's Note and world info at one depth and role are one message."""
    card = {
        "name": "Aqua",
        "description": "Goddess.",
        "extensions": {"depth_prompt": {"prompt": "Aqua is vain.", "depth": 2}},
    }
    preset, run = write(tmp_path, character=card)
    result = compiler.compile(preset, context=run, mode="legacy")
    joined = placed(result, f"Aqua is vain.\n{AT_DEPTH}")
    split = next(e for e in result.ledger.entries if e.kind == "ChatHistory").used_by_category
    assert split is not None and split["charactersNote"] > 0
    block = result.ledger.entry("001:world.activated").tokens_used
    assert split["worldInfo"] == result.ledger.categories["worldInfo"].used - block
    assert split["charactersNote"] + split["worldInfo"] == joined
    assert split["worldInfo"] == COUNTER.count(AT_DEPTH)


def test_the_persona_at_depth_is_persona(tmp_path: Path) -> None:
    persona = {"name": "Kazuma", "description": "A lucky adventurer.", "position": 4, "depth": 1}
    preset, run = write(tmp_path, persona=persona)
    result = compiler.compile(preset, context=run, mode="legacy")
    assert result.ledger.categories["persona"].used == placed(result, "A lucky adventurer.")


def test_the_authors_note_beside_main_is_authors_note(tmp_path: Path) -> None:
    preset, run = write(tmp_path, chatMetadata={**NOTE, "note_position": 0})
    result = compiler.compile(preset, context=run, mode="legacy")
    (entry,) = [e for e in result.ledger.entries if e.category == "authorsNote"]
    assert entry.kind == "PresetGuide"
    assert result.ledger.categories["authorsNote"].used == entry.tokens_used > 0


def test_the_category_is_never_lowered(tmp_path: Path) -> None:
    """Only the ledger changes (the oracle tests compare the requests with SillyTavern's)."""
    preset, run = write(tmp_path)
    result = compiler.compile(preset, context=run, mode="legacy")
    assert AT_DEPTH in [m["content"] for m in result.request["messages"]]
    assert not [m for m in result.request["messages"] if "category" in m or "spans" in m]


def test_explain_shows_the_categories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preset, run = write(tmp_path)
    assert main(["explain", str(preset), "--context", str(run), "--mode", "legacy"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("categories (used/budget):"))
    for name in ("history", "worldInfo", "authorsNote", "injection"):
        assert f" {name} " in line
    split = out.split("used by category", 1)[1].splitlines()[1]
    assert "chat.history: history " in split and "worldInfo " in split


def test_bench_json_has_a_world_info_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A constant entry at depth and no world info block: the bench still shows worldInfo."""
    preset, run = write(tmp_path, chatMetadata={})
    book = {"entries": {"0": BOOK["entries"]["0"]}}  # type: ignore[index]
    (tmp_path / "book.json").write_text(json.dumps(book))
    argv = ["bench", str(preset), "--context", str(run), "--no-compare", "--format", "json"]
    assert main([*argv, "--mode", "legacy"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {c["name"]: c for c in report["runs"][0]["categories"]}
    wi = COUNTER.count(AT_DEPTH)
    assert rows["worldInfo"]["kept"]["max"] >= wi and rows["worldInfo"]["offered"]["max"] >= wi
    assert "injection" in rows and "WorldInfo" not in rows


# -- the budgets, by category --------------------------------------------------------------


def history(*placed: Message) -> Component:
    """A chat of four messages, the newest the user's (the turn the reply answers, never
    cut), with ``placed`` inserted before it."""
    chat: list[Message] = [
        {"role": "user" if i % 2 else "assistant", "content": f"Turn {i}. " + "word " * 20}
        for i in range(4)
    ]
    return Component(
        id="h",
        kind=ComponentKind.CHAT_HISTORY,
        source="chat",
        strategy="truncate",
        messages=[*chat[:3], *placed, chat[3]],
    )


LORE: Message = {"role": "system", "content": "Lore. " * 30, "category": "worldInfo"}


def fitted(comp: Component, budgets: CategoryBudgets) -> Any:
    frame = ContextFrame(components=[comp])
    return fit(frame, dialect=DIALECT, counter=COUNTER, model="gpt-4o", budget=None,
               journal=Journal(), budgets=budgets)  # fmt: skip


def test_the_history_budget_covers_the_chats_own_messages() -> None:
    comp = history(LORE)
    lore = COUNTER.count(LORE["content"] or "")
    # the chat's messages, and the placed message's framing
    chat_cost = sum(cost(m) for m in comp.messages or [] if "category" not in m)
    chat_cost += cost(LORE) - lore
    result = fitted(comp, CategoryBudgets(history=chat_cost))
    entry = result.ledger.entry("h")
    assert entry.action == "kept" and entry.messages_kept == 5  # the lore is not history's
    assert result.ledger.categories["history"].used == chat_cost
    assert result.ledger.categories["worldInfo"].used == lore
    cut = fitted(comp, CategoryBudgets(history=chat_cost - 1)).ledger.entry("h")
    assert cut.action == "truncated" and cut.messages_kept == 4  # the oldest goes


def test_the_world_info_budget_covers_world_info_in_chat() -> None:
    """Over its category's budget, a placed message is cut with its position: the walk
    stops there, oldest first."""
    comp = history(LORE)
    lore = COUNTER.count(LORE["content"] or "")
    kept = fitted(comp, CategoryBudgets(world_info=lore)).ledger
    assert kept.entry("h").messages_kept == 5
    cut = fitted(comp, CategoryBudgets(world_info=lore - 1)).ledger
    assert cut.entry("h").messages_kept == 1 and cut.categories["worldInfo"].used == 0
    assert cut.categories["history"].used == cost((comp.messages or [])[-1])
