"""compiler.ChatLog: a chat kept across a session's turns, so a turn checks only what is new.

It must behave as a list of the same messages would (the same requests, ledgers, warnings
and errors, whatever the runtime does to it between turns), hold its own copies, and let a
warm turn check only the messages appended or changed since the last one."""

from __future__ import annotations

import copy
import json
import pickle
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.errors import ContextError
from compiler.inputs import lazy_chat
from tests.test_session_turns import CARD, TEMPLATE, fickle_key, message, outcome

# a turn: what the runtime does to its log before compiling it again
OPS = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 3)),
    st.tuples(st.just("set"), st.integers(0, 10_000)),  # an earlier message replaced
    st.tuples(st.just("swipe"), st.just(0)),  # the newest message replaced
    st.tuples(st.just("pop"), st.integers(1, 2)),
    st.tuples(st.just("delete"), st.integers(0, 10_000)),
    st.tuples(st.just("insert"), st.integers(0, 10_000)),
    st.tuples(st.just("odd"), st.integers(0, 10_000)),  # not plain: a tool call, a bad role
    st.tuples(st.just("clear"), st.just(0)),
    st.tuples(st.just("same"), st.just(0)),
)


def apply(log: compiler.ChatLog, op: str, arg: int, counter: list[int]) -> None:
    counter[0] += 1
    fresh = message(counter[0], 4 + counter[0] % 30)
    if op == "append":
        log.extend(message(counter[0] + k) for k in range(arg))
        counter[0] += arg
    elif op == "set" and log:
        log[arg % len(log)] = fresh
    elif op == "swipe" and log:
        log[-1] = {**fresh, "role": "assistant"}
    elif op == "pop":
        for _ in range(min(arg, len(log))):
            log.pop()
    elif op == "delete" and log:
        del log[arg % len(log)]
    elif op == "insert":
        log.insert(arg % (len(log) + 1), fresh)
    elif op == "odd" and log:
        odd: list[dict[str, Any]] = [
            {"role": "assistant", "content": None, "toolCalls": [{"id": "c1", "name": "x"}]},
            {"role": "narrator", "content": "not a role"},
            {"role": "user", "content": "hi", "sendDate": "2024-01-01"},
        ]
        log[arg % len(log)] = odd[arg % 3]
    elif op == "clear":
        log.clear()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.lists(OPS, min_size=1, max_size=8), st.sampled_from([400, 900]))
def test_turns_over_a_log_are_one_shot_compiles_of_a_list(
    start: int, ops: list[tuple[str, int]], budget: int
) -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=budget)
    log = compiler.ChatLog(message(i) for i in range(start))
    counter = [start]
    for op, arg in [("same", 0), *ops]:
        apply(log, op, arg, counter)
        got = outcome(session.compile, {"chat": log, "character": CARD})
        want = outcome(
            compiler.compile_string,
            TEMPLATE,
            context={"chat": list(log), "character": CARD},
            budget=budget,
        )
        assert got == want, (op, arg)


def test_a_warm_turn_checks_only_what_was_appended_or_changed(monkeypatch: Any) -> None:
    """No message of the last turn is read again: the log says what changed."""
    checked: list[int] = []
    real = lazy_chat.plain_chat

    def spy(items: list[Any], *, copy: bool = True) -> Any:
        checked.append(len(items))
        return real(items, copy=copy)

    session = compiler.Session.from_string(TEMPLATE, budget=600)
    log = compiler.ChatLog(message(i) for i in range(200))
    session.compile({"chat": log, "character": CARD})
    monkeypatch.setattr(lazy_chat, "plain_chat", spy)
    monkeypatch.setattr(lazy_chat.ChatMemo, "plain", None)  # the list path is never taken
    log.append(message(200))
    session.compile({"chat": log, "character": CARD})
    assert checked == [1]
    log[150] = message(999)  # an edit: checked from there on
    session.compile({"chat": log, "character": CARD})
    assert checked == [1, 51]
    session.compile({"chat": log, "character": CARD})  # nothing changed: nothing checked
    assert checked == [1, 51]


