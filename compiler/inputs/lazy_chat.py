"""A run's chat validated lazily: a cheap structural check of every message, then full
validation only of the messages a compile reads.

Internal: :func:`compiler.inputs.run.load_context` keeps a caller's chat as a
:class:`LazyChat` when :func:`plain_chat` accepts every message, a check that guarantees
validation cannot fail (a flat ``dict`` of ``role``, ``content`` and ``name`` only; a role
the model allows; text or null values without a lone surrogate). Any other chat is
validated whole as before, so a bad message gives exactly the error it always gave. A
message is validated when it is first read, once (memoized, shared by every slice), so a
compile that keeps the newest 400 messages of 10,000 validates about 400.

The check makes a handful of passes over the chat in C (``map``, ``set``, ``list.count``)
and none in Python: a 10,000-message chat costs a fraction of a millisecond.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import filterfalse, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, overload

if TYPE_CHECKING:
    from compiler.inputs.chat_log import ChatLog

T = TypeVar("T")
U = TypeVar("U")

_KEYS = frozenset({"role", "content", "name"})
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


class _Absent:
    """The value of a key a message does not have (false, as an empty text is)."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "_ABSENT"  # the one instance, through copy.deepcopy and pickle


_ABSENT: Final = _Absent()
_OPTIONAL = frozenset({str, type(None), _Absent})
_ROLE = itemgetter("role")
_CONTENT = itemgetter("content")


def no_surrogate(texts: list[Any]) -> bool:
    """Whether no text holds a lone surrogate: only non-ASCII text can, and the UTF-8
    encoder refuses one in a single pass over those texts joined."""
    if all(map(str.isascii, texts)):
        return True
    try:
        "".join(filterfalse(str.isascii, texts)).encode()
    except UnicodeEncodeError:
        return False
    return True


def _column(items: list[dict[Any, Any]], key: str) -> list[Any] | None:
    """Every message's ``key`` (:data:`_ABSENT` where it has none) when each is text (no
    lone surrogate), null or absent; else None."""
    values = list(map(dict.get, items, repeat(key), repeat(_ABSENT)))
    types = list(map(type, values))
    if types.count(str) == len(types):
        texts = values
    elif _OPTIONAL.issuperset(types):
        texts = list(filter(None, values))  # the non-empty texts
    else:
        return None
    return values if no_surrogate(texts) else None


def _columns(items: list[Any]) -> tuple[list[Any], list[Any], list[Any] | None] | None:
    """The roles, contents and names (None: no message has a name) of ``items`` when each
    is a message :func:`plain_chat` accepts, else None. Each pass is one C loop: the
    messages' types, their roles, their contents, then (unless every message is exactly a
    role and a text) their keys and names."""
    n = len(items)
    if list(map(type, items)).count(dict) != n:
        return None
    # the passes that read the same parts of the messages run one after another (the
    # dicts, then their entries, then the texts), while those are in the CPU caches
    pairs = sum(map(len, items)) == 2 * n
    try:
        roles: list[Any] = list(map(_ROLE, items))
    except KeyError:
        return None
    try:
        contents: list[Any] | None = list(map(_CONTENT, items))
    except KeyError:  # some message has none
        contents = None
    if list(map(type, roles)).count(str) != n or not _ROLES.issuperset(roles):
        return None
    if contents is not None and pairs and list(map(type, contents)).count(str) == n:
        # each message has a role and a text content, and no other key
        return (roles, contents, None) if no_surrogate(contents) else None
    keys = set().union(*items)
    if not _KEYS.issuperset(keys):
        return None
    optional = _column(items, "content")
    if optional is None:
        return None
    if "name" not in keys:
        return roles, optional, None
    names = _column(items, "name")
    return None if names is None else (roles, optional, names)


def plain_chat(items: list[Any], *, copy: bool = True) -> list[dict[str, Any]] | None:
    """``items`` (with ``copy``: copies, each made afresh from the values the check read,
    under keys of exact text, so nothing of the caller's is shared) when each is a ``dict``
    of only ``role`` (one of the roles a chat message may have), ``content`` and ``name``,
    whose values are text (no lone surrogate) or null, ``content`` and ``name`` possibly
    absent; else None."""
    columns = _columns(items)
    if columns is None:
        return None
    if not copy:
        return items
    roles, contents, names = columns
    if names is None and sum(map(len, items)) == 2 * len(items):  # a role and its content
        return [{"role": r, "content": c} for r, c in zip(roles, contents, strict=True)]
    return list(PlainChat(roles, contents, names))  # the keys each message had


def plain_snapshot(items: list[Any]) -> PlainChat | None:
    """``items`` as a :class:`PlainChat` when :func:`plain_chat` accepts them, else None."""
    columns = _columns(items)
    return None if columns is None else PlainChat(*columns)


