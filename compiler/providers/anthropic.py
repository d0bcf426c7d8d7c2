"""Anthropic Messages (POST /v1/messages).

Internal: the API is :mod:`compiler.providers`.

Where things go: the leading system/developer messages become the top-level ``system`` text
blocks; the rest is ``user``/``assistant`` turns, consecutive same-role messages merged into
one turn (one block each), so what is counted is what is sent. System text inside the
conversation (a history summary after the chat began, text after the chat, an injection)
becomes a user text block tagged ``[System note]`` in the neighbouring user turn. Tool calls
are ``tool_use`` blocks, their results ``tool_result`` blocks first in the next user turn. A
message ``name`` is written as a ``name: `` prefix of its text. A final assistant message (a
prefill) loses its trailing whitespace; where a prefill is refused (Claude 4.6 and later, an
unknown model, a request with tools) it becomes user text tagged
``[Begin your reply with this text]`` (``lower.prefill_unsupported``). A conversation that
opens with the assistant (a card's greeting, or a cut) gets the user turn
``[Start a new chat]`` first, as SillyTavern sends Claude (a preset's frame: its
``human_sysprompt_message``, :mod:`compiler.providers.anthropic_tavern`). A tool
result flagged ``isError`` is sent with ``is_error: true``; a call's ``thinking`` block
(``{thinking, signature}``, as the model returned it) goes back first in its assistant turn.
``max_tokens`` is always sent, clamped to the model's maximum (:data:`CLAUDE_OUTPUT_LIMITS`);
``temperature``, ``top_p`` and ``top_k`` (deprecated by the API), penalties and seed are not.
Each rewrite is reported (:meth:`Dialect.unsupported`), never made in silence, but the
opening user turn: SillyTavern sends it to every chat that opens with a greeting.

A frame compiled from a SillyTavern preset (:data:`compiler._base.frame.CLAUDE`) is laid out as
SillyTavern sends Claude instead, its samplers sent to the models that take them:
:mod:`compiler.providers.anthropic_tavern`.

Counting: no offline tokenizer matches Claude's, so counts are an estimate
(``exact_counts`` is False): every text, tool input and tool definition counted by
:data:`compiler._base.tokens.SCRIPT_SCALE` over tiktoken's ``o200k_base`` (an upper bound, per
script, of the Claude tokenizer the ``anthropic`` SDK shipped up to 0.34: about 1.05 times
``o200k_base`` for English but 1.8 for Russian and 3 to 5 for Indic scripts; the factors and
how they were measured: benchmarks/script_factors.py), plus fixed framing per request,
message and block, and the tool-use system prompt Anthropic documents (346 tokens) once when
tools are offered. The fit holds back ``safety_margin`` (5%) of the budget besides, for the
framing and for tokenizers of later models. The count depends only on ``system``,
``messages`` and ``tools`` (never on ``max_tokens``, sampling options or ``cache_control``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from compiler._base.frame import CLAUDE, ContextFrame, Message, ToolSpec
from compiler._base.tokens import SCRIPT_SCALE, ScriptScale, TokenCounter
from compiler.errors import Diagnostic, LoweringError
from compiler.providers.anthropic_check import TOOL_ID_RE, cache_controls, cache_view, check_turns
from compiler.providers.anthropic_check import blocks_of as _blocks
from compiler.providers.anthropic_limits import CLAUDE_OUTPUT_LIMITS as CLAUDE_OUTPUT_LIMITS
from compiler.providers.anthropic_limits import claude_version as claude_version
from compiler.providers.anthropic_tavern import (
    as_string,
    takes_samplers,
    tavern_layout,
    tavern_samplers,
)
from compiler.providers.anthropic_tavern import create_arguments as create_arguments
from compiler.providers.cache_rules import ANTHROPIC_CACHE_RULES
from compiler.providers.conversation import PREFILL_NOTE, START_CHAT, prepared
from compiler.providers.dialect import (
    NO_OPTIONS,
    TOP_K_RANGE,
    CacheRule,
    Dialect,
    LoweringOptions,
    ModelRequest,
    SamplerRange,
    by_prefix,
)
from compiler.providers.tool_params import ANTHROPIC_KEYS, sent_tool

#: Context windows, longest prefix wins: every Claude model (3, 3.5, 3.7, 4, 4.1, 4.5, 4.6:
#: claude-3-haiku, claude-3-5-sonnet, claude-sonnet-4-5, claude-opus-4, claude-haiku-4-5, ...)
#: has a 200,000-token standard window (the 1M-token windows need a beta header).
CLAUDE_WINDOWS: dict[str, int] = {"claude": 200_000}

#: ``max_tokens`` when none is given: the model's maximum output, capped at 16,384 so that a
#: plain (non-streaming) ``client.messages.create(**request)`` is accepted (the SDK refuses
#: non-streaming calls that may run over 10 minutes: above 21,333 tokens, or above 8,192 for
#: Opus 4 and 4.1). Longest prefix wins; ``claude`` covers the rest.
DEFAULT_MAX_TOKENS: dict[str, int] = {
    "claude": 8_192,
    "claude-3-haiku": 4_096,
    "claude-3-sonnet": 4_096,
    "claude-3-opus": 4_096,
    "claude-3-5-haiku": 8_192,
    "claude-3-5-sonnet": 8_192,
    "claude-3-7-sonnet": 16_384,
    "claude-sonnet-4": 16_384,
    "claude-haiku-4-5": 16_384,
    "claude-opus-4": 8_192,
    "claude-opus-4-1": 8_192,
    "claude-opus-4-5": 16_384,
    "claude-opus-4-6": 16_384,
}

TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
UNSAFE_ID_RE = re.compile(r"[^a-zA-Z0-9_-]")
#: Claude 4.6 and later refuse an assistant prefill (a final assistant message).
NO_PREFILL_FROM = (4, 6)
MAX_CACHE_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}

SYSTEM_NOTE = "[System note]\n"

# the estimate's framing (tokens), chosen to over- rather than under-count
PER_REQUEST = 3
PER_SYSTEM_BLOCK = 1
PER_MESSAGE = 4
PER_BLOCK = 1
PER_TOOL_USE = 10
PER_TOOL_RESULT = 8
PER_TOOL = 8
#: the tool-use system prompt Anthropic adds when tools are offered (tool_choice auto)
TOOLS_PROMPT = 346


def supports_prefill(model: str) -> bool:
    """Whether ``model`` takes a final assistant message (unknown models: assume not)."""
    version = claude_version(model)
    return version is not None and version < NO_PREFILL_FROM


def tool_use_id(call_id: str) -> str:
    """A tool_use id Anthropic accepts ([a-zA-Z0-9_-]+): the id itself when it is one, else
    its unsafe characters as ``_`` plus a hash of the original (so distinct ids stay
    distinct); the same id always gives the same result, so calls and results still pair."""
    if TOOL_ID_RE.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8")).hexdigest()[:10]
    return f"{UNSAFE_ID_RE.sub('_', call_id)[:48]}_{digest}"


def _text(text: str, note: str = "") -> dict[str, Any]:
    return {"type": "text", "text": note + text}


def _thinking(block: Any) -> dict[str, Any]:
    """A call's thinking block, sent back as received (first in its assistant turn)."""
    return {"type": "thinking", "thinking": block["thinking"], "signature": block["signature"]}


