"""A caller's plain chat is validated lazily: only what a compile reads (issue 14)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given as hypothesis_given
from hypothesis import strategies as st

import compiler
from compiler.errors import ContextError
from compiler.inputs import chat_frame
from compiler.inputs.lazy_chat import LazyChat, PlainChat, plain_chat, plain_snapshot
from compiler.inputs.read import INLINE, validate
from compiler.inputs.run import ChatMessageIn, RunContext, load_context

TEXT = "the ferry creaked across the grey river while Mira counted lanterns"
TEMPLATE = "You are terse.\n<<agent.chat.history>>"
WHOLE: dict[str, Any] = {
    "code": "context.invalid_context",
    "file": INLINE,
    "prefix": "",
    "what": "run context",
}
TRUNCATE = 'You are terse.\n<<agent.chat.history strategy="truncate">>'


def chat(n: int) -> list[dict[str, Any]]:
    words = TEXT.split()
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"m{i} " + " ".join(words[: 4 + i % 7]),
        }
        for i in range(n)
    ]


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The contents of the chat messages validated one by one (the lazy path's only way)."""
    seen: list[str] = []
    real = ChatMessageIn.model_validate

    def spy(data: Any, *args: Any, **kwargs: Any) -> ChatMessageIn:
        seen.append(data["content"])
        return real(data, *args, **kwargs)

    monkeypatch.setattr(ChatMessageIn, "model_validate", spy)
    return seen


@pytest.fixture
def framed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The contents of the chat messages copied into the frame's history: made from checked
    messages, or read from a snapshot's columns (one at a time, or together)."""
    seen: list[str] = []
    real_raw = chat_frame.raw_message

    def from_raw(raw: dict[str, Any]) -> Any:
        seen.append(raw["content"])
        return real_raw(raw)

    monkeypatch.setattr(chat_frame, "raw_message", from_raw)
    real_item = PlainChat.__getitem__

    def item(self: PlainChat, index: Any) -> Any:
        got = real_item(self, index)
        if self._framed and not isinstance(index, slice):
            seen.append(got["content"])
        return got

    def every(self: PlainChat) -> Any:  # each read through item(), so seen once
        return (item(self, i) for i in range(len(self)))

    monkeypatch.setattr(PlainChat, "__getitem__", item)
    monkeypatch.setattr(PlainChat, "__iter__", every)
    return seen


def test_dropped_messages_are_never_validated_nor_copied(
    validated: list[str], framed: list[str]
) -> None:
    messages = chat(3000)
    result = compiler.compile_string(TRUNCATE, context={"chat": messages}, budget=1500)
    kept = [m["content"] for m in result.request["messages"][1:]]
    assert 0 < len(kept) < 3000
    assert kept == [m["content"] for m in messages[-len(kept) :]]
    # the kept messages and the one that did not fit: each copied once, nothing validated
    assert sorted(framed) == sorted(set(framed))
    assert set(framed) == set(kept) | {messages[-len(kept) - 1]["content"]}
    assert validated == []  # nothing else in this template reads a message


@pytest.mark.parametrize("n", [5000, 20000])
def test_a_summary_reads_a_bounded_sample_of_the_cut(framed: list[str], n: int) -> None:
    result = compiler.compile_string(TEMPLATE, context={"chat": chat(n)}, budget=2000)
    history = result.ledger.entries[-1]
    assert history.messages_kept is not None and history.messages_kept < 500
    assert history.action == "summarized"
    # the kept messages and the extractive summary's picks (48 of the cut, for each of the
    # few cut points the fit tries): never the chat's length
    assert len(framed) <= history.messages_kept + 4 * 48


def test_lazy_and_eager_compiles_are_byte_identical() -> None:
    messages = chat(800)
    # an extra (null) key is not plain: the same chat is validated whole, as before
    eager = [{**messages[0], "toolCallId": None}, *messages[1:]]
    last = "Last: {{lastMessage}} / {{lastUserMessage}}\n" + TEMPLATE
    for template in (TEMPLATE, TRUNCATE, last):
        for budget in (600, 5000, 100_000):
            a = compiler.compile_string(template, context={"chat": messages}, budget=budget)
            b = compiler.compile_string(template, context={"chat": eager}, budget=budget)
            assert json.dumps(a.request) == json.dumps(b.request)
            assert a.ledger.model_dump() == b.ledger.model_dump()
            assert a.frame.model_dump() == b.frame.model_dump()


def test_the_context_keeps_its_own_copy() -> None:
    messages = chat(3)
    ctx = load_context({"chat": messages})
    assert isinstance(ctx.chat, LazyChat)
    messages[0]["content"] = "changed"
    messages.append({"role": "user", "content": "late"})
    assert [m.content for m in ctx.messages] == [m["content"] for m in chat(3)]
    assert ctx.user_messages == 2


@pytest.mark.parametrize(
    "bad",
    [
        [{"role": "narrator", "content": "x"}],
        [{"role": "user", "content": 3}],
        [{"role": "user", "contnet": "x"}],
        [{"content": "x"}],
        [{"role": "user", "content": "x"}, "text"],
        [{"role": "user", "content": "x", "toolCalls": "no"}],
    ],
)
def test_a_bad_message_gives_the_error_it_always_gave(bad: list[Any]) -> None:
    with pytest.raises(ContextError) as lazy:
        load_context({"chat": bad, "seed": 1})
    with pytest.raises(ContextError) as whole:  # the whole context through pydantic, as before
        validate(RunContext, {"chat": bad, "seed": 1}, **WHOLE)
    assert (lazy.value.code, lazy.value.message, lazy.value.path, lazy.value.hint) == (
        whole.value.code,
        whole.value.message,
        whole.value.path,
        whole.value.hint,
    )
    assert lazy.value.path is not None and lazy.value.path.startswith("chat")


