"""What a session keeps of a run context's inputs (issue 14): a run tool's parameter schema
checked once, an unchanged inline card and inline lorebooks parsed once; every turn gives
what a one-shot compile gives, and what changed or is bad is read again, with the same
error."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.errors import APCError
from compiler.inputs.tool_schemas import SchemaMemo, plainly_valid

TEMPLATE = "<<agent.tools.available>>\n<<agent.chat.history>>"
GOOD = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
BAD = {"type": "object", "properties": {"path": {"type": 7}}}
#: valid, but not of the plain shape checked without the metaschema (a ``pattern``)
PATTERNED = {"type": "object", "properties": {"path": {"type": "string", "pattern": "^[a-z]+$"}}}


def run(schema: dict[str, Any], n: int = 2) -> dict[str, Any]:
    chat = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]
    tool = {"name": "files.read", "description": "Read a file.", "parameters": schema}
    return {"chat": chat, "tools": [tool]}


def outcome(compile_: Any, context: dict[str, Any]) -> Any:
    try:
        out = compile_(context)
    except APCError as exc:
        return (exc.code, exc.message, exc.path)
    return (out.request, [t["name"] for t in out.tools])


def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    check = jsonschema.Draft202012Validator.check_schema

    def spy(schema: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        check(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", spy)
    return calls


def test_same_tools_checked_once_per_session(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counted(monkeypatch)
    session = compiler.Session.from_string(TEMPLATE, budget=4000)
    one_shot = lambda c: compiler.compile_string(TEMPLATE, context=c, budget=4000)  # noqa: E731
    for n in (2, 3, 4):
        assert outcome(session.compile, run(PATTERNED, n)) == outcome(one_shot, run(PATTERNED, n))
    assert len(calls) == 1 + 3  # the session's first turn; every one-shot compile
    calls.clear()
    for n in (2, 3):  # the plain shape: no metaschema check at all
        assert outcome(session.compile, run(GOOD, n)) == outcome(one_shot, run(GOOD, n))
    assert calls == []


def test_an_invalid_schema_is_refused_every_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=4000)
    one_shot = lambda c: compiler.compile_string(TEMPLATE, context=c, budget=4000)  # noqa: E731
    session.compile(run(GOOD))
    expected = outcome(one_shot, run(BAD))
    assert expected[0] == "context.invalid_context"
    assert outcome(session.compile, run(BAD)) == expected
    assert outcome(session.compile, run(BAD, 3)) == expected
    # a valid schema differing only in a value's JSON type is its own key
    assert SchemaMemo.key({"minItems": 1}) != SchemaMemo.key({"minItems": True})
    assert outcome(session.compile, run({**GOOD, "minProperties": True})) == outcome(
        one_shot, run({**GOOD, "minProperties": True})
    )
    assert outcome(session.compile, run({**GOOD, "minProperties": 1}))[0] != (
        "context.invalid_context"
    )


def test_the_memo_is_bounded() -> None:
    memo = SchemaMemo()
    for i in range(SchemaMemo.LIMIT + 5):
        memo.add(f"k{i}")
    assert len(memo._valid) <= SchemaMemo.LIMIT
    assert f"k{SchemaMemo.LIMIT + 4}" in memo
    assert SchemaMemo.key({1j: 1}) is None  # not JSON: never kept


CARD_TEMPLATE = "<<agent.character>>\n<<agent.chat.history>>"


def test_a_session_reads_an_unchanged_inline_card_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session parses an inline card again only when it changed (its JSON text, key order
    and value types included); every turn gives what a one-shot compile gives."""
    import compiler.inputs.cards as cards

    calls: list[int] = []
    parse = cards.parse_card

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return parse(*args, **kwargs)

    monkeypatch.setattr(cards, "parse_card", spy)
    session = compiler.Session.from_string(CARD_TEMPLATE, budget=4000)

    def one_shot(c: dict[str, Any]) -> Any:
        return compiler.compile_string(CARD_TEMPLATE, context=c, budget=4000)

    card = {"name": "Mira", "description": "{{char}} keeps the light for {{user}}."}
    edited = {**card, "description": "{{char}} left the light."}
    turns = [card, dict(card), edited, edited, card]
    parsed = []
    for i, c in enumerate(turns):
        context = {**run(GOOD, i + 2), "character": c}
        before = len(calls)
        warm = outcome(session.compile, context)
        parsed.append(len(calls) - before)
        assert warm == outcome(one_shot, context)
    # parsed on turns 1, 3 and 5 (a new card each), not on 2 and 4
    assert parsed == [1, 0, 1, 0, 1]
    # a card with its own lorebook too: parsed once, its book scanned every turn
    book = {**card, "character_book": {"entries": [{"keys": ["light"], "content": "A lamp."}]}}
    world = "<<agent.character>>\n<<agent.world.activated>>\n<<agent.chat.history>>"
    session = compiler.Session.from_string(world, budget=4000)
    parsed = []
    for i, lit in enumerate([True, True, False, True]):
        chat = [{"role": "user", "content": "the light" if lit else "the dark"}] * (i + 1)
        before = len(calls)
        warm = session.compile({"chat": chat, "character": book})
        parsed.append(len(calls) - before)
        one = compiler.compile_string(world, context={"chat": chat, "character": book})
        assert warm.request == one.request and ("A lamp." in str(warm.request)) == lit
    assert parsed == [1, 0, 0, 0]
    book["character_book"]["entries"][0]["content"] = "A lantern."  # edited in place
    chat = [{"role": "user", "content": "the light"}]
    warm = session.compile({"chat": chat, "character": book})
    assert "A lantern." in str(warm.request) and "A lamp." not in str(warm.request)
    one = compiler.compile_string(world, context={"chat": chat, "character": book})
    assert warm.request == one.request


