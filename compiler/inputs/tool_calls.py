"""A run's tool calls (in its chat) as the frame's :class:`~compiler._base.frame.ToolCall`.

Internal: used by the assemble stage.
"""

from __future__ import annotations

from typing import Any

from compiler._base.frame import ToolCall
from compiler.errors import ContextError
from compiler.inputs.read import parse_json


def tool_call(raw: dict[str, Any], file: str, where: str) -> ToolCall:
    """A run's tool call, flat ``{id, name, arguments}`` or OpenAI's ``{id, function: {...}}``,
    with the provider signature it came back with, if any: Gemini's ``thoughtSignature`` (a
    string) and Anthropic's ``thinking`` block (``{thinking, signature}``), both sent back
    as received; ``file`` and ``where`` (``chat[3].toolCalls[0]``) locate it for errors."""
    fn = raw.get("function", raw)
    call_id = raw.get("id")

    def bad(why: str, code: str = "context.invalid_context") -> ContextError:
        return ContextError(
            code=code, message=f"tool call {call_id!r}: {why}", file=file, path=where
        )

    if not isinstance(fn, dict):
        raise bad("'function' must be an object")
    if not isinstance(call_id, str) or not call_id:
        raise bad("needs a non-empty string 'id'")
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise bad("needs a non-empty 'name'")
    arguments = fn.get("arguments", {})
    if isinstance(arguments, str):
        try:  # the strict reader: no NaN, no huge integers, bounded nesting
            arguments = parse_json(arguments or "{}", file, what="tool-call arguments")
        except ContextError as exc:
            raise bad(f"arguments: {exc.message}", "context.invalid_json") from None
    if not isinstance(arguments, dict):
        raise bad("arguments must be a JSON object")
    call: ToolCall = {"id": call_id, "name": name, "arguments": arguments}
    signature = raw.get("thoughtSignature")
    if signature is not None:
        if not isinstance(signature, str) or not signature:
            raise bad("'thoughtSignature' must be a non-empty string")
        call["thoughtSignature"] = signature
    thinking = raw.get("thinking")
    if thinking is not None:
        if not (
            isinstance(thinking, dict)
            and isinstance(thinking.get("thinking"), str)
            and isinstance(thinking.get("signature"), str)
            and thinking["signature"]
        ):
            raise bad("'thinking' must be Anthropic's block {thinking, signature} (strings)")
        call["thinking"] = {"thinking": thinking["thinking"], "signature": thinking["signature"]}
    return call
