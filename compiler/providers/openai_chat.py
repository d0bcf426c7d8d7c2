"""OpenAI Chat Completions (POST /v1/chat/completions).

Internal: the API is :mod:`compiler.providers`.

Token counts follow OpenAI's cookbook: 3 per message, the tokens of every string value
(role, content, name, tool_call_id), 1 more for a name, 3 for the reply priming; tool
calls count their function name and arguments. Tool definitions are an upper bound, not
the cookbook's estimate alone (:func:`function_tokens`: the larger of the cookbook's count
and the tokens of each definition's JSON).

System text goes to o1, o3, o4 and gpt-5 models (``gpt-5.1`` and dated names too) under
the role ``developer``: OpenAI's reference says developer messages replace system messages
"with o1 models and newer", and the API already treats a system message to those models as
one. Other models keep ``system``: gpt-4o and older take both alike, but OpenAI-compatible
servers and older Azure API versions may refuse ``developer``, and gpt-oss's harmony format
gives it another meaning. Both role names are one token in cl100k_base and o200k_base, so
what a message costs does not depend on the model (``message_tokens`` has none). (o1-mini
and o1-preview accept neither role; the request says ``developer``.)

``max_completion_tokens`` never exceeds the model's maximum output
(:data:`OPENAI_OUTPUT_LIMITS`, from OpenAI's model pages as of February 2026): a larger
request is clamped with the warning ``lower.output_clamped`` (an error when strict).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from operator import add, itemgetter
from typing import Any, ClassVar

from compiler._base.frame import ContextFrame, Message, ToolSpec
from compiler._base.tokens import TokenCounter
from compiler.errors import Diagnostic, LoweringError
from compiler.providers.cache_rules import OPENAI_CACHE_RULES
from compiler.providers.conversation import (
    OPENAI_PREFILL_HINT,
    prepared,
    result_text,
    written_prefill,
)
from compiler.providers.dialect import (
    NO_OPTIONS,
    OPENAI_SAMPLER_RANGES,
    CacheRule,
    Dialect,
    LoweringOptions,
    ModelRequest,
    SamplerRange,
)
from compiler.providers.tool_params import sent_tool

#: Context windows (input + output tokens) of OpenAI models, longest prefix wins.
OPENAI_WINDOWS: dict[str, int] = {
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "gpt-oss": 131_072,
}

#: The maximum output (``max_completion_tokens`` / ``max_output_tokens``) of OpenAI models,
#: longest prefix wins (a dated snapshot or a ``-mini`` without its own entry takes its
#: family's). Source: OpenAI's model pages (platform.openai.com/docs/models, "Max output
#: tokens"), as of February 2026. gpt-4 and gpt-4-32k have no separate output limit: their
#: window is given. A larger request is clamped (``lower.output_clamped``); a model not
#: matched here is sent as asked (``lower.unknown_output_limit``).
OPENAI_OUTPUT_LIMITS: dict[str, int] = {
    "gpt-3.5-turbo": 4_096,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 4_096,
    "gpt-4-1106-preview": 4_096,
    "gpt-4-0125-preview": 4_096,
    "gpt-4-vision-preview": 4_096,
    "gpt-4o": 16_384,
    "gpt-4o-2024-05-13": 4_096,
    "gpt-4o-mini": 16_384,
    "chatgpt-4o-latest": 16_384,
    "gpt-4.1": 32_768,
    "gpt-4.5": 16_384,
    "gpt-5": 128_000,
    "gpt-5-chat": 16_384,
    "gpt-5-pro": 272_000,
    "gpt-5.1": 128_000,
    "gpt-5.1-chat": 16_384,
    "gpt-5.2": 128_000,
    "gpt-5.2-chat": 16_384,
    "o1": 100_000,
    "o1-mini": 65_536,
    "o1-preview": 32_768,
    "o3": 100_000,
    "o3-mini": 100_000,
    "o4-mini": 100_000,
    "gpt-oss": 131_072,
}


MAX_CALL_ID = 40
"""Chat Completions refuses a tool-call id over 40 characters."""
MAX_STOP = 4
"""Chat Completions takes at most 4 stop sequences."""
#: sampling options reasoning models (o-series, gpt-5) refuse
REASONING_REFUSE = ("temperature", "top_p", "frequency_penalty", "presence_penalty", "stop")


def openai_options(
    options: LoweringOptions,
    max_name: str = "max_completion_tokens",
    *,
    model: str = "",
    dialect: Dialect | None = None,
    report: list[Diagnostic] | None = None,
) -> dict[str, Any]:
    """The generation options under OpenAI's names (``max_name``: Chat Completions'
    ``max_completion_tokens``, Responses' ``max_output_tokens``); with a ``dialect``, the
    response length within the model's maximum output
    (:meth:`~compiler.providers.dialect.Dialect.within_output_limit`) and the samplers within
    OpenAI's ranges (:meth:`~compiler.providers.dialect.Dialect.within_sampler_ranges`)."""
    if dialect is not None:
        options = dialect.within_output_limit(model, options, report)
        options = dialect.within_sampler_ranges(options, report)
    out: dict[str, Any] = {}
    if options.max_output_tokens is not None:
        out[max_name] = options.max_output_tokens
    for key in ("temperature", "top_p", "frequency_penalty", "presence_penalty", "seed"):
        value = getattr(options, key)
        if value is not None:
            out[key] = value
    if options.stop:
        out["stop"] = list(options.stop)
    if dialect is None:
        return out
    if options.top_k is not None:
        dialect.unsupported(report, options, "top_k", "not sent (not an OpenAI option)")
    if DEVELOPER_MODELS.match(model.split("/")[-1]):  # a reasoning model refuses sampling
        for key in REASONING_REFUSE:
            if key in out:
                del out[key]
                dialect.unsupported(
                    report, options, f"{key} for the reasoning model {model}", "not sent"
                )
    stop = out.get("stop")
    if max_name == "max_completion_tokens" and stop and len(stop) > MAX_STOP:
        out["stop"] = stop[:MAX_STOP]
        dialect.unsupported(
            report, options, f"{len(stop)} stop sequences", f"the first {MAX_STOP} sent"
        )
    return out


