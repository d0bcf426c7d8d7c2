"""The history walk prices plain messages a block at a time: it keeps exactly the units the
one-at-a-time walk keeps, for every dialect, chat shape and cap (tool units included)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler._base.tokens import TokenCounter, get_encoding
from compiler.errors import APCError
from compiler.fit.history import _Walk
from compiler.fit.prices import PriceMemo
from compiler.inputs.lazy_chat import LazyChat, made_as_read
from compiler.providers import get_dialect

WORDS = st.sampled_from(["the", "ferry", "river.", "Mira!", "灯", "\n", "  ", "42"])
TEXT = st.lists(WORDS, max_size=30).map("".join)


@st.composite
def units(draw: Any) -> list[dict[str, Any]]:
    """One unit: a plain message (maybe named, maybe empty), or a tool call and its results."""
    kind = draw(st.sampled_from(["plain", "plain", "plain", "named", "null", "tools", "stray"]))
    role = draw(st.sampled_from(["user", "assistant", "system"]))
    if kind == "stray":  # tool calls on a message that may not carry them: pricing it raises
        return [{"role": "user", "content": draw(TEXT), "toolCalls": [STRAY_CALL]}]
    if kind == "plain":
        return [{"role": role, "content": draw(TEXT)}]
    if kind == "named":
        return [{"role": role, "content": draw(TEXT), "name": "Sam"}]
    if kind == "null":
        return [{"role": role, "content": None}]
    calls = draw(st.integers(1, 2))
    call = {
        "role": "assistant",
        "content": draw(st.one_of(st.none(), TEXT)),
        "toolCalls": [{"id": f"c{i}", "name": "fs.read", "arguments": {}} for i in range(calls)],
    }
    return [call] + [
        {"role": "tool", "content": draw(TEXT), "toolCallId": f"c{i}"} for i in range(calls)
    ]


STRAY_CALL = {"id": "c9", "name": "fs.read", "arguments": {}}
CHATS = st.lists(units(), max_size=40).map(lambda us: [m for u in us for m in u])
DIALECTS = st.sampled_from(["openai", "anthropic", "gemini", "openai-responses"])
CAPS = st.lists(st.integers(0, 900), min_size=1, max_size=3)  # a fit's caps, call after call


def walked(messages: list[dict[str, Any]], dialect: str, caps: list[int], batched: bool) -> Any:
    encoding, scale = get_encoding("o200k_base"), get_dialect(dialect).estimate_scale

    def count(text: str) -> int:  # one by one, what the dialect's counter counts
        n = len(encoding.encode_ordinary(text))
        return n if scale is None else scale.estimate(text, n)

    counter = TokenCounter("o200k_base", count_fn=None if batched else count)
    return steps(_Walk(messages, get_dialect(dialect), counter), caps)


def steps(walk: _Walk, caps: list[int]) -> list[Any]:
    """What ``walk`` keeps after each of a fit's calls: extend, trim for the summary, extend."""
    seen: list[Any] = []
    for i, cap in enumerate(caps):
        try:
            if i % 2:
                walk.trim(cap)
            else:
                walk.extend(cap)
        except APCError as exc:  # raised only by a message the walk reaches, as before
            return [*seen, str(exc)]
        seen.append((list(walk.units), walk.used, walk.next))
    return seen


@settings(max_examples=150, deadline=None)
@given(CHATS, DIALECTS, CAPS)
def test_the_block_walk_keeps_what_the_unit_walk_keeps(
    messages: list[dict[str, Any]], dialect: str, caps: list[int]
) -> None:
    assert walked(messages, dialect, caps, True) == walked(messages, dialect, caps, False)


def test_an_uncapped_walk_keeps_everything_in_one_block() -> None:
    messages = [{"role": "user", "content": f"message {i}"} for i in range(50)]
    assert walked(messages, "openai", [10**9], True)[-1][2] == 0
    walk = _Walk(messages, get_dialect("openai"), TokenCounter("o200k_base"))
    walk.extend(None)
    assert walk.next == 0 and len(walk.units) == 50


def test_a_message_the_walk_does_not_reach_is_not_priced() -> None:
    """Pricing a message can fail (tool calls on a user message): only a message the
    one-at-a-time walk reaches may fail the walk, never one a block priced beyond the cut."""
    stray = {"role": "user", "content": "hi", "toolCalls": [STRAY_CALL]}
    messages = [{"role": "user", "content": f"message {i}"} for i in range(20)]
    messages[15] = stray
    walk = _Walk(messages, get_dialect("openai"), TokenCounter("o200k_base"))
    walk.extend(20)  # two messages fit: the walk stops at the third, never reads the stray
    assert (walk.next, walk.used) == (18, 14)


def walked_in_a_session(
    messages: list[dict[str, Any]], dialect: str, caps: list[int], appended: int
) -> Any:
    """The walk of a session's second turn: the first turn walked the chat without its
    newest ``appended`` messages (the same message objects), and priced what it read."""
    memo, counter = PriceMemo(), TokenCounter("o200k_base")
    turns = (messages[: max(0, len(messages) - appended)], messages)
    seen: list[Any] = []
    for chat in turns:
        book = memo.book("prices")
        seen = steps(_Walk(LazyChat(chat, made_as_read), get_dialect(dialect), counter, book), caps)
        book.close()
    return seen


@settings(max_examples=150, deadline=None)
@given(CHATS, DIALECTS, CAPS, st.integers(0, 5))
def test_a_session_walk_from_its_book_keeps_what_the_unit_walk_keeps(
    messages: list[dict[str, Any]], dialect: str, caps: list[int], appended: int
) -> None:
    """Last turn's prices, read a block at a time, give the units the walk that prices
    every message gives (new messages, tool units and failing ones among them)."""
    want = walked(messages, dialect, caps, False)
    assert walked_in_a_session(messages, dialect, caps, appended) == want


def test_a_book_recalls_the_newest_run_it_priced_and_never_an_id_another_object_held() -> None:
    """Last turn's entries of the newest messages in a row; an entry whose message is not
    the one now at that id (an id Python reused) is not recalled, nor anything older."""
    a, b, c, other = ({"m": i} for i in range(4))
    memo = PriceMemo()

    def recall(last: dict[int, Any], sources: list[Any]) -> Any:
        memo.keep("k", last)
        return memo.book("k").recall(sources)

    def entry(m: Any, price: int) -> Any:
        return (m, "user", price)

    assert recall({id(b): entry(b, 2), id(c): entry(c, 3)}, [a, b, c]) == (
        [entry(b, 2), entry(c, 3)],
        0,
    )
    assert recall({id(a): entry(a, 1), id(b): entry(b, 2)}, [a, b, c]) == ([], 1)
    assert recall({id(a): entry(a, 1)}, [a, b, c]) == ([], 2)
    assert recall({}, [a, b, c]) == ([], 3)
    assert recall({id(c): entry(other, 3)}, [a, b, c]) == ([], 3)  # c's id, another message
    reused = {id(a): entry(a, 1), id(b): entry(other, 2), id(c): entry(c, 3)}
    assert recall(reused, [a, b, c]) == ([entry(c, 3)], 0)
