"""A bounded LRU of sessions: compile sessions keyed by caller, source content and options,
and the turn protocol's sessions keyed by their ids.

Internal: :class:`compiler.serve.service.Service` keeps one. A runtime that sends turn after
turn of one chat (the same source and options) lands on the same ``compiler.Session``, whose
token-count and summary caches make the next compile warm; a different source, different
options or a different caller gets its own session, so caches are never shared between them.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


def session_key(*parts: Any) -> str:
    """A digest of ``parts`` (JSON values): equal parts, equal keys."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SessionCache(Generic[V]):
    """At most ``capacity`` sessions, weighing at most ``max_weight`` together (their memory,
    by :func:`compiler.serve.limits.session_bytes`: a parsed source takes up to 73 times its
    text, a session's memo of its last turn up to 18 times the body it came in). The least
    recently used is dropped first; a session that alone weighs more is used by its request
    and not kept; one unused for ``max_idle`` seconds is dropped (when the cache is next
    used, or :meth:`expire` is called). A session is weighed when made, and again after each
    compile (its caches grow). Thread-safe: a session is made outside the lock (parsing a
    source takes time), and when two threads make the same one, the first kept wins.

    It holds the compile sessions of ``/v1/compile`` and the turn sessions of
    ``/v1/sessions`` together, under keys of their own: the bounds are on both."""

    def __init__(
        self,
        capacity: int,
        max_weight: int | None = None,
        max_idle: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.max_weight = max_weight
        self.max_idle = max_idle
        self.clock = clock
        #: key -> (session, weight, when last used); in the order of their last use
        self._sessions: OrderedDict[str, tuple[V, int, float]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    @property
    def weight(self) -> int:
        """What the sessions kept weigh together."""
        with self._lock:
            return self._weight

    def get(self, key: str, make: Callable[[], V], weight: int = 0) -> V:
        """The session under ``key``, made by ``make()`` (and kept, weighing ``weight``,
        unless that alone is over the bound) when there is none."""
        found = self.find(key)
        if found is not None:
            return found
        made = make()
        with self._lock:
            kept = self._used(key)
            if kept is not None:
                return kept
            self._keep(key, made, weight)
            return made

    def find(self, key: str) -> V | None:
        """The session under ``key`` (now the most recently used), or None."""
        with self._lock:
            return self._used(key)

    def put(self, key: str, session: V, weight: int) -> bool:
        """Keep ``session`` under ``key`` (in place of any other), weighing ``weight``;
        False when that alone is over the bound (then nothing is kept under ``key``)."""
        with self._lock:
            self._drop(key)
            return self._keep(key, session, weight)

    def pop(self, key: str) -> V | None:
        """Drop the session under ``key``; it, or None when there was none."""
        with self._lock:
            return self._drop(key)

    def weigh(self, key: str, session: V, weight: int) -> None:
        """``session``, kept under ``key``, now weighs ``weight`` (dropped if that alone is
        over the bound; else the least recently used are, while the kept are over it)."""
        with self._lock:
            found = self._sessions.get(key)
            if found is None or found[0] is not session:
                return
            self._weight += weight - found[1]
            if self._too_heavy(weight):
                del self._sessions[key]
                self._weight -= weight
            else:
                self._sessions[key] = (session, weight, found[2])
            self._shrink()

    def expire(self) -> None:
        """Drop the sessions unused for over ``max_idle`` seconds."""
        with self._lock:
            self._expire()

    def clear(self) -> None:
        """Drop every session kept."""
        with self._lock:
            self._sessions.clear()
            self._weight = 0

    def _used(self, key: str) -> V | None:
        self._expire()
        found = self._sessions.get(key)
        if found is None:
            return None
        self._sessions[key] = (found[0], found[1], self.clock())
        self._sessions.move_to_end(key)
        return found[0]

    def _keep(self, key: str, session: V, weight: int) -> bool:
        if self._too_heavy(weight):
            return False
        self._sessions[key] = (session, weight, self.clock())
        self._weight += weight
        self._shrink()
        return True

    def _drop(self, key: str) -> V | None:
        found = self._sessions.pop(key, None)
        if found is None:
            return None
        self._weight -= found[1]
        return found[0]

    def _expire(self) -> None:
        if self.max_idle is None:
            return
        oldest = self.clock() - self.max_idle
        while self._sessions:
            key, (_, weight, used) = next(iter(self._sessions.items()))
            if used >= oldest:
                return
            del self._sessions[key]
            self._weight -= weight

    def _too_heavy(self, weight: int) -> bool:
        return self.max_weight is not None and weight > self.max_weight

    def _shrink(self) -> None:
        while self._sessions and (
            len(self._sessions) > self.capacity
            or (self.max_weight is not None and self._weight > self.max_weight)
        ):
            self._weight -= self._sessions.popitem(last=False)[1][1]
