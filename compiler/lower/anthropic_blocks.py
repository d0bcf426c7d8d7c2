"""The Anthropic dialect's check of one message's content blocks.

Internal: :mod:`compiler.lower.anthropic` uses it.
"""

from __future__ import annotations

import re
from typing import Any

from compiler.errors import LoweringError

TOOL_ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")


def leading_results(blocks: list[Any]) -> list[str]:
    """The tool_use ids the tool_result blocks at the start of ``blocks`` answer."""
    ids: list[str] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            break
        ids.append(str(block.get("tool_use_id", "")))
    return ids


def check_blocks(i: int, role: str, blocks: list[Any], results: list[str]) -> list[str]:
    """Text is not blank; tool_use only from the assistant, with a valid id (returned);
    tool_result only from the user, all at the start of the turn."""
    calls: list[str] = []
    for j, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise LoweringError(
                code="lower.empty_content",
                message=f"messages[{i}].content[{j}] is not a content block",
            )
        kind = block.get("type")
        if kind == "text" and not str(block.get("text", "")).strip():
            raise LoweringError(
                code="lower.empty_content",
                message=f"messages[{i}].content[{j}] is an empty text block",
            )
        if kind == "tool_use":
            calls.append(str(block.get("id", "")))
            if role != "assistant" or not TOOL_ID_RE.match(calls[-1]):
                raise LoweringError(
                    code="lower.invalid_tool_call",
                    message=f"messages[{i}].content[{j}]: a tool_use block must come from the "
                    f"assistant, its id matching [a-zA-Z0-9_-]+ (role {role}, id {calls[-1]!r})",
                )
        if kind == "tool_result" and (role != "user" or j >= len(results)):
            raise LoweringError(
                code="lower.unanswered_tool_call",
                message=f"messages[{i}].content[{j}]: tool_result blocks must come first in "
                "the user turn right after the tool_use",
            )
    return calls
