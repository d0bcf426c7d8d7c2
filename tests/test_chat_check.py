"""The plain-chat check (a few C passes over the chat) decides as the per-message loop it
replaced, for every input; a plain chat is kept as a snapshot of its texts (issue 14)."""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler.inputs.lazy_chat import ChatMemo, PlainChat, plain_chat, plain_snapshot
from compiler.inputs.read import plain_messages
from compiler.inputs.run import load_context

_KEYS = frozenset({"role", "content", "name"})
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def oracle(items: list[Any]) -> bool:
    """The check as it was: one Python loop over every message and value."""
    for item in items:
        if type(item) is not dict:
            return False
        role = item.get("role")
        if type(role) is not str or role not in _ROLES:
            return False
        for key, value in item.items():
            if key not in _KEYS:
                return False
            if type(value) is str:
                if not value.isascii() and _SURROGATE.search(value):
                    return False
            elif value is not None:
                return False
    return True


class Text(str):
    """A str subclass: equal to its text, refused as a value, taken as a key."""


class Mapping(dict[Any, Any]):
    """A dict subclass: refused as a message."""


ROLES = st.sampled_from(["user", "assistant", "system", "developer", "tool"])
TEXTS = st.one_of(
    st.text(max_size=12),
    st.text(st.characters(codec="utf-8"), max_size=8).map(lambda s: s + "é—😀"),
    st.sampled_from(["\ud800", "a\udfffb", "é\ud83d", "\ud83d\ude00", "", "ok"]),
)
ODD_VALUES = st.one_of(
    st.none(),
    st.integers(),
    st.booleans(),
    st.just(["user"]),
    st.builds(Text, st.sampled_from(["user", "hi", ""])),
    st.binary(max_size=3),
)
KEYS = st.one_of(
    st.sampled_from(["role", "content", "name", "Role", "extra", "toolCalls", ""]),
    st.builds(Text, st.sampled_from(["role", "content", "name", "other"])),
    st.integers(-2, 2),
    st.none(),
)


@st.composite
def messages(draw: st.DrawFn, texts: st.SearchStrategy[str] = TEXTS) -> dict[str, Any]:
    """A message: a role, and content and name each text (maybe with a lone surrogate),
    null or absent."""
    msg: dict[str, Any] = {"role": draw(ROLES)}
    for key in ("content", "name"):
        if draw(st.booleans()) or (key == "content" and draw(st.booleans())):
            msg[key] = draw(st.one_of(texts, st.none()))
    return msg


@st.composite
def odd_items(draw: st.DrawFn) -> Any:
    """Something wrong, or nearly so: a bad role, key or value, a missing role, a non-dict."""
    base = draw(messages())
    kind = draw(st.integers(0, 6))
    if kind == 0:
        base["role"] = draw(st.one_of(ODD_VALUES, st.sampled_from(["User", "bot", ""])))
    elif kind == 1:
        base[draw(KEYS)] = draw(st.one_of(TEXTS, ODD_VALUES))
    elif kind == 2:
        base[draw(st.sampled_from(["content", "name"]))] = draw(ODD_VALUES)
    elif kind == 3:
        del base["role"]
    elif kind == 4:
        return Mapping(base)
    elif kind == 5:
        return draw(st.one_of(ODD_VALUES, st.just([("role", "user")]), st.just(("role",))))
    else:
        base[draw(st.sampled_from(["content", "name"]))] = draw(TEXTS)
    return base


CHATS = st.one_of(
    st.lists(messages(), max_size=12),
    st.lists(st.one_of(messages(), odd_items()), max_size=12),
    st.tuples(st.lists(messages(), max_size=30), odd_items(), st.integers(0, 30)).map(
        lambda t: [*t[0][: t[2]], t[1], *t[0][t[2] :]]
    ),
)


@settings(max_examples=600, deadline=None)
@example([{"role": "user"}, {"role": "user", Text("name"): "b"}])  # taken: equal to "name"
@example([{"role": "user", "name": "a"}, {"role": Text("user")}])  # refused: a str subclass
@given(CHATS)
def test_the_check_decides_as_the_loop_it_replaced(items: list[Any]) -> None:
    expected = oracle(items)
    assert (plain_chat(items, copy=False) is not None) == expected
    copies = plain_chat(items)
    snapshot = plain_snapshot(items)
    assert (copies is not None) == (snapshot is not None) == expected
    if copies is not None and snapshot is not None:
        assert copies == items and all(a is not b for a, b in zip(copies, items, strict=True))
        assert list(snapshot) == items  # the same keys and values, message by message
        assert [set(m) for m in snapshot] == [set(map(str, m)) for m in items]
        assert snapshot.roles == [m["role"] for m in items]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(messages(st.text(st.characters(codec="utf-8"))), min_size=1, max_size=20), st.data()
)
def test_a_snapshot_slices_and_indexes_as_the_list(items: list[Any], data: st.DataObject) -> None:
    snapshot = plain_snapshot(items)
    assert isinstance(snapshot, PlainChat) and len(snapshot) == len(items)
    i = data.draw(st.integers(-len(items), len(items) - 1))
    start, stop = data.draw(st.integers(0, len(items))), data.draw(st.integers(0, len(items)))
    assert snapshot[i] == items[i]
    assert list(snapshot[start:stop]) == items[start:stop]
    assert snapshot[start:stop].roles == [m["role"] for m in items[start:stop]]


