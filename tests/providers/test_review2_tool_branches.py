"""Review: the ``anyOf`` branches of one argument share one set of names at every place
below them too (their items, their properties' schemas): each branch named its own, so a
sent name meant two keys and the model's arguments came back with one lost."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.providers.tool_params import (
    ANTHROPIC_KEYS,
    GEMINI_KEYS,
    restore_arguments,
    sent_arguments,
    sent_tool,
)
from tests.providers.test_tool_schemas import tool

ITEMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "x": {
            "anyOf": [
                {
                    "type": "array",
                    "items": {"type": "object", "properties": {"a b": {"type": "string"}}},
                },
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"a_b": {"type": "string"}, "a b": {"type": "integer"}},
                    },
                },
            ]
        }
    },
}
NESTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "p": {
            "oneOf": [
                {"type": "object", "properties": {"q": {"properties": {"a b": {}}}}},
                {"type": "object", "properties": {"q": {"properties": {"a_b": {}, "a b": {}}}}},
            ]
        }
    },
}
CASES = [(ITEMS, {"x": [{"a_b": "s", "a b": 1}]}), (NESTED, {"p": {"q": {"a_b": 1, "a b": 2}}})]


@pytest.mark.parametrize("rule", [ANTHROPIC_KEYS, GEMINI_KEYS])
@pytest.mark.parametrize(("schema", "arguments"), CASES)
def test_branches_share_their_names_below(
    rule: Any, schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    _, table = sent_tool(tool(schema), rule)
    sent_names = list(table.names)
    assert len(set(table.names.values())) == len(sent_names)  # one sent name a key
    assert restore_arguments(sent_arguments(arguments, table), table) == arguments