#: Models whose system text is sent under the role "developer" (the name after a "vendor/").
DEVELOPER_MODELS = re.compile(r"^(?:o1|o3|o4|gpt-5)(?:$|[-.])")


def system_role(model: str) -> str:
    """The role system text takes for ``model``: ``developer`` for o1, o3, o4 and gpt-5
    models, else ``system``."""
    return "developer" if DEVELOPER_MODELS.match(model.split("/")[-1]) else "system"


TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
NAME_RE = re.compile(r"[^a-zA-Z0-9_-]")
MAX_TOOLS = 128
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})

PER_MESSAGE = 3
PER_NAME = 1
REPLY_PRIMING = 3
#: the cookbook's once-per-request tokens of function definitions
TOOLS_FRAME = 12
#: framing added to a function definition's JSON count (the cookbook's per-function 7)
PER_FUNCTION_JSON = 7


def function_tokens(functions: Sequence[Mapping[str, Any]], counter: TokenCounter) -> int:
    """What function definitions ``{name, description?, parameters}`` add, 0 for none: per
    function the larger of the cookbook's estimate (:func:`cookbook_function_tokens`) and
    the tokens of its compact JSON plus :data:`PER_FUNCTION_JSON`, then 12 once. The
    cookbook reads only the top-level properties (a nested schema is undercounted: 354
    tokens of parameters JSON counted as 86); the JSON bounds what the model is shown."""
    if not functions:
        return 0
    return TOOLS_FRAME + sum(
        max(cookbook_function_tokens(fn, counter), json_function_tokens(fn, counter))
        for fn in functions
    )


def json_function_tokens(fn: Mapping[str, Any], counter: TokenCounter) -> int:
    """The tokens of ``fn``'s compact JSON (name, description, parameters) plus framing."""
    shown = {k: fn[k] for k in ("name", "description", "parameters") if k in fn}
    text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    return PER_FUNCTION_JSON + counter.count(text)