def test_a_log_holds_its_own_copies() -> None:
    """Changing a message after appending it, or a message read from the log, changes
    nothing in the log (so a session may trust what it checked)."""
    source = {"role": "user", "content": "hello"}
    calls = {"role": "assistant", "content": None, "toolCalls": [{"id": "a", "name": "n"}]}
    log = compiler.ChatLog([source, calls])
    source["content"] = "changed"
    calls["toolCalls"][0]["id"] = "changed"
    read = log[0]
    read["content"] = "changed too"
    log[1]["toolCalls"][0]["name"] = "changed"
    for m in log:
        m["role"] = "system"
    assert log == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": None, "toolCalls": [{"id": "a", "name": "n"}]},
    ]


def test_a_log_is_a_list_of_its_messages() -> None:
    log = compiler.ChatLog()
    log.append(message(0))
    log.extend([message(1), message(2), message(3)])
    log.insert(0, message(9))
    log[1:3] = [message(5)]
    del log[-1]
    assert log.pop(0) == message(9)
    log += [message(7)]
    assert list(log) == [message(5), message(2), message(7)]
    assert len(log) == 3 and log[-1] == message(7) and log[:1] == [message(5)]
    assert message(2) in log and log.index(message(7)) == 2
    log.reverse()
    assert list(log) == [message(7), message(2), message(5)]
    with pytest.raises(IndexError):
        log.pop(10)
    assert len(log) == 3  # a failed change changes nothing
    twin = copy.copy(log)
    twin.append(message(8))
    assert len(log) == 3 and len(copy.deepcopy(twin)) == 4  # a copy is a log of its own
    pair = copy.deepcopy([log, log])
    assert pair[0] is pair[1] and pair[0] is not log  # one copy, met twice
    log.clear()
    assert log == [] and repr(log) == "ChatLog(0 messages)"


def test_what_a_compile_read_is_not_changed_by_later_changes() -> None:
    log = compiler.ChatLog([message(0), message(1)])
    items, n, changes = log._snapshot()
    log.append(message(2))  # appended to the list read: past what the compile reads
    log[0] = message(5)
    del log[1]
    assert items[:n] == [message(0), message(1)] and changes == 0
    assert log._lowest_change(changes, log._snapshot()[2]) == 0


def test_bad_messages_in_a_log_are_the_errors_of_a_list() -> None:
    bad = [message(0), {"role": "narrator", "content": "x"}]
    session = compiler.Session.from_string(TEMPLATE, budget=600)
    got = outcome(session.compile, {"chat": compiler.ChatLog(bad), "character": CARD})
    want = outcome(compiler.compile_string, TEMPLATE, context={"chat": bad, "character": CARD})
    assert got == want and got[0] == "error"


def test_a_message_that_cannot_be_copied_is_refused_when_it_goes_in() -> None:
    log = compiler.ChatLog([message(0)])
    with pytest.raises(ContextError) as err:
        log.append({"role": "user", "content": threading.Lock()})
    assert err.value.code == "context.invalid_chat" and "message 1" in err.value.message
    assert log == [message(0)]


def same_as_a_list(session: compiler.Session, log: compiler.ChatLog) -> None:
    """The session's compile of ``log`` is the one-shot compile of its messages as a list."""
    got = outcome(session.compile, {"chat": log, "character": CARD})
    want = outcome(
        compiler.compile_string,
        TEMPLATE,
        context={"chat": list(log), "character": CARD},
        budget=100_000,
    )
    assert got == want


class Shifty:
    """An index that says 5 the first time it is read, then 0."""

    def __init__(self) -> None:
        self.reads = 0

    def __index__(self) -> int:
        self.reads += 1
        return 5 if self.reads == 1 else 0


BAD = {"role": "narrator", "content": "not a role"}


@pytest.mark.parametrize(
    "change",
    [
        lambda log: log.insert(Shifty(), BAD),  # type: ignore[arg-type]
        lambda log: log.__setitem__(Shifty(), BAD),
        lambda log: log.__setitem__(slice(Shifty(), 6), [BAD]),
    ],
)
def test_an_index_is_read_once(change: Any) -> None:
    """The index a change records is the one it applies (an ``__index__`` that answers
    differently each time cannot leave a changed message unchecked)."""
    session = compiler.Session.from_string(TEMPLATE, budget=100_000)
    log = compiler.ChatLog(message(i) for i in range(10))
    session.compile({"chat": log, "character": CARD})
    change(log)
    same_as_a_list(session, log)


