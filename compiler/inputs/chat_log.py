"""A chat a runtime keeps from turn to turn, so that a session checks only what changed.

A :class:`ChatLog` is a list of chat messages that holds its own copies: a message is
copied when it goes in and when it comes out, so nothing outside the log can change one
in place. Appends go to the end; any other change (an edit, a deletion, a swipe that
replaces the newest message) is recorded with the lowest index it touched. A session that
compiled the log last turn therefore knows, without reading the old messages, which of
them are the ones it checked: it checks only the messages appended or changed since (see
:meth:`compiler.inputs.lazy_chat.ChatMemo.logged`), where a plain ``list`` must be
compared message by message with last turn's copies.

Internal: the API is ``compiler.ChatLog``; pass it as a run context's ``chat``. It may be
appended to while a compile reads it (that compile sees the messages there when it
started); changes other than appends replace the list whole, together with the count of
changes it reflects, so a compile under way never sees them and a compile reads a list
with exactly the changes in it. One writer at a time, as for a list.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Iterable, Iterator, MutableSequence
from typing import Any, overload

from compiler.errors import ContextError

_FLAT = frozenset({str, type(None)})
_TEXT = frozenset({str})
_LEAF = frozenset({str, int, float, bool, type(None)})


def _copy_json(message: Any) -> Any:
    """A deep copy of ``message``, walking its plain ``dict`` and ``list`` nodes without
    recursion (a chat the JSON reader took, nested as deeply as it allows, copies as well);
    other nodes are copied by :func:`copy.deepcopy`. As there, a node met twice (shared,
    or a cycle) is copied once."""

    def node(value: Any) -> Any:
        kind = type(value)
        if kind in _LEAF:
            return value
        if id(value) in memo:
            return memo[id(value)]
        if kind is dict:
            made: Any = {}
        elif kind is list:
            made = []
        else:
            return copy.deepcopy(value, memo)
        memo[id(value)] = made
        pending.append((value, made))
        return made

    memo: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []
    top = node(message)
    while pending:
        given, made = pending.pop()
        if type(given) is dict:
            for key, value in given.items():
                made[key] = node(value)
        else:
            made.extend(node(value) for value in given)
    return top


def _own(message: Any, where: str) -> Any:
    """A copy of ``message`` nothing else holds: a flat ``dict`` of text keys and text or
    null values is copied shallowly (neither can change), anything else deeply. A key of a
    ``str`` subclass (whose state could change what it equals) becomes its plain text, as
    the compile reads any caller's key."""
    if type(message) is dict and not _TEXT.issuperset(map(type, message)):
        message = {str.__str__(k) if isinstance(k, str) else k: v for k, v in message.items()}
    if type(message) is dict and _FLAT.issuperset(map(type, message.values())):
        return dict(message)
    try:
        return _copy_json(message)
    except Exception as exc:  # a message that cannot be copied cannot be JSON either
        raise ContextError(
            code="context.invalid_chat",
            message=f"{where} cannot be copied into a chat log: {type(exc).__name__}: {exc}"[:300],
            hint="a chat message is a JSON object (role, content, name, toolCalls, ...)",
        ) from exc