def cookbook_function_tokens(fn: Mapping[str, Any], counter: TokenCounter) -> int:
    """OpenAI's cookbook estimate of one function definition (gpt-4o family; 3 more for
    cl100k_base), without the 12 a request's functions add once."""
    n = 10 if counter.encoding_name == "cl100k_base" else 7
    desc = str(fn.get("description", "")).removesuffix(".")
    n += counter.count(f"{fn['name']}:{desc}")
    props = (fn.get("parameters") or {}).get("properties") or {}
    if not isinstance(props, dict) or not props:
        return n
    n += 3
    for key, prop in props.items():
        n += 3
        if isinstance(prop, dict) and "enum" in prop:
            n -= 3
            for item in prop["enum"]:
                n += 3 + counter.count(str(item))
        ptype = prop.get("type", "") if isinstance(prop, dict) else ""
        pdesc = str(prop.get("description", "")) if isinstance(prop, dict) else ""
        n += counter.count(f"{key}:{ptype}:{pdesc.removesuffix('.')}")
    return n


def warn_prefill(
    dialect: Dialect,
    frame: ContextFrame,
    messages: list[Message],
    options: LoweringOptions,
    report: list[Diagnostic] | None,
) -> None:
    """``lower.prefill_unsupported`` when the template or preset ends the conversation with
    assistant text (a prefill, :func:`~compiler.providers.conversation.written_prefill`): OpenAI
    sends it as an ordinary earlier message, and the model writes a new reply after it
    instead of continuing it. A chat that ends with the assistant's message is no prefill."""
    if written_prefill(frame, messages) is not None:
        dialect.rewrite(
            report,
            options,
            "lower.prefill_unsupported",
            f"{dialect.name} has no prefill: the final assistant message is sent as an "
            "earlier message, and the reply does not continue it",
            OPENAI_PREFILL_HINT,
        )


def participant_name(name: str) -> str:
    """A message ``name`` OpenAI accepts: [a-zA-Z0-9_-]{1,64} (other characters become _)."""
    return NAME_RE.sub("_", name)[:64] or "_"


def distinct_names(
    messages: list[Message], safe: Callable[[str], str] = participant_name
) -> list[Message]:
    """The messages with each speaker kept apart: a ``name`` whose provider-safe form
    (``safe``, :func:`participant_name`) has no letter or digit left, or is shared with another
    speaker's (``Аня`` and ``Оля`` both become ``___``), goes into the content as a
    ``Name: `` prefix instead of the ``name`` field."""
    if "name" not in set().union(*messages):
        return messages  # nobody named (most conversations)
    named = {m["name"] for m in messages if m.get("name") and m["role"] in _NAMED_ROLES}
    owners: dict[str, set[str]] = {}
    for name in named:
        owners.setdefault(safe(name), set()).add(name)
    unsafe = {
        name
        for safe, names in owners.items()
        for name in names
        if len(names) > 1 or not any(c.isalnum() for c in safe)
    }
    if not unsafe:
        return messages
    out: list[Message] = []
    for m in messages:
        if m.get("name") in unsafe and m["role"] in _NAMED_ROLES:
            m = dict(m)  # type: ignore[assignment]
            name = m.pop("name")
            if m.get("content"):
                m["content"] = f"{name}: {m['content']}"
        out.append(m)
    return out


_NAMED_ROLES = ("user", "assistant", "system", "developer")


_ROLE = itemgetter("role")
_CONTENT = itemgetter("content")
_TEXT_OR_NULL = frozenset({str, type(None)})