def test_comparing_a_log_hands_out_none_of_its_messages() -> None:
    """``==`` compares copies: the other side's ``__eq__`` never holds a message the log
    trusts a session to have checked."""
    grabbed: list[Any] = []

    class Grabby(dict):  # type: ignore[type-arg]
        def __eq__(self, other: object) -> bool:
            grabbed.append(other)
            return False

    session = compiler.Session.from_string(TEMPLATE, budget=100_000)
    log = compiler.ChatLog(message(i) for i in range(3))
    session.compile({"chat": log, "character": CARD})
    assert log != [Grabby(), Grabby(), Grabby()]
    assert log != compiler.ChatLog([Grabby(), Grabby(), Grabby()])
    for other in grabbed:
        other["role"] = "narrator"
    assert log == [message(0), message(1), message(2)]
    same_as_a_list(session, log)


def test_a_popped_message_is_a_copy() -> None:
    """A compile that read the log before a pop keeps reading what it checked, whatever
    the caller does with the message popped."""
    log = compiler.ChatLog([message(0), message(1)])
    items, n, _ = log._snapshot()
    popped = log.pop()
    popped["role"] = "narrator"
    assert items[:n] == [message(0), message(1)]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_log_pickles_as_its_messages(protocol: int) -> None:
    log = compiler.ChatLog([message(0), message(1)])
    log[0] = message(5)
    back = pickle.loads(pickle.dumps(log, protocol=protocol))
    assert type(back) is compiler.ChatLog and back == [message(5), message(1)]


def test_a_compile_during_a_change_sees_it_before_or_after_not_half() -> None:
    """A compile that runs after a change is recorded but before its list is swapped in
    (another thread) reads the old messages with the old count of changes, so the next
    compile still checks the changed message."""
    session = compiler.Session.from_string(TEMPLATE, budget=100_000)
    log = compiler.ChatLog(message(i) for i in range(10))
    session.compile({"chat": log, "character": CARD})

    class Midway(dict):  # type: ignore[type-arg]
        def __setitem__(self, key: Any, value: Any) -> None:
            super().__setitem__(key, value)
            session.compile({"chat": log, "character": CARD})  # the other thread's turn

    log._edits = Midway(log._edits)
    log[3] = BAD
    same_as_a_list(session, log)


def test_a_turn_that_read_the_log_before_another_turn_checked_it_trusts_nothing(
    monkeypatch: Any,
) -> None:
    """Two threads of one session: the one whose read of the log is older than what the
    memo already holds checks its own messages (they may be ones since replaced)."""
    memo = lazy_chat.ChatMemo()
    log = compiler.ChatLog([message(0), BAD, message(2)])
    old = log._snapshot()  # thread A reads the log ...
    log[1] = message(1)
    assert memo.logged(log) is not None  # ... thread B checks the changed log ...
    monkeypatch.setattr(compiler.ChatLog, "_snapshot", lambda self: old)
    assert memo.logged(log) is None  # ... and A's (bad) messages are checked, not trusted


def test_a_key_the_caller_keeps_is_not_shared() -> None:
    """A message whose keys are not exactly text is copied deeply, so the caller cannot
    change what a key of the log's copy equals."""

    key, stop = fickle_key("role")
    session = compiler.Session.from_string(TEMPLATE, budget=100_000)
    log = compiler.ChatLog([message(0), {key: "user", "content": "hi"}])
    session.compile({"chat": log, "character": CARD})
    stop()
    same_as_a_list(session, log)


def test_a_log_remembers_a_bounded_number_of_changes(monkeypatch: Any) -> None:
    """Past :attr:`ChatLog.REMEMBERED` changes the oldest are forgotten; a session that read
    the log before them checks it whole again (and still gives a list's result)."""
    monkeypatch.setattr(compiler.ChatLog, "REMEMBERED", 3)
    session = compiler.Session.from_string(TEMPLATE, budget=100_000)
    log = compiler.ChatLog(message(i) for i in range(10))
    session.compile({"chat": log, "character": CARD})
    log[2] = BAD
    for i in range(12):
        log[9] = message(100 + i)
    assert len(log._edits) <= 6
    assert log._lowest_change(0, log._snapshot()[2]) == 0
    same_as_a_list(session, log)