def _named(m: Message) -> str:
    text = m.get("content") or ""
    name = m.get("name")
    return f"{name}: {text}" if name and text.strip() else text


def _blocks_in(holder: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """``holder[key]`` as a list of blocks (a string becomes one text block, in place)."""
    if isinstance(holder[key], str):
        holder[key] = [_text(holder[key])]
    blocks: list[dict[str, Any]] = holder[key]
    return blocks


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Turns:
    """The wire messages being built: consecutive same-role blocks join one turn."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self.used_ids: set[str] = set()
        self.pending: dict[str, str] = {}  # a call's neutral id -> its tool_use id

    def add(self, role: str, *blocks: dict[str, Any], join: str | None = None) -> None:
        """``blocks`` at the end, in the last turn when it is ``role``'s; with ``join``, a
        text block right after a text block is joined to it with ``join`` (one text)."""
        if not blocks:
            return
        if not self.turns or self.turns[-1]["role"] != role:
            self.turns.append({"role": role, "content": []})
        content = self.turns[-1]["content"]
        for block in blocks:
            last = content[-1] if content else None
            if join is not None and last and last["type"] == block["type"] == "text":
                content[-1] = {**last, "text": last["text"] + join + block["text"]}
            else:
                content.append(block)

    def call_id(self, neutral: str) -> str:
        """A unique tool_use id for a call (an id reused by a later call gets a suffix)."""
        wire, n = tool_use_id(neutral), 1
        while wire in self.used_ids:
            n += 1
            wire = f"{tool_use_id(neutral)}_{n}"
        self.used_ids.add(wire)
        self.pending[neutral] = wire
        return wire


class Anthropic(Dialect):
    """The Messages API request body."""

    name: ClassVar[str] = "anthropic"
    preset_model_key: ClassVar[str | None] = "claude_model"
    default_model: ClassVar[str] = "claude-sonnet-4-5"
    exact_counts: ClassVar[bool] = False
    safety_margin: ClassVar[float] = 0.05
    estimate_encoding: ClassVar[str | None] = "o200k_base"  # the estimate's, not Claude's
    estimate_scale: ClassVar[ScriptScale | None] = SCRIPT_SCALE
    windows: ClassVar[Mapping[str, int]] = CLAUDE_WINDOWS
    output_limits: ClassVar[Mapping[str, int]] = CLAUDE_OUTPUT_LIMITS
    cache_rules: ClassVar[Mapping[str, CacheRule]] = ANTHROPIC_CACHE_RULES
    output_field: ClassVar[str] = "max_tokens"
    tool_name_rule: ClassVar[re.Pattern[str]] = TOOL_NAME_RE
    property_key_rule: ClassVar[re.Pattern[str] | None] = ANTHROPIC_KEYS
    #: the documented ranges of the (deprecated, not sent) temperature and top_p
    sampler_ranges: ClassVar[Mapping[str, SamplerRange]] = {
        "temperature": SamplerRange(0, 1),
        "top_p": SamplerRange(0, 1),
        "top_k": TOP_K_RANGE,
    }

    def default_output_tokens(self, model: str) -> int:
        """The ``max_tokens`` sent when none is given (:data:`DEFAULT_MAX_TOKENS`), reserved
        from the window: the API refuses input plus ``max_tokens`` over the window."""
        return by_prefix(DEFAULT_MAX_TOKENS, model) or DEFAULT_MAX_TOKENS["claude"]

    # -- lowering ----------------------------------------------------------------------
    def lower(
        self,
        frame: ContextFrame,
        model: str,
        options: LoweringOptions = NO_OPTIONS,
        report: list[Diagnostic] | None = None,
    ) -> ModelRequest:
        tavern = frame.metadata.get(CLAUDE)
        samplers = isinstance(tavern, dict) and takes_samplers(model)
        options = self.within_output_limit(model, options, report)
        options = self.within_sampler_ranges(options, report, sends=samplers)
        messages, tools = prepared(frame, self, options, report, calls_need_tools=True)
        system: str | list[dict[str, Any]]
        if isinstance(tavern, dict):  # a SillyTavern preset: as SillyTavern sends Claude
            system, turns = tavern_layout(self, messages, tavern, _Turns())
            self.final_turn(turns, model, bool(tools), options, report)
            turns = [as_string(t) for t in turns]
        else:
            system, turns = self.layout(messages, model, bool(tools), options, report)
        body: ModelRequest = {
            "model": model,
            "max_tokens": options.max_output_tokens or self.default_output_tokens(model),
        }
        if system:
            body["system"] = system
        body["messages"] = turns
        if tools:
            body["tools"] = [self.tool(t) for t in tools]
        body.update(self.sampling(options, report, samplers=samplers))
        if options.cache_stable:
            self.mark_cache(body)
        return body

    def layout(
        self,
        messages: list[Message],
        model: str,
        has_tools: bool,
        options: LoweringOptions,
        report: list[Diagnostic] | None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The system blocks and the user/assistant turns, the user turn :data:`START_CHAT` first
        where the conversation opens with the assistant (as SillyTavern sends it); what had
        to be rewritten is reported."""
        system: list[dict[str, Any]] = []
        out = _Turns()
        names = notes = 0
        leading = True
        for m in messages:
            role, text = m["role"], _named(m)
            names += bool(m.get("name")) and role != "tool" and bool(text.strip())
            if role in ("system", "developer"):
                if text.strip() and leading:
                    system.append(_text(text))
                elif text.strip():
                    out.add("user", _text(text, SYSTEM_NOTE))
                    notes += 1
                continue
            leading = False
            if role == "tool":
                out.add("user", self.tool_result(m, out))
                continue
            calls = m.get("toolCalls") or []
            blocks = [_thinking(c["thinking"]) for c in calls if "thinking" in c]
            blocks += [_text(text)] if text.strip() else []
            for call in calls:
                blocks.append(self.tool_use(call, out.call_id(call["id"])))
            out.add("user" if role == "user" else "assistant", *blocks)
        if out.turns and out.turns[0]["role"] != "user":
            out.turns.insert(0, {"role": "user", "content": [_text(START_CHAT)]})
        if names:
            how = f"{names} name(s) written as a 'name: ' prefix of the message text"
            self.unsupported(report, options, "message names", how)
        if notes:
            how = f"{notes} system message(s) sent as user text tagged '{SYSTEM_NOTE.strip()}'"
            self.unsupported(report, options, "system text inside the conversation", how)
        self.final_turn(out.turns, model, has_tools, options, report)
        return system, out.turns

    def final_turn(
        self,
        turns: list[dict[str, Any]],
        model: str,
        has_tools: bool,
        options: LoweringOptions,
        report: list[Diagnostic] | None,
    ) -> None:
        """A final assistant message (a prefill) as the model takes it
        (:meth:`end_with_user`), reported when it had to become user text."""
        if self.end_with_user(turns, model, has_tools):
            why = "a request with tools refuses one" if has_tools else f"{model} refuses one"
            self.rewrite(
                report,
                options,
                "lower.prefill_unsupported",
                f"a final assistant message (a prefill): {why}; it was sent as user text "
                f"tagged '{PREFILL_NOTE.strip()}'",
                "Claude 4.6 and later take no prefill: steer the reply's start in the system "
                "prompt or the last user turn (or use Structured Outputs)",
            )

    def end_with_user(self, turns: list[dict[str, Any]], model: str, has_tools: bool) -> int:
        """Strip the trailing whitespace of a final assistant text (a prefill), or, where
        the model or tools refuse a prefill, move it into the last user turn as a note.
        Returns 1 when it was moved."""
        if not turns or turns[-1]["role"] != "assistant":
            return 0
        last = turns[-1]["content"][-1]
        if last.get("type") == "text":
            last["text"] = last["text"].rstrip()
        if supports_prefill(model) and not has_tools:
            return 0
        prefill = turns.pop()
        texts = [b["text"] for b in prefill["content"] if b.get("type") == "text"]
        note = _text("\n\n".join(texts), PREFILL_NOTE)
        if turns:
            turns[-1]["content"].append(note)
        else:
            turns.append({"role": "user", "content": [note]})
        return 1

    def tool_use(self, call: Any, wire_id: str) -> dict[str, Any]:
        args = call.get("arguments")
        return {
            "type": "tool_use",
            "id": wire_id,
            "name": self.tool_name(call["name"]),
            "input": args if isinstance(args, dict) else {},
        }

    def tool_result(self, m: Message, out: _Turns | None = None) -> dict[str, Any]:
        neutral = str(m.get("toolCallId", ""))
        wire = out.pending.pop(neutral, None) if out is not None else None
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": wire or tool_use_id(neutral),
        }
        content = m.get("content") or ""
        if content.strip():
            block["content"] = content
        if m.get("isError"):
            block["is_error"] = True
        return block

    def tool(self, t: ToolSpec) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.tool_name(t["name"])}
        if t["description"]:
            out["description"] = t["description"]
        out["input_schema"] = t["parameters"]  # an object (:func:`prepared`, :func:`sent_tool`)
        return out

    def sampling(
        self, options: LoweringOptions, report: list[Diagnostic] | None, *, samplers: bool = False
    ) -> dict[str, Any]:
        """``stop_sequences``; with ``samplers`` (a SillyTavern preset, a model that takes
        them: :func:`takes_samplers`) ``temperature``, ``top_p`` and ``top_k`` (0 when none
        is given, SillyTavern's ``top_k_openai``), as SillyTavern sends them. Otherwise the
        other generation options are reported, not sent: the API deprecated ``temperature``
        and ``top_p`` (current models do not use them, and the SDK from v1 refuses them as
        arguments and in its request types; an older model that still honours one takes it
        through the SDK's ``extra_body``: :func:`create_arguments`), and penalties and seed
        are not Anthropic options."""
        out: dict[str, Any] = {}
        stops = [s for s in options.stop if s.strip()]
        if len(stops) < len(options.stop):
            # "stop ...": quiet for a preset's (SillyTavern users often stop on "\n")
            self.unsupported(report, options, "stop sequences of whitespace only", "not sent")
        if stops:
            out["stop_sequences"] = stops
        if samplers:
            out.update(tavern_samplers(options))
        for key in () if samplers else ("temperature", "top_p", "top_k"):
            if getattr(options, key) is not None:
                how = "not sent (a deprecated sampling parameter; extra_body for older models)"
                self.unsupported(report, options, key, how)
        for key in ("frequency_penalty", "presence_penalty", "seed"):
            if getattr(options, key) is not None:
                self.unsupported(report, options, key, "not sent")
        return out

    def cache_view(self, request: ModelRequest) -> ModelRequest:
        return cache_view(request)

    def mark_cache(self, body: ModelRequest) -> None:
        """Cache breakpoints at the ends of what the next turn's request starts with: the
        last tool, the last system block, the last block before the newest turn and the
        last block of the newest user turn (at most the 4 allowed; a final assistant turn, a
        prefill, is left after them). The next request reads all of this one through its
        newest user turn when that turn holds only what the chat sent (the provider looks
        back from its own breakpoints), else up to the turn before (text placed after the
        history moves on to the next newest turn), and writes the rest. A text sent as a
        string becomes one text block: only a block takes ``cache_control``."""
        marks = []
        if body.get("tools"):
            marks.append(body["tools"][-1])
        if body.get("system"):
            marks.append(_blocks_in(body, "system")[-1])
        messages = body["messages"]
        users = [m for m in messages if m["role"] == "user"]
        for turn in [*messages[-2:-1], *users[-1:]]:
            block = _blocks_in(turn, "content")[-1]
            if not any(block is b for b in marks):
                marks.append(block)
        for block in marks:
            block["cache_control"] = dict(EPHEMERAL)

    # -- counting ----------------------------------------------------------------------
    def _block_tokens(self, block: Any, counter: TokenCounter) -> int:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            return PER_BLOCK + counter.count(str(block.get("text", "")))
        if kind == "tool_use":
            return (
                PER_TOOL_USE
                + counter.count(str(block.get("id", "")))
                + counter.count(str(block.get("name", "")))
                + counter.count(_json(block.get("input", {})))
            )
        if kind == "tool_result":
            inner = block.get("content", "")
            parts = [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner]
            return (
                PER_TOOL_RESULT
                + counter.count(str(block.get("tool_use_id", "")))
                + sum(counter.count(str(p)) for p in parts)
            )
        return PER_BLOCK + counter.count(_json(block))

    def _wire_message_tokens(self, msg: dict[str, Any], counter: TokenCounter) -> int:
        return PER_MESSAGE + sum(
            self._block_tokens(b, counter) for b in _blocks(msg.get("content"))
        )

    def message_tokens(self, message: Message, counter: TokenCounter) -> int:
        """One neutral message's share, counted as its own turn (merging only saves), and
        system text as a tagged note (the larger of its two placements)."""
        counter = self.estimating(counter)
        role, text = message["role"], _named(message)
        if role == "tool":
            block = self.tool_result(message) | {"content": message.get("content") or ""}
            return PER_MESSAGE + self._block_tokens(block, counter)
        note = SYSTEM_NOTE if role in ("system", "developer") else ""
        calls = message.get("toolCalls") or []
        blocks = [_thinking(c["thinking"]) for c in calls if "thinking" in c]
        blocks += [_text(text, note)] if text or not calls else []
        blocks += [self.tool_use(c, tool_use_id(c["id"])) for c in calls]
        return self._wire_message_tokens({"content": blocks}, counter)

    def tools_tokens(self, tools: list[ToolSpec], counter: TokenCounter) -> int:
        sent = [self.tool(sent_tool(t, ANTHROPIC_KEYS)[0]) for t in tools]
        return self._wire_tools_tokens(sent, self.estimating(counter))

    def _wire_tools_tokens(self, tools: list[dict[str, Any]], counter: TokenCounter) -> int:
        if not tools:
            return 0
        return TOOLS_PROMPT + sum(
            PER_TOOL
            + counter.count(str(t.get("name", "")))
            + counter.count(str(t.get("description", "")))
            + counter.count(_json(t.get("input_schema", {})))
            for t in tools
        )

    def count_request(self, request: ModelRequest, counter: TokenCounter) -> int:
        counter = self.estimating(counter)
        system = request.get("system") or []
        n = PER_REQUEST + sum(
            PER_SYSTEM_BLOCK + counter.count(str(b.get("text", ""))) for b in _blocks(system)
        )
        n += sum(self._wire_message_tokens(m, counter) for m in request["messages"])
        return n + self._wire_tools_tokens(request.get("tools") or [], counter)

    # -- shape check -------------------------------------------------------------------
    def check(self, request: ModelRequest) -> None:
        if not isinstance(request.get("max_tokens"), int) or request["max_tokens"] < 1:
            raise LoweringError(
                code="lower.missing_max_tokens",
                message="an Anthropic request needs max_tokens (a positive integer)",
            )
        self._check_tools(request.get("tools") or [])
        for i, block in enumerate(_blocks(request.get("system") or [])):
            if not str(block.get("text", "")).strip():
                raise LoweringError(
                    code="lower.empty_content", message=f"system[{i}] is an empty text block"
                )
        messages = request["messages"]
        if not messages:
            raise LoweringError(
                code="lower.empty_request",
                message="the request has no user or assistant message: Anthropic needs one "
                "(system text alone is not a request)",
                hint="add the chat (<<agent.chat.history>>) or text with role user",
            )
        check_turns(messages)
        self._check_prefill(messages[-1], str(request.get("model", "")))
        marks = sum(1 for _ in cache_controls(request))
        if marks > MAX_CACHE_BREAKPOINTS:
            raise LoweringError(
                code="lower.too_many_cache_breakpoints",
                message=f"{marks} cache_control breakpoints; Anthropic accepts at most "
                f"{MAX_CACHE_BREAKPOINTS}",
            )

    def _check_tools(self, tools: list[dict[str, Any]]) -> None:
        names = [str(t.get("name", "")) for t in tools]
        for name in names:
            if not TOOL_NAME_RE.fullmatch(name):
                raise LoweringError(
                    code="lower.invalid_tool_name",
                    message=f"tool name '{name}' must match [a-zA-Z0-9_-]{{1,128}}",
                )
        if len(set(names)) != len(names):
            dup = sorted({a for a in names if names.count(a) > 1})
            raise LoweringError(
                code="lower.duplicate_tool_name",
                message=f"tool names {dup} are not unique after '.' became '_'",
            )

    def _check_prefill(self, last: dict[str, Any], model: str) -> None:
        if last.get("role") != "assistant":
            return
        if not supports_prefill(model):
            raise LoweringError(
                code="lower.invalid_prefill",
                message=f"{model or 'this model'} refuses a final assistant message (a prefill)",
            )
        blocks = _blocks(last.get("content"))
        if blocks and str(blocks[-1].get("text", "")).rstrip() != blocks[-1].get("text", ""):
            raise LoweringError(
                code="lower.invalid_prefill",
                message="the final assistant message ends with whitespace",
            )


DIALECT = Anthropic()
