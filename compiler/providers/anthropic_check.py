"""The Anthropic request's turn and cache checks (its dialect's shape check).

Internal: used by :mod:`compiler.providers.anthropic`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from compiler.errors import LoweringError
from compiler.providers.dialect import ModelRequest

#: Anthropic's rule for tool_use ids (use ``fullmatch``: ``$`` would let a final newline by)
TOOL_ID_RE = re.compile(r"[a-zA-Z0-9_-]+")


def blocks_of(content: Any) -> list[Any]:
    """A message's content as blocks (a non-empty string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def check_turns(messages: list[dict[str, Any]]) -> None:
    """Roles alternate, content is present, every tool_use is answered by tool_result
    blocks first in the next user turn, and every tool_result answers one."""
    pending: set[str] = set()
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise LoweringError(
                code="lower.invalid_role",
                message=f"messages[{i}] has role '{role}' (Anthropic: user or assistant)",
            )
        if i and messages[i - 1].get("role") == role:
            raise LoweringError(
                code="lower.invalid_role",
                message=f"messages[{i}] repeats the role '{role}': turns must alternate",
            )
        blocks = blocks_of(msg.get("content"))
        if not blocks and not (role == "assistant" and i == len(messages) - 1):
            raise LoweringError(code="lower.empty_content", message=f"messages[{i}] has no content")
        results = _leading_results(blocks)
        calls = _check_blocks(i, role, blocks, results)
        if set(results) != pending:
            missing, extra = sorted(pending - set(results)), sorted(set(results) - pending)
            if missing:
                raise LoweringError(
                    code="lower.unanswered_tool_call",
                    message=f"tool_use ids {missing} are not answered by tool_result "
                    f"blocks at the start of messages[{i}]",
                )
            raise LoweringError(
                code="lower.orphan_tool_result",
                message=f"messages[{i}] answers tool_use ids {extra}, which the message "
                "before did not make",
            )
        pending = set(calls)
        if len(pending) < len(calls) or pending & seen:
            raise LoweringError(
                code="lower.invalid_tool_call",
                message=f"messages[{i}] reuses a tool_use id: ids must be unique",
            )
        seen |= pending
    if pending:
        raise LoweringError(
            code="lower.unanswered_tool_call",
            message=f"tool_use ids {sorted(pending)} are never answered",
        )


def _leading_results(blocks: list[Any]) -> list[str]:
    """The tool_use ids the tool_result blocks at the start of ``blocks`` answer."""
    ids: list[str] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            break
        ids.append(str(block.get("tool_use_id", "")))
    return ids


def _check_blocks(i: int, role: str, blocks: list[Any], results: list[str]) -> list[str]:
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
            if role != "assistant" or not TOOL_ID_RE.fullmatch(calls[-1]):
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


def cache_controls(request: ModelRequest) -> Iterator[Any]:
    """Every cache_control breakpoint of the request (tools, system, message blocks)."""
    if request.get("cache_control"):
        yield request["cache_control"]
    blocks = [*(request.get("tools") or []), *blocks_of(request.get("system") or [])]
    for msg in request.get("messages") or []:
        for block in blocks_of(msg.get("content")):
            blocks.append(block)
            inner = block.get("content") if isinstance(block, dict) else None
            if isinstance(inner, list):
                blocks.extend(inner)
    for block in blocks:
        if isinstance(block, dict) and block.get("cache_control"):
            yield block["cache_control"]


def _unmarked(blocks: list[Any]) -> list[Any]:
    return [
        {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
        for b in blocks
    ]


def cache_view(request: ModelRequest) -> ModelRequest:
    """The request as the prompt cache compares it: every content as blocks (a string is
    one text block, as the API reads it), without ``cache_control`` (a breakpoint that moves
    on leaves the prefix the same)."""
    view = {k: v for k, v in request.items() if k != "cache_control"}
    if "system" in view:
        view["system"] = _unmarked(blocks_of(view["system"]))
    if isinstance(view.get("tools"), list):
        view["tools"] = _unmarked(view["tools"])
    if isinstance(view.get("messages"), list):
        view["messages"] = [
            {**m, "content": _unmarked(blocks_of(m.get("content")))} if isinstance(m, dict) else m
            for m in view["messages"]
        ]
    return view
