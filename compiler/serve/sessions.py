"""A bounded LRU of compile sessions, keyed by caller, source content and options.

Internal: :class:`compiler.serve.service.Service` keeps one. A runtime that sends turn after
turn of one chat (the same source and options) lands on the same :class:`Session`, whose
token-count and summary caches make the next compile warm; a different source, different
options or a different caller gets its own session, so caches are never shared between them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from compiler import Session


def session_key(*parts: Any) -> str:
    """A digest of ``parts`` (JSON values): equal parts, equal keys."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SessionCache:
    """At most ``capacity`` sessions, weighing at most ``max_weight`` together (their memory,
    by :func:`compiler.serve.limits.session_bytes`: a parsed source takes up to 73 times its
    text, a session's memo of its last turn up to 18 times the body it came in). The least
    recently used is dropped first; a session that alone weighs more is used by its request
    and not kept. A session is weighed when made, and again after each compile (its caches
    grow). Thread-safe: a session is made outside the lock (parsing a source takes time), and
    when two threads make the same one, the first kept wins."""

    def __init__(self, capacity: int, max_weight: int | None = None) -> None:
        self.capacity = capacity
        self.max_weight = max_weight
        self._sessions: OrderedDict[str, tuple[Session, int]] = OrderedDict()
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

    def get(self, key: str, make: Callable[[], Session], weight: int = 0) -> Session:
        """The session under ``key``, made by ``make()`` (and kept, weighing ``weight``,
        unless that alone is over the bound) when there is none."""
        with self._lock:
            found = self._sessions.get(key)
            if found is not None:
                self._sessions.move_to_end(key)
                return found[0]
        made = make()
        with self._lock:
            found = self._sessions.get(key)
            if found is not None:
                self._sessions.move_to_end(key)
                return found[0]
            if not self._too_heavy(weight):
                self._sessions[key] = (made, weight)
                self._weight += weight
                self._shrink()
            return made

    def weigh(self, key: str, session: Session, weight: int) -> None:
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
                self._sessions[key] = (session, weight)
            self._shrink()

    def clear(self) -> None:
        """Drop every session kept."""
        with self._lock:
            self._sessions.clear()
            self._weight = 0

    def _too_heavy(self, weight: int) -> bool:
        return self.max_weight is not None and weight > self.max_weight

    def _shrink(self) -> None:
        while self._sessions and (
            len(self._sessions) > self.capacity
            or (self.max_weight is not None and self._weight > self.max_weight)
        ):
            self._weight -= self._sessions.popitem(last=False)[1][1]
