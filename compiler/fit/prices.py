"""Prices of chat messages kept from one compile of a session to the next.

Internal: a :class:`compiler.Session` owns a :class:`PriceMemo`; each fit opens a
:class:`PriceBook` on it. A history walk prices each message it reads (the dialect's cost
of the message, with its framing); on the next turn, the same message is not made and priced
again: its price is read from the book.

A message is known by its *source*: the object a lazily made history makes it from (see
:class:`Sourced`), a session's own copy of the caller's message, which nothing changes. The
book holds each source it prices, so an identity it matches is never one reused by another
object. A compile reads the prices of the last compile and keeps those it read or made,
swapped whole at its end (a memo holds one compile's prices, and threads see one or another).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_, itemgetter
from typing import Any, Protocol, runtime_checkable

#: (source, role, price) of one message
Entry = tuple[object, str, int]
_SOURCE = itemgetter(0)


@runtime_checkable
class Sourced(Protocol):
    """Messages made lazily from source objects that stand for their content (a session's
    own copies); ``sources()`` is None when there are none (made fresh on each read)."""

    def sources(self) -> Sequence[object] | None: ...


class PriceMemo:
    """The prices the last compile of a session read or made, for one cost model (``key``:
    the dialect's name and the token counter)."""

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self._state: tuple[object, dict[int, Entry]] = (None, {})

    def book(self, key: object) -> PriceBook:
        """The book of one compile whose cost model is ``key`` (another model: no prices)."""
        last_key, last = self._state
        return PriceBook(self, key, last if last_key == key else {})

    def keep(self, key: object, prices: dict[int, Entry]) -> None:
        self._state = (key, prices)


class PriceBook:
    """One compile's prices: the last compile's (read), and this one's (read or made)."""

    __slots__ = ("_key", "_last", "_memo", "seen")

    def __init__(self, memo: PriceMemo, key: object, last: dict[int, Entry]) -> None:
        self._memo, self._key, self._last = memo, key, last
        self.seen: dict[int, Entry] = {}

    def get(self, source: object) -> Entry | None:
        """The entry of ``source`` when it was priced (this compile or the last)."""
        entry = self.seen.get(id(source))
        if entry is None:
            entry = self._last.get(id(source))
            if entry is None or entry[0] is not source:
                return None
            self.seen[id(source)] = entry
        return entry if entry[0] is source else None

    def recall(self, sources: Sequence[object]) -> tuple[list[Entry], int]:
        """The last compile's entries of the newest of ``sources`` that it priced, in a row
        (oldest first), kept as :meth:`get` keeps an entry it finds; or, when it did not price
        the newest, no entries and how many of the newest it did not price. C passes."""
        found: list[Any] = list(map(self._last.get, map(id, sources)))
        if found and (found[-1] is None or found[-1][0] is not sources[-1]):
            pairs = zip(reversed(found), reversed(sources), strict=True)
            new = [e is not None and e[0] is s for e, s in pairs]  # priced, newest first
            return [], new.index(True) if True in new else len(new)
        if None in found:  # the run ends at the newest not priced
            cut = len(found) - found[::-1].index(None)
            found, sources = found[cut:], sources[cut:]
        if not all(map(is_, map(_SOURCE, found), sources)):  # an id another object held
            same = list(map(is_, map(_SOURCE, found), sources))
            cut = len(same) - same[::-1].index(False)
            found, sources = found[cut:], sources[cut:]
        self.seen.update(zip(map(id, sources), found, strict=True))
        return found, 0

    def put(self, source: object, role: str, price: int) -> None:
        self.seen[id(source)] = (source, role, price)

    def close(self) -> None:
        """Keep this compile's prices for the next one."""
        self._memo.keep(self._key, self.seen)