def _role_and_text(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every message is a role (not a tool result) and its content, and nothing
    else: then :meth:`OpenAIChat.message` makes a copy of each (system text kept under
    ``system``). Passes at C speed."""
    return set().union(*messages) <= {"role", "content"} and "tool" not in set(map(_ROLE, messages))


def _roles_and_texts(msgs: list[dict[str, Any]]) -> list[str] | None:
    """The roles and the non-empty texts of wire messages that are each exactly a role and
    its text (or null), as :meth:`OpenAIChat._wire_message_tokens` counts them; else None."""
    if sum(map(len, msgs)) != 2 * len(msgs):
        return None
    try:  # every message has both keys, and (by the sum) no other
        roles, contents = list(map(_ROLE, msgs)), list(map(_CONTENT, msgs))
    except (KeyError, TypeError):
        return None
    if list(map(type, roles)).count(str) != len(roles) or not _TEXT_OR_NULL.issuperset(
        map(type, contents)
    ):
        return None
    return roles + list(filter(None, contents))


class OpenAIChat(Dialect):
    """The Chat Completions request body."""

    name: ClassVar[str] = "openai"
    preset_model_key: ClassVar[str | None] = "openai_model"
    windows: ClassVar[Mapping[str, int]] = OPENAI_WINDOWS
    output_limits: ClassVar[Mapping[str, int]] = OPENAI_OUTPUT_LIMITS
    cache_rules: ClassVar[Mapping[str, CacheRule]] = OPENAI_CACHE_RULES
    output_field: ClassVar[str] = "max_completion_tokens"
    sampler_ranges: ClassVar[Mapping[str, SamplerRange]] = OPENAI_SAMPLER_RANGES
    tool_name_rule: ClassVar[re.Pattern[str]] = TOOL_NAME_RE

    def lower(
        self,
        frame: ContextFrame,
        model: str,
        options: LoweringOptions = NO_OPTIONS,
        report: list[Diagnostic] | None = None,
    ) -> ModelRequest:
        messages, tools = prepared(frame, self, options, report, id_limit=MAX_CALL_ID)
        system = system_role(model)
        if system == "system" and _role_and_text(messages):  # the wire form is a copy
            wire: list[dict[str, Any]] = [dict(m) for m in messages]
        else:
            wire = [self.message(m, system) for m in distinct_names(messages)]
        body: ModelRequest = {"model": model, "messages": wire}
        if tools:
            body["tools"] = [self.tool(t) for t in tools]
        body.update(openai_options(options, model=model, dialect=self, report=report))
        warn_prefill(self, frame, messages, options, report)
        return body

    def message(self, m: Message, system: str = "system") -> dict[str, Any]:
        """The wire message; ``system`` is the role system text takes (:func:`system_role`)."""
        role = system if m["role"] == "system" else m["role"]
        out: dict[str, Any] = {"role": role, "content": m["content"]}
        if len(m) == 2 and role != "tool":  # a role and its text: most messages
            return out
        if "name" in m and m["role"] in _NAMED_ROLES:
            out["name"] = participant_name(m["name"])
        if m.get("toolCalls"):
            if m["role"] != "assistant":
                raise LoweringError(
                    code="lower.invalid_tool_call",
                    message=f"a {m['role']} message carries tool calls; only assistant may",
                )
            out["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": self.tool_name(call["name"]),
                        "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                    },
                }
                for call in m["toolCalls"]
            ]
        if m["role"] == "tool":
            out["tool_call_id"] = m.get("toolCallId", "")
            out["content"] = result_text(m)
        return out

    def tool(self, t: ToolSpec) -> dict[str, Any]:
        fn: dict[str, Any] = {"name": self.tool_name(t["name"])}
        if t["description"]:
            fn["description"] = t["description"]
        fn["parameters"] = t["parameters"]
        return {"type": "function", "function": fn}

    # -- counting ----------------------------------------------------------------------
    def _wire_message_tokens(self, msg: dict[str, Any], counter: TokenCounter) -> int:
        if len(msg) == 2:  # a role and its text (or null): most messages
            role, content = msg.get("role"), msg.get("content")
            if type(role) is str and (content is None or type(content) is str):
                return (
                    PER_MESSAGE + counter.count(role) + (counter.count(content) if content else 0)
                )
        n = PER_MESSAGE
        for key, value in msg.items():
            if isinstance(value, str):
                n += counter.count(value)
                if key == "name":
                    n += PER_NAME
            elif key == "tool_calls":
                for call in value:
                    n += counter.count(call["function"]["name"])
                    n += counter.count(call["function"]["arguments"])
        return n

    def message_tokens(self, message: Message, counter: TokenCounter) -> int:
        content = message.get("content")
        if len(message) == 2 and type(content) is str:  # a role and its text: most messages
            return PER_MESSAGE + counter.count(message["role"]) + counter.count(content)
        return self._wire_message_tokens(self.message(message), counter)

    def messages_tokens(self, messages: Sequence[Message], counter: TokenCounter) -> list[int]:
        n = len(messages)
        try:  # C passes: each message exactly a role and its content (by the key count)
            roles, contents = list(map(_ROLE, messages)), list(map(_CONTENT, messages))
        except KeyError:
            roles = []
        if (
            len(roles) != n
            or sum(map(len, messages)) != 2 * n
            or "tool" in roles
            or not _TEXT_OR_NULL.issuperset(map(type, contents))
        ):
            return super().messages_tokens(messages, counter)
        # each a role (not a tool result) and its text or null: priced as message_tokens does
        role_price = {role: PER_MESSAGE + counter.count(role) for role in set(roles)}
        texts = counter.counts(contents if None not in contents else [c or "" for c in contents])
        return list(map(add, map(role_price.__getitem__, roles), texts))

    def tools_tokens(self, tools: list[ToolSpec], counter: TokenCounter) -> int:
        sent = [self.tool(sent_tool(t, None)[0])["function"] for t in tools]
        return function_tokens(sent, counter)

    def count_request(self, request: ModelRequest, counter: TokenCounter) -> int:
        msgs = request["messages"]
        # each a role and its text, counted by tiktoken: at C speed (a caller's count_fn is
        # asked message by message, in the order it always was)
        texts = _roles_and_texts(msgs) if counter.local else None
        if texts is not None:
            n = REPLY_PRIMING + PER_MESSAGE * len(msgs) + counter.total(texts)
        else:
            n = REPLY_PRIMING + sum(self._wire_message_tokens(m, counter) for m in msgs)
        return n + function_tokens([t["function"] for t in request.get("tools", [])], counter)

    # -- shape check -------------------------------------------------------------------
    def check(self, request: ModelRequest) -> None:
        tools = request.get("tools", [])
        if len(tools) > MAX_TOOLS:
            raise LoweringError(
                code="lower.too_many_tools",
                message=f"{len(tools)} tools; OpenAI accepts at most {MAX_TOOLS}",
            )
        for tool in tools:
            name = tool["function"]["name"]
            if not TOOL_NAME_RE.fullmatch(name):
                raise LoweringError(
                    code="lower.invalid_tool_name",
                    message=f"tool name '{name}' must match [a-zA-Z0-9_-]{{1,64}}",
                )
        if not request["messages"]:
            raise LoweringError(
                code="lower.empty_request",
                message="the request has no messages (the template produced no text)",
            )
        aliases = [t["function"]["name"] for t in tools]
        if len(set(aliases)) != len(aliases):
            dup = sorted({a for a in aliases if aliases.count(a) > 1})
            raise LoweringError(
                code="lower.duplicate_tool_name",
                message=f"tool names {dup} are not unique after '.' became '_'",
            )
        for i, msg in enumerate(request["messages"]):
            role = msg["role"]
            if role not in ROLES:
                raise LoweringError(
                    code="lower.invalid_role", message=f"messages[{i}] has role '{role}'"
                )
            if role == "tool" and not isinstance(msg.get("content"), str):
                raise LoweringError(
                    code="lower.empty_content", message=f"messages[{i}] has no content"
                )
            if role != "tool" and msg.get("content") is None and not msg.get("tool_calls"):
                raise LoweringError(
                    code="lower.empty_content", message=f"messages[{i}] has no content"
                )


DIALECT = OpenAIChat()