class PlainChat(Sequence[dict[str, Any]]):
    """A chat :func:`plain_chat` accepted, held as the columns its check read (roles,
    contents, names: immutable text): a snapshot of the caller's messages, as copies would
    be, without a ``dict`` per message. Message ``i`` is made when it is read: a fresh
    ``dict`` of the keys it had. Slices (step 1) are ``PlainChat`` too."""

    __slots__ = ("_contents", "_framed", "_names", "roles")

    def __init__(
        self,
        roles: list[Any],
        contents: list[Any],
        names: list[Any] | None,
        *,
        framed: bool = False,
    ) -> None:
        #: every message's role (what :meth:`LazyChat.roles` reads)
        self.roles = roles
        self._contents = contents
        self._names = names
        self._framed = framed

    def framed(self) -> PlainChat:
        """The same messages, each read as the frame's message of it (as
        :func:`compiler.inputs.chat_frame.raw_message` makes it: its content, null when it
        had none, and its name when it has a non-empty one), made straight from the columns."""
        return PlainChat(self.roles, self._contents, self._names, framed=True)

    def __len__(self) -> int:
        return len(self.roles)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> PlainChat: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | PlainChat:
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise ValueError("a plain chat slices with step 1 only")
            names = None if self._names is None else self._names[index]
            return PlainChat(self.roles[index], self._contents[index], names, framed=self._framed)
        msg: dict[str, Any] = {"role": self.roles[index]}  # a list's indexing and IndexError
        content = self._contents[index]
        if self._framed:
            msg["content"] = None if type(content) is _Absent else content
            if self._names is not None and (name := self._names[index]):
                msg["name"] = name
            return msg
        if type(content) is not _Absent:
            msg["content"] = content
        if self._names is not None and type(name := self._names[index]) is not _Absent:
            msg["name"] = name
        return msg

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._framed and self._names is None and _ABSENT not in self._contents:
            # the frame's message of a role and a text: made together (most chats)
            pairs = zip(self.roles, self._contents, strict=True)
            return iter([{"role": r, "content": c} for r, c in pairs])
        return map(self.__getitem__, range(len(self.roles)))

    def __repr__(self) -> str:
        return f"PlainChat({len(self)} messages)"

    def appended(self, role: str, content: str) -> PlainChat:
        """The same messages and one more, without a name, after them (its columns copied:
        at C speed)."""
        names = None if self._names is None else [*self._names, _ABSENT]
        return PlainChat(
            [*self.roles, role], [*self._contents, content], names, framed=self._framed
        )


def made_as_read(message: T) -> T:
    """The ``make`` of a :class:`LazyChat` whose raw items are made as they are read (a
    :class:`PlainChat`'s): each is handed out as it comes."""
    return message


class ChatMemo:
    """The last chat :func:`plain_chat` accepted, as its copies, so that the next turn of a
    session checks and copies only what it appends.

    A chat whose first messages are exact ``dict`` objects equal (``==``) to the copies
    checked last time reuses those copies (they are this memo's own, never handed out to be
    changed); the rest is checked as :func:`plain_chat` checks it. Equality, not identity: a
    caller that changes a message in place, or sends fresh copies, is checked again or
    reused by content. One reference swapped whole, so threads sharing a memo see one turn's
    copies or another's, never a mixture; it holds one chat (the last one accepted).

    A :class:`~compiler.inputs.chat_log.ChatLog` is read by :meth:`logged` instead: the
    log says what changed, so nothing is compared."""

    __slots__ = ("_last", "_log")

    def __init__(self) -> None:
        self._last: list[dict[str, Any]] = []
        #: the log read last, how many changes it had had, and how many messages it had
        self._log: tuple[ChatLog, int, int] | None = None

    def logged(self, log: ChatLog) -> LazyChat[dict[str, Any]] | None:
        """The messages of ``log`` (its own, never changed: not copied; read up to the
        length it had now, though it may grow) when each is one :func:`plain_chat` accepts,
        else None; only those appended or changed since this memo last read the same log
        are checked."""
        items, n, changes = log._snapshot()
        state = self._log  # read once: another thread may swap it meanwhile
        checked = 0
        if state is not None and state[0] is log and state[1] <= changes:
            # (a read older than the memo's, in another thread, may hold messages since
            # replaced: it trusts nothing)
            _, seen, checked = state
            lowest = log._lowest_change(seen, changes)
            checked = min(checked, n, checked if lowest is None else lowest)
        if checked < n and plain_chat(items[checked:n], copy=False) is None:
            return None
        self._log = (log, changes, n)
        return LazyChat(items, made_as_read, _stop=n)

    def plain(self, items: list[Any]) -> list[dict[str, Any]] | None:
        """:func:`plain_chat` of ``items`` (copies), reusing the last accepted chat's copies
        for the longest common head it can verify."""
        last = self._last  # read once: another thread may swap it meanwhile
        k = min(len(last), len(items))
        head = items if k == len(items) else items[:k]
        same = last if k == len(last) else last[:k]
        # exact dicts only (a subclass's own __eq__ could say anything), compared in C
        if k and list(map(type, head)).count(dict) == k and same == head:
            tail = plain_chat(items[k:])
            out = None if tail is None else same + tail
        else:
            out = plain_chat(items)
        if out is not None:
            self._last = out
        return out


