"""A tool definition name ending in a newline is refused by every dialect's own check:
``^...$`` matches before a final newline, so each name is matched whole."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.errors import LoweringError
from compiler.providers import get_dialect

USER = {"role": "user", "content": "hi"}
OBJECT = {"type": "object"}
REQUESTS: dict[str, dict[str, Any]] = {
    "openai": {
        "model": "gpt-4o",
        "messages": [USER],
        "tools": [{"type": "function", "function": {"name": "roll\n", "parameters": OBJECT}}],
    },
    "openai-responses": {
        "model": "gpt-4o",
        "input": [USER],
        "tools": [{"type": "function", "name": "roll\n", "parameters": OBJECT}],
    },
    "anthropic": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [USER],
        "tools": [{"name": "roll\n", "input_schema": OBJECT}],
    },
    "gemini": {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "roll\n"}]}],
    },
}


@pytest.mark.parametrize("provider", sorted(REQUESTS))
def test_a_tool_name_with_a_final_newline_is_refused(provider: str) -> None:
    with pytest.raises(LoweringError):
        get_dialect(provider).check(REQUESTS[provider])
