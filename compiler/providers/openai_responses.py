"""OpenAI Responses (POST /v1/responses).

Internal: the API is :mod:`compiler.providers`.

The body is ``{model, input: items[], tools?, max_output_tokens?, temperature?, top_p?}``:

- System text stays in ``input`` as message items (role ``system``, or ``developer`` for the
  models :func:`~compiler.providers.openai_chat.system_role` names), where it stands; the
  ``instructions`` field is not used. The API inserts ``instructions`` as a first
  system/developer message anyway, so nothing is lost, and every message keeps one cost
  wherever it stands (the fit stage prices messages one at a time) and mid-conversation
  system text lowers like leading system text.
- Messages are ``{role, content}`` items (the API's "easy input message", no ``type``); an
  assistant message's tool calls follow it as ``{type: "function_call", call_id, name,
  arguments}`` items (``arguments`` a JSON string; an assistant message with no text
  becomes its calls alone), and a tool message is ``{type: "function_call_output", call_id,
  output}``.
- Tools are flat: ``{type: "function", name, description?, parameters, strict: false}``
  (the API's default is strict, which demands a closed schema).
- A message ``name`` is written before its text, ``Name: text`` (Responses has no ``name``
  field; reported). Tool-call ids are unique in the request: one a later turn uses again
  is sent with a suffix (``_2``) in its call and its output alike (the API refuses a
  repeated ``call_id``: "Duplicate function_call_output"). A tool result that reports a
  failure is sent as ``[error] `` and its text (no error flag). A final assistant message
  is sent as an ordinary message, ``lower.prefill_unsupported`` (OpenAI has no prefill).
- Not expressible, reported by :meth:`~compiler.providers.dialect.Dialect.unsupported` and left out:
  ``frequency_penalty``, ``presence_penalty``, ``seed`` and ``stop`` (the
  Responses API has no such fields). A ``max_output_tokens`` below 16 (the API's minimum)
  is sent as 16; one over the model's maximum output is clamped to it, as for Chat
  (:data:`~compiler.providers.openai_chat.OPENAI_OUTPUT_LIMITS`).

Token counts follow OpenAI's Chat cookbook, item by item, as the models see the same
conversation: 3 per item, plus for a message item the tokens of its role and content, for a
``function_call`` those of its name and arguments, for a ``function_call_output`` those of
its output (call ids are not counted: the model does not see them); 3 for the reply
priming; ``instructions``, when a request has them, count as a leading system message; tool
definitions are the upper bound Chat counts them with
(:func:`~compiler.providers.openai_chat.function_tokens`). The count depends on ``instructions``,
``input`` and ``tools`` only, never on the generation options.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from compiler._base.frame import ContextFrame, Message, ToolSpec
from compiler._base.tokens import TokenCounter
from compiler.errors import Diagnostic, LoweringError
from compiler.providers.cache_rules import OPENAI_CACHE_RULES
from compiler.providers.conversation import prepared, result_text
from compiler.providers.dialect import (
    NO_OPTIONS,
    OPENAI_SAMPLER_RANGES,
    CacheRule,
    Dialect,
    LoweringOptions,
    ModelRequest,
    SamplerRange,
)
from compiler.providers.openai_chat import (
    MAX_TOOLS,
    OPENAI_OUTPUT_LIMITS,
    OPENAI_WINDOWS,
    PER_MESSAGE,
    REPLY_PRIMING,
    TOOL_NAME_RE,
    function_tokens,
    openai_options,
    system_role,
    warn_prefill,
)
from compiler.providers.tool_params import sent_tool

#: The roles a message item may take (Responses has no "tool" role).
ROLES = frozenset({"user", "assistant", "system", "developer"})
#: The options Chat Completions takes and Responses does not.
NOT_IN_RESPONSES = ("frequency_penalty", "presence_penalty", "seed", "stop")
#: The smallest ``max_output_tokens`` the API accepts.
MIN_OUTPUT_TOKENS = 16
#: The string values counted, by item type (``message`` when an item has no ``type``).
COUNTED: dict[str, tuple[str, ...]] = {
    "message": ("role", "content"),
    "function_call": ("name", "arguments"),
    "function_call_output": ("output",),
}


MAX_CALL_ID = 64
"""Responses refuses a ``call_id`` over 64 characters."""


class OpenAIResponses(Dialect):
    """The Responses request body."""

    name: ClassVar[str] = "openai-responses"
    preset_model_key: ClassVar[str | None] = "openai_model"
    windows: ClassVar[Mapping[str, int]] = OPENAI_WINDOWS
    output_limits: ClassVar[Mapping[str, int]] = OPENAI_OUTPUT_LIMITS
    cache_rules: ClassVar[Mapping[str, CacheRule]] = OPENAI_CACHE_RULES
    output_field: ClassVar[str] = "max_output_tokens"
    tool_name_rule: ClassVar[re.Pattern[str]] = TOOL_NAME_RE
    #: OpenAI's ranges of the samplers Responses takes (no penalties: not sent)
    sampler_ranges: ClassVar[Mapping[str, SamplerRange]] = {
        k: v for k, v in OPENAI_SAMPLER_RANGES.items() if k not in NOT_IN_RESPONSES
    }

    def lower(
        self,
        frame: ContextFrame,
        model: str,
        options: LoweringOptions = NO_OPTIONS,
        report: list[Diagnostic] | None = None,
    ) -> ModelRequest:
        messages, tools = prepared(
            frame, self, options, report, id_limit=MAX_CALL_ID, unique_ids=True
        )
        system = system_role(model)
        body: ModelRequest = {
            "model": model,
            "input": [item for m in messages for item in self.items(m, system)],
        }
        if tools:
            body["tools"] = [self.tool(t) for t in tools]
        body.update(self.options(options, report, model))
        names = sorted({m["name"] for m in messages if m.get("name") and m["role"] in ROLES})
        if names:
            shown = ", ".join(repr(n) for n in names)
            how = "each written before its text as 'Name: '"
            self.unsupported(report, options, f"a message name ({shown})", how)
        warn_prefill(self, frame, messages, options, report)
        return body

    def options(
        self, options: LoweringOptions, report: list[Diagnostic] | None, model: str = ""
    ) -> ModelRequest:
        """The generation options Responses takes; the others reported and left out."""
        out = openai_options(options, "max_output_tokens", model=model, dialect=self, report=report)
        for key in NOT_IN_RESPONSES:
            if key in out:
                del out[key]
                self.unsupported(report, options, key, "not sent")
        limit = out.get("max_output_tokens")
        if limit is not None and limit < MIN_OUTPUT_TOKENS:
            self.unsupported(
                report,
                options,
                f"max_output_tokens {limit} (the minimum is {MIN_OUTPUT_TOKENS})",
                f"sent {MIN_OUTPUT_TOKENS}",
            )
            out["max_output_tokens"] = MIN_OUTPUT_TOKENS
        return out

    def items(self, m: Message, system: str = "system") -> list[dict[str, Any]]:
        """The input items of one message (``system``: the role system text takes)."""
        if m["role"] == "tool":
            return [
                {
                    "type": "function_call_output",
                    "call_id": m.get("toolCallId", ""),
                    "output": result_text(m),
                }
            ]
        calls = m.get("toolCalls") or []
        if calls and m["role"] != "assistant":
            raise LoweringError(
                code="lower.invalid_tool_call",
                message=f"a {m['role']} message carries tool calls; only assistant may",
            )
        out: list[dict[str, Any]] = []
        if not calls or m["content"]:
            role = system if m["role"] == "system" else m["role"]
            out.append({"role": role, "content": _named(m)})
        out.extend(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": self.tool_name(call["name"]),
                "arguments": json.dumps(call["arguments"], ensure_ascii=False),
            }
            for call in calls
        )
        return out

    def tool(self, t: ToolSpec) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "function", "name": self.tool_name(t["name"])}
        if t["description"]:
            out["description"] = t["description"]
        out["parameters"] = t["parameters"]
        out["strict"] = False
        return out

    # -- counting ----------------------------------------------------------------------
    def _item_tokens(self, item: Mapping[str, Any], counter: TokenCounter) -> int:
        n = PER_MESSAGE
        for key in COUNTED.get(item.get("type", "message"), ()):
            value = item.get(key)
            if isinstance(value, str):
                n += counter.count(value)
        return n

    def message_tokens(self, message: Message, counter: TokenCounter) -> int:
        return sum(self._item_tokens(item, counter) for item in self.items(message))

    def tools_tokens(self, tools: list[ToolSpec], counter: TokenCounter) -> int:
        return function_tokens([self.tool(sent_tool(t, None)[0]) for t in tools], counter)

    def count_request(self, request: ModelRequest, counter: TokenCounter) -> int:
        n = REPLY_PRIMING
        instructions = request.get("instructions")
        if isinstance(instructions, str):
            n += self._item_tokens({"role": "system", "content": instructions}, counter)
        for item in request["input"]:
            n += self._item_tokens(item, counter)
        return n + function_tokens(request.get("tools", []), counter)

    # -- shape check -------------------------------------------------------------------
    def check(self, request: ModelRequest) -> None:
        tools = request.get("tools", [])
        if len(tools) > MAX_TOOLS:
            raise LoweringError(
                code="lower.too_many_tools",
                message=f"{len(tools)} tools; OpenAI accepts at most {MAX_TOOLS}",
            )
        for tool in tools:
            if not TOOL_NAME_RE.fullmatch(tool["name"]):
                raise LoweringError(
                    code="lower.invalid_tool_name",
                    message=f"tool name '{tool['name']}' must match [a-zA-Z0-9_-]{{1,64}}",
                )
        aliases = [t["name"] for t in tools]
        if len(set(aliases)) != len(aliases):
            dup = sorted({a for a in aliases if aliases.count(a) > 1})
            raise LoweringError(
                code="lower.duplicate_tool_name",
                message=f"tool names {dup} are not unique after '.' became '_'",
            )
        if not request["input"]:
            raise LoweringError(
                code="lower.empty_request",
                message="the request has no input items (the template produced no text)",
            )
        pending: set[str] = set()
        made: set[str] = set()
        for i, item in enumerate(request["input"]):
            kind = item.get("type", "message")
            if kind == "function_call":
                if item["call_id"] in made:
                    raise LoweringError(
                        code="lower.duplicate_tool_call_id",
                        message=f"input[{i}] uses the call_id {item['call_id']!r} again: "
                        "Responses wants each call_id once in a request",
                    )
                made.add(item["call_id"])
                pending.add(item["call_id"])
            elif kind == "function_call_output":
                if item.get("call_id") not in pending:
                    raise LoweringError(
                        code="lower.orphan_tool_result",
                        message=f"input[{i}] answers function call {item.get('call_id')!r}, "
                        "which no earlier function_call item made (or it was answered already)",
                    )
                pending.discard(item["call_id"])
                if not isinstance(item.get("output"), str):
                    raise LoweringError(
                        code="lower.empty_content", message=f"input[{i}] has no output"
                    )
            elif item.get("role") not in ROLES:
                raise LoweringError(
                    code="lower.invalid_role",
                    message=f"input[{i}] has role '{item.get('role')}'",
                )
            elif not isinstance(item.get("content"), str):
                raise LoweringError(
                    code="lower.empty_content", message=f"input[{i}] has no content"
                )
        if pending:
            raise LoweringError(
                code="lower.unanswered_tool_call",
                message=f"function calls {sorted(pending)} have no function_call_output",
            )


def _named(m: Message) -> str | None:
    """A message's text with its speaker's ``name`` before it, ``Name: text`` (Responses
    has no ``name``: without it two speakers would read as one)."""
    text, name = m["content"], m.get("name")
    return f"{name}: {text}" if name and text and text.strip() else text


DIALECT = OpenAIResponses()