def test_a_key_whose_class_changes_what_it_equals_is_plain_text_in_the_log() -> None:
    """A key of a str subclass whose class later stops it equalling "role" (even through a
    deep copy, which keeps the class) is kept as its plain text: the session's warm turn is
    a list's compile, never a KeyError."""

    key, stop = fickle_key("role")
    session = compiler.Session.from_string(TEMPLATE, budget=100_000)
    calls = [{"id": "c1", "name": "fs.read", "arguments": {}}]
    log = compiler.ChatLog([message(0), {key: "user", "content": "hi"}])
    log.append({key: "assistant", "content": None, "toolCalls": calls})
    log.append({"role": "tool", "content": "done", "toolCallId": "c1"})
    session.compile({"chat": log, "character": CARD})
    stop()
    same_as_a_list(session, log)
    assert all(type(k) is str for m in log for k in m)


def test_changing_a_result_changes_nothing_the_log_or_session_keeps() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=800)
    log = compiler.ChatLog(message(i) for i in range(60))
    first = session.compile({"chat": log, "character": CARD})
    want = copy.deepcopy(first.request)
    for component in first.frame.components:
        for m in component.messages or []:
            m["content"] = "changed"
    for m in first.request["messages"]:
        m["content"] = "changed"
    assert session.compile({"chat": log, "character": CARD}).request == want
    log.append(message(60))
    assert "changed" not in json.dumps(session.compile({"chat": log, "character": CARD}).request)


def test_a_one_shot_compile_takes_a_log_as_a_list() -> None:
    log = compiler.ChatLog(message(i) for i in range(60))
    for chat in (log, compiler.ChatLog([*list(log)[:3], BAD])):
        got = outcome(compiler.compile_string, TEMPLATE, context={"chat": chat}, budget=400)
        want = outcome(compiler.compile_string, TEMPLATE, context={"chat": list(chat)}, budget=400)
        assert got == want


@pytest.mark.parametrize("turns", [1, 2])
def test_messages_appended_while_a_compile_reads_the_log_are_not_read(turns: int) -> None:
    """Another thread appends to the log while a compile reads it (here: while the history
    is summarized): that compile reads the messages the log had when it started, on a
    session's first turn and on a later one, and the next compile reads the new ones."""
    session = compiler.Session.from_string(TEMPLATE, budget=800)
    log = compiler.ChatLog(message(i) for i in range(60))
    for _ in range(turns - 1):
        session.compile({"chat": log, "character": CARD})
        log.append(message(len(log)))
    before = list(log)

    def summarize(request: Any) -> str:
        log.append(BAD)  # a message the compile under way must not read
        return "- they talked."

    got = outcome(session.compile, {"chat": log, "character": CARD}, summarizer=summarize)
    want = outcome(
        compiler.compile_string,
        TEMPLATE,
        context={"chat": before, "character": CARD},
        budget=800,
        summarizer=lambda request: "- they talked.",
    )
    assert log[-1] == BAD and len(log) == len(before) + 1  # appended midway
    assert got == want and got[0] != "error"
    assert outcome(session.compile, {"chat": log, "character": CARD})[0] == "error"


def test_a_log_copies_a_message_nested_as_deeply_as_json_reads() -> None:
    """Copying is not bounded by Python's recursion limit: a message the JSON reader took
    (here 900 levels deep) goes into a log, and comes out, equal."""
    depth = 900
    arguments = json.loads('{"a":' * depth + "1" + "}" * depth)
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    log = compiler.ChatLog([message])
    out = log[0]
    node = out["tool_calls"][0]["function"]["arguments"]
    assert node is not arguments
    for _ in range(depth):
        node = node["a"]
    assert node == 1


def test_a_log_copies_shared_and_cyclic_parts_as_deepcopy_does() -> None:
    shared = {"k": "v"}
    message: dict[str, Any] = {"role": "user", "content": "x", "a": shared, "b": [shared]}
    message["self"] = message
    out = compiler.ChatLog([message])[0]
    assert out is not message and out["self"] is out
    assert out["a"] is out["b"][0] and out["a"] == shared and out["a"] is not shared
