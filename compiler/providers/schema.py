"""Tool parameter schemas every provider takes: an object at the top.

Internal: used by the dialects in :mod:`compiler.providers`.

OpenAI wants ``"type": "object"`` at the top of a function's parameters, and Anthropic
refuses ``oneOf``/``anyOf``/``allOf`` there; Gemini's subset has no top-level combinators
either. :func:`object_parameters` turns a schema whose top is such a combinator of objects
into one object: the properties of every branch (the first definition of a name wins), and
as required what every branch requires (all that any requires, for ``allOf``). The
dialect reports the rewrite as ``lower.unsupported``.
"""

from __future__ import annotations

from typing import Any

COMBINATORS = ("oneOf", "anyOf", "allOf")


def object_parameters(schema: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``schema`` with an object at the top, and which combinator was merged (None: as
    given). A schema with neither a type nor a combinator gets ``"type": "object"``."""
    found = next((k for k in COMBINATORS if k in schema), None)
    if found is None:
        if "type" not in schema:
            return {"type": "object", **schema}, None
        return schema, None
    branches = [b for b in schema.get(found) or [] if isinstance(b, dict)]
    properties: dict[str, Any] = dict(schema.get("properties") or {})
    required_sets: list[set[str]] = []
    for branch in branches:
        for name, prop in (branch.get("properties") or {}).items():
            properties.setdefault(name, prop)
        required_sets.append({str(r) for r in branch.get("required") or []})
    if found == "allOf":
        required = set().union(*required_sets) if required_sets else set()
    else:
        required = set.intersection(*required_sets) if required_sets else set()
    required |= {str(r) for r in schema.get("required") or []}
    out: dict[str, Any] = {
        k: v for k, v in schema.items() if k not in (*COMBINATORS, "properties", "required")
    }
    out["type"] = "object"
    out["properties"] = properties
    if required:
        out["required"] = sorted(required)
    return out, found