def test_a_long_chat_takes_the_fast_pass_and_the_careful_one_alike() -> None:
    chat = [{"role": "user", "content": f"m{i} é—😀"} for i in range(3000)]
    assert plain_chat(chat, copy=False) is chat
    chat[1234] = {"role": "user", "content": "cut \ud83d"}  # a lone surrogate mid-chat
    assert plain_chat(chat, copy=False) is None
    chat[1234] = {"role": "user", "content": "fine", "name": "Ann\udc00"}
    assert plain_chat(chat, copy=False) is None
    chat[1234] = {"role": "user", "name": "Ann"}  # no content: the careful pass
    snapshot = plain_snapshot(chat)
    assert snapshot is not None and snapshot[1234] == {"role": "user", "name": "Ann"}
    assert snapshot[0] == {"role": "user", "content": "m0 é—😀"}


def test_the_snapshot_is_the_callers_chat_as_it_was() -> None:
    chat = [{"role": "user", "content": "a"}, {"role": "assistant", "content": None}]
    ctx = load_context({"chat": chat})
    chat[1]["content"] = 3  # changed after loading: the context keeps what was checked
    chat[0]["role"] = "robot"
    assert [(m.role, m.content) for m in ctx.messages] == [("user", "a"), ("assistant", None)]
    assert ctx.user_messages == 1
    # a message's absent field stays unset, as validating the dict would leave it
    ctx = load_context({"chat": [{"role": "user"}]})
    assert ctx.messages[0].model_fields_set == {"role"}


def test_the_memo_sees_a_message_changed_in_place() -> None:
    memo = ChatMemo()
    chat = [{"role": "user", "content": f"m{i}"} for i in range(50)]
    assert memo.plain(chat) == chat
    chat[10]["content"] = 3  # no longer plain: the next turn is refused, not reused
    assert memo.plain([*chat, {"role": "user", "content": "next"}]) is None
    chat[10]["content"] = "edited"
    again = memo.plain(chat)
    assert again is not None and again[10] == {"role": "user", "content": "edited"}
    chat[10]["name"] = "Ann"  # a key added in place
    assert (memo.plain(chat) or [])[10] == {"role": "user", "content": "edited", "name": "Ann"}


def flat_oracle(items: list[Any]) -> bool:
    """:func:`plain_messages`' check as it was: a flat dict of text or null values under
    ASCII text keys, no lone surrogate."""
    for item in items:
        if type(item) is not dict:
            return False
        for key, value in item.items():
            if type(key) is not str or not key.isascii():
                return False
            if type(value) is str:
                if not value.isascii() and _SURROGATE.search(value):
                    return False
            elif value is not None:
                return False
    return True


FLAT_KEYS = st.one_of(KEYS, st.sampled_from(["sendDate", "clé", "toolCallId"]))


@settings(max_examples=400, deadline=None)
@example([{"name": "a"}, {Text("name"): "b"}])  # a str subclass key after an equal str key
@given(
    st.lists(
        st.one_of(
            messages(),
            odd_items(),
            st.dictionaries(FLAT_KEYS, st.one_of(TEXTS, ODD_VALUES), max_size=4),
        ),
        max_size=12,
    )
)
def test_flat_messages_are_recognised_as_before(items: list[Any]) -> None:
    copies = plain_messages(items)
    assert (copies is not None) == flat_oracle(items)
    if copies is not None:
        assert copies == items and all(a is not b for a, b in zip(copies, items, strict=True))


def test_a_loaded_context_copies_and_pickles_as_before() -> None:
    chat = [{"role": "user", "content": "a"}, {"role": "assistant", "name": "Bo"}]
    ctx = load_context({"chat": chat})
    want = [("user", "a", None), ("assistant", None, "Bo")]
    for other in (copy.deepcopy(ctx), ctx.model_copy(deep=True), pickle.loads(pickle.dumps(ctx))):
        assert [(m.role, m.content, m.name) for m in other.messages] == want
        assert [m.model_fields_set for m in other.messages] == [
            {"role", "content"},
            {"role", "name"},
        ]