class ChatLog(MutableSequence[Any]):
    """Chat messages a runtime keeps across the turns of a :class:`compiler.Session`.

    Use it as a list (``append``, ``extend``, ``log[i] = message``, ``del log[i]``,
    ``pop``, ``clear``, iteration, indexing, ``len``) and pass it as a run context's
    ``chat``: the result is the same as for a list of the same messages, and a session
    checks only the messages appended or changed since its last compile of this log.
    Messages are copied in and out; reading one gives a copy, so changing it changes
    nothing in the log. What a message must be is checked by the compile, as for a list.
    """

    __slots__ = ("_edits", "_state")

    #: how many changes' lowest indexes a log remembers (a session that read the log before
    #: the ones forgotten checks it whole again)
    REMEMBERED = 4096

    def __init__(self, messages: Iterable[Any] = ()) -> None:
        #: for each change other than an append (numbered from 1), the lowest index it
        #: touched; the oldest are forgotten past :attr:`REMEMBERED`
        self._edits: dict[int, int] = {}
        #: the messages, and the number of the last change they reflect (one reference, swapped
        #: whole by a change: a reader gets the list and its count together)
        self._state: tuple[list[Any], int] = ([], 0)
        self.extend(messages)

    @property
    def _items(self) -> list[Any]:
        return self._state[0]

    # -- reading ---------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [_own(m, "a message") for m in self._items[index]]
        return _own(self._items[index], "a message")

    def __iter__(self) -> Iterator[Any]:
        return (_own(m, "a message") for m in self._items[:])

    def __eq__(self, other: object) -> bool:
        """Equal to a log or a list of equal messages; copies are compared (the other
        side's ``__eq__`` is never handed one of the log's own messages)."""
        if isinstance(other, ChatLog | list):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"ChatLog({len(self._items)} messages)"

    def __reduce__(self) -> tuple[type[ChatLog], tuple[list[Any]]]:
        return ChatLog, (list(self),)  # pickled as copies of its messages, any protocol

    def __copy__(self) -> ChatLog:
        return ChatLog(self._items)  # a log of its own (the slots would share the lists)

    def __deepcopy__(self, memo: dict[int, Any]) -> ChatLog:
        twin = memo[id(self)] = ChatLog(self._items)  # one copy, however often it is met
        return twin

    def _snapshot(self) -> tuple[list[Any], int, int]:
        """What a compile reads: the log's own list (never hand its items out), how many
        messages it has now, and how many changes other than appends the log has had. The
        log changes that list only by appending to it (any other change replaces it whole),
        so its first messages, as many as it has now, stay as they are: nothing is copied."""
        items, changes = self._state
        return items, len(items), changes

    def _lowest_change(self, since: int, until: int) -> int | None:
        """The lowest index that changes ``since`` .. ``until`` (counts from :meth:`_snapshot`)
        touched, or None when there were none."""
        if until - since > self.REMEMBERED:
            return 0  # forgotten: anything may have changed
        edits = self._edits  # a dict another thread may replace: read once
        lowest = [edits.get(n) for n in range(since + 1, until + 1)]
        if None in lowest:
            return 0  # forgotten
        return min(lowest, default=None)  # type: ignore[type-var]  # no None among them

    # -- changing --------------------------------------------------------------------
    def append(self, value: Any) -> None:
        self._items.append(_own(value, f"message {len(self._items)}"))

    def extend(self, values: Iterable[Any]) -> None:
        start = len(self._items)
        owned = [_own(m, f"message {start + i}") for i, m in enumerate(values)]
        self._items.extend(owned)  # all or nothing

    def insert(self, index: int, value: Any) -> None:
        owned = _own(value, "the message inserted")
        at = _index(index)
        self._change(lambda items: items.insert(at, owned), _lowest(at, len(self)))

    @overload
    def __setitem__(self, index: int, value: Any) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[Any]) -> None: ...

    def __setitem__(self, index: int | slice, value: Any) -> None:
        if isinstance(index, slice):
            owned: Any = [_own(m, "a message set") for m in value]
        else:
            owned = _own(value, "the message set")
        at = _index(index)
        self._change(lambda items: items.__setitem__(at, owned), _lowest(at, len(self)))

    def __delitem__(self, index: int | slice) -> None:
        at = _index(index)
        self._change(lambda items: items.__delitem__(at), _lowest(at, len(self)))

    def pop(self, index: int = -1) -> Any:
        popped: list[Any] = []
        at = _index(index)
        self._change(lambda items: popped.append(items.pop(at)), _lowest(at, len(self)))
        return _own(popped[0], "the message popped")  # a compile under way may read it

    def clear(self) -> None:
        self._change(list.clear, 0)

    def reverse(self) -> None:
        self._change(list.reverse, 0)

    def _change(self, edit: Any, lowest: int) -> None:
        """Apply ``edit`` to a copy of the list, record ``lowest``, then swap the copy in
        with the new count of changes: a compile that read the old list keeps reading it
        whole (with the old count), and one that reads the new list learns what changed."""
        items = self._items[:]
        edit(items)  # raises as a list's method would, before anything changed
        number = self._state[1] + 1
        if len(self._edits) >= 2 * self.REMEMBERED:  # bounded: forget the older half
            self._edits = {n: i for n, i in self._edits.items() if n > number - self.REMEMBERED}
        self._edits[number] = lowest
        self._state = (items, number)


def _index(index: Any) -> int | slice:
    """``index`` (an int, a slice, or what has ``__index__``) as plain ints, each read once:
    the index a change records is then the one it applies."""
    if isinstance(index, slice):
        parts = (index.start, index.stop, index.step)
        return slice(*(None if part is None else operator.index(part) for part in parts))
    return operator.index(index)


def _lowest(index: int | slice, n: int) -> int:
    """The lowest index of a list of ``n`` that ``index`` (of :func:`_index`) touches
    (``n`` when none)."""
    if isinstance(index, slice):
        start, _, step = index.indices(n)
        return start if step == 1 else 0
    return max(0, min(index + n if index < 0 else index, n))
