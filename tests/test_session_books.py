"""A session's turns with lorebooks (inline, a card's own, in every place) give what one-shot
compiles give, whatever the caller does between turns: edits in place, swapped or reused
objects, key order and value types, places, settings, timed effects, presets."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.errors import APCError

TEMPLATE = (
    "<<agent.character>>\n<<agent.world.activated position=before>>\n"
    "<<agent.chat.history>>\n<<agent.world.activated position=after>>"
)
PRESET = json.dumps(
    {
        "prompts": [
            {"identifier": "main", "role": "system", "content": "You are {{char}}."},
            {"identifier": "worldInfoBefore", "marker": True},
            {"identifier": "charDescription", "marker": True},
            {"identifier": "worldInfoAfter", "marker": True},
            {"identifier": "chatHistory", "marker": True},
        ]
    }
)
WORDS = ["light", "lamp", "river", "ferry", "grey", "keeper", "dark", "Mira", "storm"]


def world_book(tag: str, n: int) -> dict[str, Any]:
    return {
        "entries": {
            str(i): {
                "uid": i,
                "key": [WORDS[(i * 2 + ord(tag[0])) % len(WORDS)]],
                "constant": i == 3,
                "content": f"{tag} entry {i} mentions {WORDS[(i + 2) % len(WORDS)]}",
                "order": 100 - i,
                "position": i % 2,
            }
            for i in range(n)
        }
    }


def card_book(tag: str, n: int) -> dict[str, Any]:
    return {
        "name": "Mira",
        "description": "Keeper of the light.",
        "character_book": {
            "entries": [
                {
                    "keys": [WORDS[(i * 5 + 1) % len(WORDS)]],
                    "content": f"{tag} card entry {i} about {WORDS[(i + 4) % len(WORDS)]}",
                    "insertion_order": 50 + i,
                    "enabled": True,
                }
                for i in range(n)
            ]
        },
    }


def outcome(run: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        result = run(*args, **kwargs)
    except APCError as exc:
        return ("error", exc.code, exc.message, exc.path)
    warnings = [(w.code, w.message, w.path, w.file) for w in result.warnings]
    return (result.request, result.ledger, warnings, result.world_info_state)


OPS = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 99)),  # an entry's content in place
    st.tuples(st.just("key"), st.integers(0, 99)),  # an entry's key in place
    st.tuples(st.just("type"), st.integers(0, 99)),  # order 7 / 7.0 / sticky true
    st.tuples(st.just("copy"), st.integers(0, 99)),  # a deep copy of a book
    st.tuples(st.just("reorder"), st.integers(0, 99)),  # a book's keys in another order
    st.tuples(st.just("place"), st.integers(0, 999)),  # the books' places
    st.tuples(st.just("settings"), st.integers(0, 999)),
    st.tuples(st.just("chat"), st.integers(0, 99)),
    st.tuples(st.just("break"), st.integers(0, 99)),
    st.tuples(st.just("fix"), st.integers(0, 99)),
    st.tuples(st.just("cardbook"), st.integers(0, 99)),
    st.tuples(st.just("same"), st.just(0)),
)
KINDS = ["global", "chat", "character", "persona", None]


class World:
    def __init__(self) -> None:
        self.books = [world_book("A", 4), world_book("B", 3), world_book("A", 4)]
        self.card = card_book("C", 3)
        self.places: list[str | None] = ["global", "chat", None]
        self.use_card_book = True
        self.settings: dict[str, Any] = {}
        self.chat = [{"role": "user", "content": "the light on the river, a lamp in the storm"}]
        self.state: Any = None

    def apply(self, op: str, arg: int) -> None:
        book = self.books[arg % len(self.books)]
        entries = book.get("entries")
        entry = next(iter(entries.values())) if isinstance(entries, dict) and entries else None
        if op == "edit" and entry is not None:
            entry["content"] = f"edited {arg}"
        elif op == "key" and entry is not None:
            entry["key"] = [WORDS[arg % len(WORDS)]]
        elif op == "type" and entry is not None:
            field, value = [
                ("order", 7), ("order", 7.0), ("sticky", 2), ("cooldown", 1), ("sticky", True)
            ][arg % 5]  # fmt: skip
            entry[field] = value
        elif op == "copy":
            self.books[arg % len(self.books)] = copy.deepcopy(book)
        elif op == "reorder":
            self.books[arg % len(self.books)] = dict(reversed(list(book.items())))
            if isinstance(entries, dict):
                self.books[arg % len(self.books)]["entries"] = dict(reversed(list(entries.items())))
        elif op == "place":
            self.places = [KINDS[(arg // 5**i) % 5] for i in range(3)]
            self.use_card_book = arg % 2 == 0
        elif op == "settings":
            self.settings = {
                "world_info_character_strategy": arg % 3,
                "world_info_depth": 1 + arg % 4,
                "world_info_recursive": arg % 2 == 0,
                "world_info_budget": [25, 1, 100][arg % 3],
            }
        elif op == "chat":
            self.chat.append(
                {
                    "role": "user" if arg % 2 else "assistant",
                    "content": " ".join(WORDS[(arg + k) % len(WORDS)] for k in range(3)),
                }
            )
        elif op == "break" and entry is not None:
            entry["content"] = 7
        elif op == "fix" and entry is not None:
            entry["content"] = "fixed"
        elif op == "cardbook":
            entries_ = self.card["character_book"]["entries"]
            if arg % 3 == 0:
                entries_[0]["content"] = f"card edited {arg}"
            elif arg % 3 == 1:
                entries_.append(dict(entries_[0], content="added"))
            else:
                self.card = copy.deepcopy(self.card)

    def context(self) -> dict[str, Any]:
        lorebooks: dict[str, list[Any]] = {}
        for book, place in zip(self.books, self.places, strict=True):
            if place is not None:
                lorebooks.setdefault(place, []).append(book)
        out: dict[str, Any] = {
            "chat": self.chat,
            "character": self.card,
            "lorebooks": lorebooks,
            "useCharacterBook": self.use_card_book,
            "worldInfoSettings": self.settings,
        }
        if self.state is not None:
            out["timedWorldInfo"] = self.state
        return out


@settings(max_examples=40, deadline=None)
@given(st.lists(OPS, min_size=1, max_size=8), st.booleans())
def test_session_turns_with_lorebooks_are_one_shot_compiles(
    ops: list[tuple[str, int]], preset: bool
) -> None:
    kind = "preset" if preset else "template"
    text = PRESET if preset else TEMPLATE
    session = compiler.Session.from_string(text, kind=kind, budget=3000)
    world = World()
    for op, arg in [("same", 0), *ops]:
        world.apply(op, arg)
        ctx = world.context()
        cold_ctx = copy.deepcopy(ctx)
        warm = outcome(session.compile, ctx)
        cold = outcome(
            lambda c: compiler.compile_string(text, kind=kind, context=c, budget=3000), cold_ctx
        )
        assert warm == cold, (op, arg)
        if warm[0] != "error":
            world.state = copy.deepcopy(warm[3])
