"""A preset's chat history as a view: each message framed (named, quoted) as it is read.

Internal: :mod:`compiler.tavern.assemble` frames the chat a ``chatHistory`` entry places
through a :class:`ChatView`, so a compile reads only what the fit reads (the newest
messages that fit, the ones an in-chat injection lands among), not the whole chat:
:func:`injected_view` inserts the in-chat injections by reading only the newest messages
down to the deepest injection (:func:`compiler.tavern.injections.inject_newest`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from compiler._base.frame import Message


class ChatView(Sequence[Message]):
    """``make(base[i])`` for ``i`` in ``start..stop``, each made when first read (once,
    shared by every slice; ``made``: those made already, by index), then the messages of
    ``tail`` (made already).

    Behaves as a list of messages would for reading (``len``, indexing, step-1 slices as
    views, iteration); nothing in ``base`` is changed."""

    __slots__ = ("_base", "_free", "_made", "_make", "_start", "_stop", "_tail")

    def __init__(
        self,
        base: Sequence[Any],
        make: Callable[[Any], Message],
        tail: Sequence[Message] = (),
        *,
        free: Callable[[Any], bool] | None = None,
        made: dict[int, Message] | None = None,
        _start: int = 0,
        _stop: int | None = None,
    ) -> None:
        self._base = base
        self._make = make
        self._free = free
        self._made: dict[int, Message] = {} if made is None else made  # filled as read
        self._start = _start
        self._stop = len(base) if _stop is None else _stop
        self._tail = tuple(tail)

    def __len__(self) -> int:
        return self._stop - self._start + len(self._tail)

    def _at(self, i: int) -> Message:
        """Message ``i`` of the view (0 <= i < len)."""
        j = self._start + i
        if j >= self._stop:
            return self._tail[j - self._stop]
        made = self._made.get(j)
        if made is None:
            made = self._made[j] = self._make(self._base[j])
        return made

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if type(index) is int and index >= 0 and (j := self._start + index) < self._stop:
            made = self._made.get(j)  # a message of the base (the fit reads each through here)
            if made is None:
                made = self._made[j] = self._make(self._base[j])
            return made
        n = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                return [self._at(i) for i in range(start, stop, step)]
            return self._window(start, max(start, stop))
        i = index.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("chat index out of range")
        return self._at(i)

    def _window(self, start: int, stop: int) -> ChatView:
        """Messages ``start..stop`` of the view, as a view sharing the made messages."""
        own = self._stop - self._start  # how many come from the base
        base_stop = self._start + min(stop, own)
        tail = self._tail[max(0, start - own) : max(0, stop - own)]
        return ChatView(
            self._base,
            self._make,
            tail,
            free=self._free,
            made=self._made,
            _start=min(self._start + start, base_stop),
            _stop=base_stop,
        )

    def __iter__(self) -> Iterator[Message]:
        made, make, base = self._made, self._make, self._base
        for j in range(self._start, self._stop):
            m = made.get(j)
            if m is None:
                m = made[j] = make(base[j])
            yield m
        yield from self._tail

    def __reversed__(self) -> Iterator[Message]:
        return map(self._at, range(len(self) - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, as a list

    def __repr__(self) -> str:
        return f"ChatView({len(self)} messages)"

    def spliced(self, k: int, tail: Sequence[Message]) -> ChatView:
        """The view with its newest ``k`` messages replaced by ``tail``."""
        keep = self._window(0, len(self) - k)
        return ChatView(
            keep._base,
            keep._make,
            (*keep._tail, *tail),
            free=keep._free,
            made=keep._made,
            _start=keep._start,
            _stop=keep._stop,
        )

    def sources(self) -> Sequence[object] | None:
        """What each message is made from, for :mod:`compiler.fit.prices`: the base's
        source (a session's own copy of the caller's message) where ``free`` says the
        message made of it depends on nothing else that can change between compiles (it
        does depend on the preset, which a session's compiles share); a new object, never
        priced before, for any other message. None when the base has no sources."""
        sourced = getattr(self._base, "sources", None)
        got = sourced() if sourced is not None and self._free is not None else None
        if got is None or self._free is None:
            return None
        return _Sources(got, self._free, self._start, self._stop, len(self._tail))


class _Sources(Sequence[object]):
    """:meth:`ChatView.sources`, each read when asked for."""

    __slots__ = ("_free", "_got", "_start", "_stop", "_tail")

    def __init__(
        self, got: Sequence[object], free: Callable[[Any], bool], start: int, stop: int, tail: int
    ) -> None:
        self._got, self._free = got, free
        self._start, self._stop, self._tail = start, stop, tail

    def __len__(self) -> int:
        return self._stop - self._start + self._tail

    @overload
    def __getitem__(self, index: int) -> object: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[object]: ...

    def __getitem__(self, index: int | slice) -> object | Sequence[object]:
        if type(index) is int and index >= 0 and (j := self._start + index) < self._stop:
            source = self._got[j]  # the history walk reads each through here
            return source if self._free(source) else object()
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            base = self._stop - self._start  # how many come from the base
            if step == 1 and stop <= base:  # a block of the base (the walk reads blocks)
                got = self._got[self._start + start : self._start + max(start, stop)]
                free = self._free
                return [source if free(source) else object() for source in got]
            return [self[i] for i in range(start, stop, step)]
        i = index.__index__()
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("chat index out of range")
        j = self._start + i
        if j < self._stop and self._free(source := self._got[j]):
            return source
        return object()  # stands for nothing: priced afresh


class FramedList(list[Message]):
    """A :class:`ChatView`'s messages as a list (read at C speed: for a short chat, framed
    whole), still telling the fit their sources (:meth:`ChatView.sources`)."""

    def __init__(self, view: ChatView) -> None:
        super().__init__(view)
        self.view = view

    def sources(self) -> Sequence[object] | None:
        return self.view.sources()