def test_a_changed_or_broken_card_is_read_again() -> None:
    session = compiler.Session.from_string(CARD_TEMPLATE, budget=4000)
    card = {"name": "Mira", "description": "Mira keeps the light."}
    first = session.compile({**run(GOOD), "character": card})
    assert "Mira keeps the light." in str(first.request)
    broken = {**card, "name": 7}
    with pytest.raises(APCError) as caught:
        session.compile({**run(GOOD), "character": broken})
    with pytest.raises(APCError) as again:
        session.compile({**run(GOOD), "character": broken})
    assert caught.value.code == again.value.code == "context.invalid_card"
    renamed = session.compile({**run(GOOD), "character": {**card, "name": "Ines"}})
    assert (
        renamed.request
        == compiler.compile_string(
            CARD_TEMPLATE, context={**run(GOOD), "character": {**card, "name": "Ines"}}, budget=4000
        ).request
    )


WORLD_TEMPLATE = "<<agent.world.activated>>\n<<agent.chat.history>>"


def lorebook(*contents: str) -> dict[str, Any]:
    return {
        "entries": {
            str(i): {"uid": i, "key": ["light", f"k{i}"], "content": c, "order": 100 - i}
            for i, c in enumerate(contents)
        }
    }


def test_a_session_reads_an_unchanged_inline_lorebook_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session parses an inline lorebook again only when its JSON text or its place
    changed (and sorts its entries again only then); every turn gives what a one-shot
    compile gives, the caller's edits in place included."""
    import compiler.inputs.lorebook as world_book
    import compiler.inputs.lorebooks as world_books

    calls = {"read": 0, "sorted": 0}
    read, sort = world_book.read_lorebook, world_books.sorted_entries

    def read_spy(*args: Any, **kwargs: Any) -> Any:
        calls["read"] += 1
        return read(*args, **kwargs)

    def sort_spy(*args: Any, **kwargs: Any) -> Any:
        calls["sorted"] += 1
        return sort(*args, **kwargs)

    monkeypatch.setattr(world_book, "read_lorebook", read_spy)  # read from there when needed
    monkeypatch.setattr(world_books, "sorted_entries", sort_spy)
    session = compiler.Session.from_string(WORLD_TEMPLATE, budget=4000)
    book = lorebook("A lamp in the light.", "The light keeper.")
    chat = [{"role": "user", "content": "Is the light on?"}]
    other = lorebook("A candle.")
    strategy = {"world_info_character_strategy": 0}
    turns: list[tuple[dict[str, Any], int, int]] = [  # (context, books read, sorts)
        ({"lorebooks": {"global": book}}, 1, 1),
        ({"lorebooks": {"global": book}}, 0, 0),
        ({"lorebooks": {"chat": book}}, 1, 1),  # the same text elsewhere: read there
        ({"lorebooks": {"global": [book, other]}}, 2, 1),
        ({"lorebooks": {"global": [book, other]}}, 0, 0),
        ({"lorebooks": {"global": [book, other]}, "worldInfoSettings": strategy}, 0, 1),
    ]
    for context, reads, sorts in turns:
        context = {**context, "chat": chat}
        before = dict(calls)
        warm = session.compile(context)
        assert (calls["read"] - before["read"], calls["sorted"] - before["sorted"]) == (
            reads,
            sorts,
        )
        assert warm.request == compiler.compile_string(WORLD_TEMPLATE, context=context).request
    book["entries"]["0"]["content"] = "A lamp, moved."  # the caller edits it in place
    context = {"lorebooks": {"global": book}, "chat": chat}
    before = dict(calls)
    warm = session.compile(context)
    assert calls["read"] - before["read"] == 1 and "A lamp, moved." in str(warm.request)
    assert warm.request == compiler.compile_string(WORLD_TEMPLATE, context=context).request


