"""A run's chat validated lazily: a cheap structural check of every message, then full
validation only of the messages a compile reads.

Internal: :func:`compiler.context.run.load_context` keeps a caller's chat as a
:class:`LazyChat` when :func:`plain_chat` accepts every message, a check that guarantees
validation cannot fail (a flat ``dict`` of ``role``, ``content`` and ``name`` only; a role
the model allows; text or null values without a lone surrogate). Any other chat is
validated whole as before, so a bad message gives exactly the error it always gave. A
message is validated when it is first read, once (memoized, shared by every slice), so a
compile that keeps the newest 400 messages of 10,000 validates about 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
U = TypeVar("U")

_KEYS = frozenset({"role", "content", "name"})
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def plain_chat(items: list[Any], *, copy: bool = True) -> list[dict[str, Any]] | None:
    """``items`` (a copy, each dict copied, with ``copy``) when each is a ``dict`` of only
    ``role`` (one of the roles a chat message may have), ``content`` and ``name``, whose
    values are text (no lone surrogate) or null, ``content`` and ``name`` possibly absent;
    else None."""
    out: list[dict[str, Any]] = []
    append = out.append
    for item in items:
        if type(item) is not dict:
            return None
        role = item.get("role")
        if type(role) is not str or role not in _ROLES:
            return None
        for key, value in item.items():
            if key not in _KEYS:
                return None
            if type(value) is str:
                if not value.isascii() and _SURROGATE.search(value):
                    return None
            elif value is not None:
                return None
        if copy:
            append(item.copy())
    return out if copy else items


class ChatMemo:
    """The last chat :func:`plain_chat` accepted, as its copies, so that the next turn of a
    session checks and copies only what it appends.

    A chat whose first messages are exact ``dict`` objects equal (``==``) to the copies
    checked last time reuses those copies (they are this memo's own, never handed out to be
    changed); the rest is checked as :func:`plain_chat` checks it. Equality, not identity: a
    caller that changes a message in place, or sends fresh copies, is checked again or
    reused by content. One reference swapped whole, so threads sharing a memo see one turn's
    copies or another's, never a mixture; it holds one chat (the last one accepted)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: list[dict[str, Any]] = []

    def plain(self, items: list[Any]) -> list[dict[str, Any]] | None:
        """:func:`plain_chat` of ``items`` (copies), reusing the last accepted chat's copies
        for the longest common head it can verify."""
        last = self._last  # read once: another thread may swap it meanwhile
        k = min(len(last), len(items))
        head = items[:k]
        if k and list(map(type, head)).count(dict) == k and last[:k] == head:
            tail = plain_chat(items[k:])
            out = None if tail is None else [*last[:k], *tail]
        else:
            out = plain_chat(items)
        if out is not None:
            self._last = out
        return out


class LazyChat(Sequence[T], Generic[T]):
    """The messages ``raw[start:stop]``, each made by ``make`` (validation; or a frame's
    message from a validated one) when first read, once.

    Slices (step 1) are views sharing the memo; iteration, indexing and ``len`` behave as a
    list's. :meth:`roles` reads the checked roles of raw dicts without validating them."""

    __slots__ = ("_made", "_make", "_raw", "_start", "_stop")

    def __init__(
        self,
        raw: Sequence[Any],
        make: Callable[[Any], T],
        *,
        _made: list[T | None] | None = None,
        _start: int = 0,
        _stop: int | None = None,
    ) -> None:
        self._raw = raw
        self._make = make
        self._made: list[T | None] = [None] * len(raw) if _made is None else _made
        self._start = _start
        self._stop = len(raw) if _stop is None else _stop

    def __len__(self) -> int:
        return self._stop - self._start

    def _at(self, i: int) -> T:
        made = self._made[i]
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
        n = len(self)
        i = index.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("chat index out of range")
        return self._at(self._start + i)

    def __iter__(self) -> Iterator[T]:
        for i in range(self._start, self._stop):
            yield self._at(i)

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
        return LazyChat(self._raw[self._start : self._stop], make)

    def roles(self) -> list[str]:
        """Every message's role, read from the checked input (nothing validated)."""
        return [self._raw[i]["role"] for i in range(self._start, self._stop)]
