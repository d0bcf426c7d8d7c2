"""The tool parameter schemas a session found valid, so its later turns skip the check.

Internal: :func:`compiler.context.run.load_context` sets :data:`CHECKED` while it validates
a session's run context; :class:`compiler.context.run.ToolIn` reads it.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any


class SchemaMemo:
    """The tool parameter schemas a session found valid, by their JSON text: a turn that
    sends the same tools does not check them against the JSON Schema metaschema again (the
    check is the slowest part of reading a run context: ~0.4 ms a tool). A session's own
    (:class:`compiler.api.TurnMemo`); at most :attr:`LIMIT` kept, then it starts over."""

    LIMIT = 256

    def __init__(self) -> None:
        self._valid: set[str] = set()

    @staticmethod
    def key(schema: Any) -> str | None:
        """``schema``'s JSON text (the memo's key; None: not JSON). Validated run contexts
        are plain JSON data (:func:`load_context`), so the text says all a check reads."""
        try:
            return json.dumps(schema, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return None

    def __contains__(self, key: str) -> bool:
        return key in self._valid

    def add(self, key: str) -> None:
        if len(self._valid) >= self.LIMIT:
            self._valid = set()  # swapped whole: a concurrent reader sees one or the other
        self._valid.add(key)


#: the checked schemas of the session whose run context is being validated (None: no session)
CHECKED: ContextVar[SchemaMemo | None] = ContextVar("apc_checked_schemas", default=None)
