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

from compiler.session import Session


def session_key(*parts: Any) -> str:
    """A digest of ``parts`` (JSON values): equal parts, equal keys."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SessionCache:
    """At most ``capacity`` sessions, whose sources hold at most ``max_weight`` characters
    together (a parsed source takes several times its text in memory: without this bound,
    many large distinct sources would each be kept); the least recently used is dropped
    first, the newest always kept. Thread-safe: a session is made outside the lock (parsing
    a source takes time), and when two threads make the same one, the first kept wins."""

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
        """The characters of the sources of the sessions kept."""
        with self._lock:
            return self._weight

    def get(self, key: str, make: Callable[[], Session], weight: int = 0) -> Session:
        """The session under ``key``, made by ``make()`` (and kept, as ``weight``
        characters of source) when there is none."""
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
            self._sessions[key] = (made, weight)
            self._weight += weight
            while len(self._sessions) > 1 and self._over():
                self._weight -= self._sessions.popitem(last=False)[1][1]
            return made

    def _over(self) -> bool:
        return len(self._sessions) > self.capacity or (
            self.max_weight is not None and self._weight > self.max_weight
        )