class LazyChat(Sequence[T], Generic[T]):
    """The messages ``raw[start:stop]``, each made by ``make`` (validation; or a frame's
    message from a validated one) when first read, once.

    Slices (step 1) are views sharing the memo; iteration, indexing and ``len`` behave as a
    list's. :meth:`roles` reads the checked roles of raw dicts without validating them.
    ``raw`` may be a list that grows at its end while the chat is read (a
    :class:`~compiler.inputs.chat_log.ChatLog`'s own): only ``raw[:stop]`` is ever read.
    The memo is a ``dict`` filled as messages are read (nothing as long as the chat)."""

    __slots__ = ("_made", "_make", "_raw", "_start", "_stop")

    def __init__(
        self,
        raw: Sequence[Any],
        make: Callable[[Any], T],
        *,
        _made: dict[int, T] | None = None,
        _start: int = 0,
        _stop: int | None = None,
    ) -> None:
        self._raw = raw
        self._make = make
        self._made: dict[int, T] = {} if _made is None else _made
        self._start = _start
        self._stop = len(raw) if _stop is None else _stop

    def __len__(self) -> int:
        return self._stop - self._start

    def _at(self, i: int) -> T:
        made = self._made.get(i)
        if made is None:
            made = self._made[i] = self._make(self._raw[i])
        return made

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            stop = max(start, stop)
            return LazyChat(
                self._raw,
                self._make,
                _made=self._made,
                _start=self._start + start,
                _stop=self._start + stop,
            )
        n = self._stop - self._start
        i = index.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("chat index out of range")
        i += self._start  # _at, inline: the fit reads each kept message through here
        made = self._made.get(i)
        if made is None:
            made = self._made[i] = self._make(self._raw[i])
        return made

    def __iter__(self) -> Iterator[T]:
        lo, hi, made = self._start, self._stop, self._made
        if hi - lo > 1 and not (made and any(map(made.__contains__, range(lo, hi)))):
            out = self._made_together(self._raw[lo:hi])  # none made yet: made together
            made.update(zip(range(lo, hi), out, strict=True))
            return iter(out)
        return map(self._at, range(lo, hi))

    def _made_together(self, raw: Sequence[Any]) -> list[T]:
        """Each of ``raw`` made (a plain chat's are made as it is read)."""
        if self._make is made_as_read:
            return list(raw)
        return list(map(self._make, raw))

    def __reversed__(self) -> Iterator[T]:
        for i in range(self._stop - 1, self._start - 1, -1):
            yield self._at(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, as a list

    def __repr__(self) -> str:
        return f"LazyChat({len(self)} messages)"

    def remade(self, make: Callable[[Any], U]) -> LazyChat[U]:
        """The same messages made by ``make`` from the raw ones (a memo of its own)."""
        return LazyChat(self._raw, make, _start=self._start, _stop=self._stop)

    def appended(self, role: str, content: str) -> LazyChat[T]:
        """The same messages and a new one of ``role`` and ``content`` after them, made by
        the same ``make`` (a memo of its own); the raw items of the others are the same
        objects (a :mod:`compiler.fit.prices` source stays one)."""
        raw = self.raw()
        if isinstance(raw, PlainChat):
            return LazyChat(raw.appended(role, content), self._make)
        return LazyChat([*raw, {"role": role, "content": content}], self._make)

    def raw(self) -> Sequence[Any]:
        """The raw items the messages are made from (a list's slice, or a
        :class:`PlainChat`'s)."""
        if self._start == 0 and self._stop == len(self._raw):
            return self._raw
        return self._raw[self._start : self._stop]

    def plain(self) -> bool:
        """Whether the raw items are a :class:`PlainChat`'s (made afresh on each read)."""
        return isinstance(self._raw, PlainChat)

    def sources(self) -> Sequence[Any] | None:
        """The raw items the messages are made from, when they are objects that stand for
        their content (a list's: the loader's own copies or parsed messages, which nothing
        changes), for :mod:`compiler.fit.prices`; None for a :class:`PlainChat` (its items
        are made afresh on each read)."""
        return self.raw() if type(self._raw) is list else None

    def roles(self) -> list[str]:
        """Every message's role, read from the checked input (nothing validated)."""
        raw = self._raw
        if isinstance(raw, PlainChat):  # the column the check read
            return raw.roles[self._start : self._stop]
        return list(map(_ROLE, raw[self._start : self._stop]))
