"""The tool parameter schemas a session found valid, so its later turns skip the check.

Internal: :func:`compiler.inputs.run.load_context` sets :data:`CHECKED` while it validates
a session's run context; :class:`compiler.inputs.run.ToolIn` reads it.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any


class SchemaMemo:
    """The tool parameter schemas a session found valid, by their JSON text: a turn that
    sends the same tools does not check them against the JSON Schema metaschema again (the
    check is the slowest part of reading a run context: ~0.4 ms a tool). A session's own
    (:class:`compiler._driver.api.TurnMemo`); at most :attr:`LIMIT` kept, then it starts over."""

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


_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_TEXT = frozenset({"description", "title"})
_SCHEMA = frozenset({"items", "additionalProperties"})
_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
)
_DEEPEST = 32


def plainly_valid(schema: Any, depth: int = 0) -> bool:
    """Whether ``schema`` is a JSON Schema the draft 2020-12 metaschema accepts, decided
    without it for the shape tool parameters usually have: only ``type``, ``properties``,
    ``required``, ``items``, ``additionalProperties``, ``enum``, ``description``, ``title``,
    ``default`` and the numeric and count bounds, each of the type the metaschema asks. False
    says only "not plainly": the full check decides (and words any error)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or depth > _DEEPEST:
        return False
    for key, value in schema.items():
        if key in _TEXT:
            ok = isinstance(value, str)
        elif key == "type":
            names = value if isinstance(value, list) and value else [value]
            ok = all(isinstance(n, str) and n in _TYPES for n in names)
            ok = ok and len(set(names)) == len(names)
        elif key == "properties":
            ok = isinstance(value, dict) and all(
                plainly_valid(v, depth + 1) for v in value.values()
            )
        elif key in _SCHEMA:
            ok = plainly_valid(value, depth + 1)
        elif key == "required":
            ok = isinstance(value, list) and all(isinstance(n, str) for n in value)
            ok = ok and len(set(value)) == len(value)
        elif key in _NUMBER:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif key in _COUNT:
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:
            ok = key in ("enum", "default") and (key != "enum" or isinstance(value, list))
        if not ok:
            return False
    return True