def test_a_broken_inline_lorebook_is_refused_every_turn() -> None:
    session = compiler.Session.from_string(WORLD_TEMPLATE, budget=4000)
    broken = {"entries": {"0": {"uid": 0, "key": "light", "content": 7}}}
    codes = []
    for _ in range(2):
        with pytest.raises(APCError) as caught:
            session.compile({"lorebooks": {"global": broken}, "chat": []})
        codes.append((caught.value.code, caught.value.path))
    assert codes[0] == codes[1] and codes[0][0] == "context.invalid_world"


SCHEMA_KEYS = [
    "type", "properties", "required", "items", "additionalProperties", "enum", "description",
    "title", "default", "minimum", "maxLength", "minItems", "pattern", "$ref", "anyOf",
]  # fmt: skip
ATOMS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2), st.text(max_size=3),
    st.sampled_from(["string", "object", "array", "integer", "number", "boolean", "null",
                     "str", "^a", "(", "#/x"]),
)  # fmt: skip
SCHEMAS = st.recursive(
    ATOMS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(SCHEMA_KEYS), inner, max_size=4),
        st.dictionaries(st.text(max_size=2), inner, max_size=3),
    ),
    max_leaves=12,
)


TYPES = ["string", "object", "array", "integer", "number", "boolean", "null"]
NEAR_PLAIN = st.recursive(
    st.booleans() | st.just({}),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), max_size=3) | ATOMS,
            "properties": st.dictionaries(st.text(max_size=2), inner, max_size=3) | ATOMS,
            "required": st.lists(st.text(max_size=2), max_size=3) | ATOMS,
            "items": inner | ATOMS,
            "additionalProperties": inner,
            "enum": st.lists(ATOMS, max_size=2) | ATOMS,
            "description": st.text(max_size=3) | ATOMS,
            "minimum": st.integers() | st.floats(allow_nan=False, allow_infinity=False) | ATOMS,
            "maxLength": st.integers(-1, 5) | ATOMS,
            "default": ATOMS,
        },
    ),
    max_leaves=10,
)


@settings(max_examples=600, deadline=None)
@given(SCHEMAS | NEAR_PLAIN)
def test_a_plainly_valid_schema_is_one_the_metaschema_accepts(schema: Any) -> None:
    """The fast check never accepts what the full check refuses."""
    if plainly_valid(schema):
        jsonschema.Draft202012Validator.check_schema(schema)


def test_the_usual_tool_schemas_are_plainly_valid() -> None:
    assert plainly_valid(GOOD)
    assert plainly_valid({"type": ["string", "null"], "enum": ["a", None], "default": "a"})
    assert plainly_valid({"type": "array", "items": {"type": "integer", "minimum": 0}})
    assert plainly_valid(True)
    for bad in (BAD, {"type": []}, {"type": ["a", "a"]}, {"required": ["a", "a"]},
                {"maxLength": True}, {"minimum": True}, {"description": None},
                {"items": [{}]}, {"enum": "x"}, PATTERNED, {"$ref": "#"}):  # fmt: skip
        assert not plainly_valid(bad), bad
