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
    """At most ``capacity`` sessions; the least recently used is dropped first. Thread-safe:
    a session is made outside the lock (parsing a source takes time), and when two threads
    make the same one, the first kept wins."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def get(self, key: str, make: Callable[[], Session]) -> Session:
        """The session under ``key``, made by ``make()`` (and kept) when there is none."""
        with self._lock:
            found = self._sessions.get(key)
            if found is not None:
                self._sessions.move_to_end(key)
                return found
        made = make()
        with self._lock:
            found = self._sessions.get(key)
            if found is not None:
                self._sessions.move_to_end(key)
                return found
            self._sessions[key] = made
            while len(self._sessions) > self.capacity:
                self._sessions.popitem(last=False)
            return made