@pytest.mark.parametrize("extra", [{"sede": 3}, {"greeting": -1}, {"tools": [{"x": 1}]}])
def test_a_bad_field_beside_a_plain_chat_reports_as_before(extra: dict[str, Any]) -> None:
    data = {"chat": chat(5), **extra}
    with pytest.raises(ContextError) as lazy:
        load_context(data)
    with pytest.raises(ContextError) as whole:
        validate(RunContext, data, **WHOLE)
    assert (lazy.value.code, lazy.value.message, lazy.value.path, lazy.value.hint) == (
        whole.value.code,
        whole.value.message,
        whole.value.path,
        whole.value.hint,
    )


def test_plain_chat_refuses_what_validation_might_not_take() -> None:
    assert plain_chat([{"role": "user", "content": "a", "name": None}]) is not None
    assert plain_chat([{"role": "tool", "content": None}]) is not None
    for item in (
        {"role": "user", "content": "\ud800"},
        {"role": "user", "content": "a", "sendDate": "2024-01-01"},
        {"role": "User", "content": "a"},
        {"role": ["user"], "content": "a"},
        {"role": "user", "content": ["a"]},
    ):
        assert plain_chat([item]) is None, item


def test_lazy_chat_behaves_as_a_list() -> None:
    made: list[int] = []

    def make(x: int) -> int:
        made.append(x)
        return x * 10

    lazy = LazyChat(list(range(10)), make)
    assert len(lazy) == 10 and lazy[-1] == 90 and lazy[0] == 0
    tail = lazy[7:]
    assert isinstance(tail, LazyChat) and list(tail) == [70, 80, 90]
    assert list(reversed(lazy[2:5])) == [40, 30, 20]
    assert lazy[3:1] == [] and lazy[::3] == [0, 30, 60, 90]
    assert lazy == [x * 10 for x in range(10)]
    with pytest.raises(IndexError):
        lazy[10]
    assert sorted(set(made)) == sorted(made)  # each made once, shared by the slices


def test_world_info_scans_only_the_newest_messages(validated: list[str]) -> None:
    book = {
        "entries": {
            "0": {"uid": 0, "key": ["m2999"], "content": "The river is cold."},
            "1": {"uid": 1, "key": ["m5 "], "content": "Too old to be scanned."},
        }
    }
    template = '<<agent.world.activated>>\n<<agent.chat.history strategy="truncate">>'
    messages = chat(3000)
    eager = [{**messages[0], "toolCallId": None}, *messages[1:]]
    found = []
    for given in (eager, messages):
        validated.clear()
        context = {"chat": given, "lorebooks": {"global": book}}
        found.append(compiler.compile_string(template, context=context, budget=1000))
    assert found[0].request["messages"][0]["content"] == "The river is cold."
    assert json.dumps(found[0].request) == json.dumps(found[1].request)
    assert "m5 the ferry creaked across the grey river" not in validated
    assert len(validated) <= 1000 + 1  # the scan's deepest window and the macro seed's first


def test_a_lazy_context_dumps_as_before() -> None:
    messages = chat(4)
    eager = load_context({"chat": [{**messages[0], "toolCallId": None}, *messages[1:]]})
    lazy = load_context({"chat": messages})
    assert isinstance(lazy.chat, LazyChat) and not isinstance(eager.chat, LazyChat)
    assert lazy.model_dump(by_alias=True) == eager.model_dump(by_alias=True)
    assert lazy.model_dump_json() == eager.model_dump_json()
    assert lazy == eager


_TEXT = st.one_of(st.none(), st.text(max_size=5))
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool"])},
    optional={"content": _TEXT, "name": _TEXT},
)


@hypothesis_given(st.lists(_MESSAGE, max_size=8))
def test_a_snapshot_makes_the_frame_messages_raw_message_makes(messages: list[Any]) -> None:
    """A one-shot compile makes the frame's messages straight from the snapshot's columns:
    each is what :func:`raw_message` makes of the caller's message."""
    snapshot = plain_snapshot(messages)
    if snapshot is None:  # a lone surrogate in generated text: not plain
        return
    framed = chat_frame.frame_chat(LazyChat(snapshot, ChatMessageIn.model_validate))
    assert list(framed) == [chat_frame.raw_message(m) for m in messages]
    assert list(framed[1:]) == [chat_frame.raw_message(m) for m in messages[1:]]


@hypothesis_given(
    st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant"])},
            optional={
                "content": st.one_of(st.none(), st.text(max_size=5)),
                "name": st.text(max_size=3),
            },
        ),
        max_size=8,
    ),
    st.integers(0, 8),
)
def test_a_snapshot_read_together_is_read_one_by_one(
    messages: list[dict[str, Any]], cut: int
) -> None:
    """Iterating a snapshot (its frame messages made together when they can be) gives what
    indexing it gives, message by message; and so does a lazy chat over it."""
    snapshot = plain_snapshot(messages)
    assert snapshot is not None
    for view in (snapshot, snapshot.framed()):
        assert list(view) == [view[i] for i in range(len(view))]
        lazy = chat_frame.frame_chat(LazyChat(view, lambda m: m))
        assert list(lazy[cut:]) == [lazy[i] for i in range(min(cut, len(lazy)), len(lazy))]
