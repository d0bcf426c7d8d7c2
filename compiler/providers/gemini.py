"""Google Gemini generateContent (POST models/{model}:generateContent).

Internal: the API is :mod:`compiler.providers`.

The request is the REST body in camelCase: ``{contents, systemInstruction?, tools?,
generationConfig?}``. It has no ``model`` key: the model is part of the URL, and a body
posted as it is must not carry it. With the official SDK,
:func:`generate_content_arguments` gives ``client.models.generate_content(**arguments)``.

How the provider-neutral conversation is lowered (what Gemini cannot express is reported
with :meth:`~compiler.providers.dialect.Dialect.unsupported`, an error with ``strict``):

- leading system/developer messages become ``systemInstruction`` parts; system text after
  the conversation has begun becomes a user text part tagged ``[System note]``, merged with
  the neighbouring user turn (reported); system text alone (no other message) is sent as
  the user turn, since ``contents`` may not be empty (reported).
- user -> ``user``, assistant -> ``model``; a tool result is a ``functionResponse`` part of
  a user turn, named after the call it answers, ``response`` ``{"content": text}`` (or
  ``{"error": text}`` for a result flagged ``isError``). Consecutive turns of
  one role are merged (their parts in order), empty texts are left out, and a message
  left with no part vanishes, so what is counted is what is sent.
- tool calls are ``functionCall`` parts ``{name, args, id}`` in the model turn; the call ids
  are sent as ``id`` in calls and responses, and a call's ``thoughtSignature`` beside it, as
  received (Gemini 3: :mod:`compiler.providers.gemini_turns`).
- a conversation that opens with the model (a card's greeting, a cut, a function call)
  gets the user turn ``[Start a new chat]`` first, as SillyTavern sends Gemini (never a
  preset's ``human_sysprompt_message``: Claude's setting). A final model turn (a prefill)
  is sent as it is, but to the models that refuse one (Gemini 3.6 Flash, 3.5 Flash-Lite
  and later), where it moves into the last user turn (``lower.prefill_unsupported``).
- function names are the provider alias every dialect uses (``.`` -> ``_``, see
  :meth:`~compiler.providers.dialect.Dialect.tool_name`): Gemini would take dots, but one name per
  tool on every provider keeps the runtime's tool gate the same.
- a message ``name`` cannot be expressed: it is written before the text, ``Ann: Hello``
  (SillyTavern's "names in content"; reported).
- tool parameters: ``parametersJsonSchema`` (the JSON Schema as written) for Gemini 2.5
  and later, which take it; the Schema subset (``parameters``,
  :mod:`compiler.providers.gemini_schema`) for older models. Either way a non-object schema is
  wrapped and parameter names Gemini refuses are renamed
  (:mod:`compiler.providers.tool_params`).
- generation options go to ``generationConfig`` (at most 5 ``stopSequences``: the rest are
  reported and left out; ``maxOutputTokens`` never over the model's maximum output,
  :data:`GEMINI_OUTPUT_LIMITS`: a larger one is clamped, ``lower.output_clamped``).
  ``topK`` above 0 only (0 is the field's unset value). ``cache_stable`` sends nothing:
  Gemini caches stable prefixes implicitly, and explicit caches are separate
  ``cachedContents`` resources.
- a frame compiled from a SillyTavern preset is lowered as SillyTavern 1.12.6 sends Google
  (:mod:`compiler.providers.gemini_tavern`): its system instruction, system text and names, turns
  joined with a blank line, its stop strings, none of the preset's penalties and seed.

Counting: Gemini's tokenizer has no public offline counterpart (exact counts come from
``models/{model}:countTokens``, online; the SDK's local tokenizer downloads its model at run
time, and no maintained package ships it), so counts are an estimate: each text counted by
:data:`compiler._base.tokens.SCRIPT_SCALE` over tiktoken's ``o200k_base`` (the per-script upper
bound measured against Claude's and cl100k_base's tokenizers, which a Gemini count is not
expected to exceed: see benchmarks/script_factors.py), plus :data:`PER_CONTENT` per turn,
:data:`PER_PART` per part, function calls, responses and declarations counted as their
JSON, :data:`REPLY_PRIMING` once; the allocator holds back :attr:`Gemini.safety_margin`
(5%) of the budget besides. The count depends only on
``contents``, ``systemInstruction`` and ``tools`` (never ``generationConfig``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import field
from typing import Any, ClassVar

from compiler._base.frame import ContextFrame, Message, ToolSpec
from compiler._base.tokens import SCRIPT_SCALE, ScriptScale, TokenCounter
from compiler._records import record
from compiler.errors import Diagnostic, LoweringError
from compiler.providers.cache_rules import GEMINI_CACHE_RULES
from compiler.providers.conversation import PREFILL_NOTE, START_CHAT, prepared
from compiler.providers.dialect import (
    NO_OPTIONS,
    TOP_K_RANGE,
    CacheRule,
    Dialect,
    LoweringOptions,
    ModelRequest,
    SamplerRange,
)
from compiler.providers.gemini_schema import (
    check_json_parameters,
    check_parameters,
    gemini_parameters,
    json_schema_model,
)
from compiler.providers.gemini_tavern import (
    TavernGemini,
    as_turn,
    join_turn,
    system_lead,
    tavern_settings,
    without_unsent,
)
from compiler.providers.gemini_turns import (
    SKIP_SIGNATURE,
    move_prefill,
    needs_signatures,
    refuses_prefill,
    sign_current_turn,
)
from compiler.providers.tool_params import GEMINI_KEYS, sent_tool

#: Context windows (input + output tokens) of Gemini models, longest prefix wins.
GEMINI_WINDOWS: dict[str, int] = {
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
}

#: The maximum output (``maxOutputTokens``) of Gemini models, longest prefix wins (``-001``,
#: ``-preview-...``, ``-lite`` and ``-8b`` variants without their own entry take their
#: family's). Source: the Gemini API's model pages (ai.google.dev/gemini-api/docs/models,
#: "Output token limit"), as of February 2026. A larger request is clamped
#: (``lower.output_clamped``); a model not matched is sent as asked
#: (``lower.unknown_output_limit``).
GEMINI_OUTPUT_LIMITS: dict[str, int] = {
    "gemini-1.5-pro": 8_192,
    "gemini-1.5-flash": 8_192,
    "gemini-2.0-flash": 8_192,
    "gemini-2.0-pro": 8_192,
    "gemini-2.5-pro": 65_536,
    "gemini-2.5-flash": 65_536,
    "gemini-2.5-flash-image": 32_768,
    "gemini-3-pro": 65_536,
    "gemini-3-pro-image": 32_768,
    "gemini-3-flash": 65_536,
    "gemini-3.1-pro": 65_536,
}

FUNCTION_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$")
SYSTEM_ROLES = frozenset({"system", "developer"})
TURN_ROLES = {"user": "user", "assistant": "model", "tool": "user"}
SYSTEM_NOTE = "[System note]\n"
MAX_STOP_SEQUENCES = 5
#: the keys of a part that carry its data (exactly one per part, else a 400)
PART_DATA = frozenset(
    {
        "text",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
    }
)

PER_CONTENT = 4  # a turn's framing (role, start and end of turn)
PER_PART = 1
REPLY_PRIMING = 3
PER_FUNCTION = 4
TOOLS_FRAME = 10
#: a tool result counted alone (:meth:`Gemini.message_tokens`) does not know its call's
#: function name: this many tokens stand for it
NAME_ALLOWANCE = 8

Part = dict[str, Any]
Content = dict[str, Any]


@record
class _Notes:
    """What one lowering could not express, reported once each at its end."""

    names: list[str] = field(default_factory=list)
    system_notes: int = 0
    schema: dict[str, list[str]] = field(default_factory=dict)
    other: list[tuple[str, str]] = field(default_factory=list)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def generate_content_arguments(request: ModelRequest, model: str) -> dict[str, Any]:
    """The keywords of the SDK's ``client.models.generate_content`` for a lowered request:
    ``model``, ``contents``, and ``config`` (``systemInstruction``, ``tools`` and the
    generation options, which the SDK sends back in their places in the body)."""
    config: dict[str, Any] = dict(request.get("generationConfig", {}))
    for key in ("systemInstruction", "tools"):
        if key in request:
            config[key] = request[key]
    return {"model": model, "contents": request["contents"], "config": config or None}


class Gemini(Dialect):
    """The generateContent request body."""

    name: ClassVar[str] = "gemini"
    preset_model_key: ClassVar[str | None] = "google_model"
    default_model: ClassVar[str] = "gemini-2.5-flash"
    exact_counts: ClassVar[bool] = False
    safety_margin: ClassVar[float] = 0.05
    estimate_encoding: ClassVar[str | None] = "o200k_base"  # see the module
    estimate_scale: ClassVar[ScriptScale | None] = SCRIPT_SCALE
    windows: ClassVar[Mapping[str, int]] = GEMINI_WINDOWS
    output_limits: ClassVar[Mapping[str, int]] = GEMINI_OUTPUT_LIMITS
    cache_rules: ClassVar[Mapping[str, CacheRule]] = GEMINI_CACHE_RULES
    output_field: ClassVar[str] = "maxOutputTokens"
    tool_name_rule: ClassVar[re.Pattern[str]] = FUNCTION_NAME_RE
    property_key_rule: ClassVar[re.Pattern[str] | None] = GEMINI_KEYS
    #: GenerationConfig's documented ranges (penalties: -2.0 up to, not including, 2.0)
    sampler_ranges: ClassVar[Mapping[str, SamplerRange]] = {
        "temperature": SamplerRange(0, 2),
        "top_p": SamplerRange(0, 1),
        "top_k": TOP_K_RANGE,
        "frequency_penalty": SamplerRange(-2, 2, open_high=True),
        "presence_penalty": SamplerRange(-2, 2, open_high=True),
    }

    def lower(
        self,
        frame: ContextFrame,
        model: str,
        options: LoweringOptions = NO_OPTIONS,
        report: list[Diagnostic] | None = None,
    ) -> ModelRequest:
        tavern = tavern_settings(frame)  # a SillyTavern preset's: as SillyTavern sends Google
        if tavern is not None:
            options = without_unsent(options)
        options = self.within_output_limit(model, options, report)
        options = self.within_sampler_ranges(options, report)
        messages, tools = prepared(frame, self, options, report)
        notes = _Notes()
        if tavern is not None:
            lead, text = system_lead(messages, tavern, model)
            system: list[Part] = [{"text": text}] if text else []
            messages = [as_turn(m, tavern) for m in messages[lead:]]
        else:
            lead = 0
            while lead < len(messages) and messages[lead]["role"] in SYSTEM_ROLES:
                lead += 1
            system = [{"text": t} for m in messages[:lead] if (t := _text(m, notes))]
            messages = messages[lead:]
        contents: list[Content] = []
        calls: dict[str, str] = {}  # call id -> function name, for the responses
        for m in messages:
            role, parts = self.turn(m, calls, notes)
            if not parts:
                continue
            if contents and contents[-1]["role"] == role:
                if tavern is not None:
                    join_turn(contents[-1]["parts"], parts)
                else:
                    contents[-1]["parts"].extend(parts)
            else:
                contents.append({"role": role, "parts": parts})
        if not contents and system:
            contents, system = [{"role": "user", "parts": system}], []
            notes.other.append(
                ("a request of system text only", "the system text was sent as the user turn")
            )
        self.turn_rules(contents, model, START_CHAT, options, report)
        body: ModelRequest = {"contents": contents}
        if system:
            body["systemInstruction"] = {"parts": system}
        if tools:
            full = json_schema_model(model)
            declared = [self.declaration(t, notes, json_schema=full) for t in tools]
            body["tools"] = [{"functionDeclarations": declared}]
        config = self.config(options, notes, tavern)
        if config:
            body["generationConfig"] = config
        self._report(notes, report, options)
        return body

    def turn_rules(
        self,
        contents: list[Content],
        model: str,
        opening: str,
        options: LoweringOptions,
        report: list[Diagnostic] | None,
    ) -> None:
        """The rules for the turns as a whole: a user turn ``opening`` first where the
        conversation opens with the model (as SillyTavern sends Gemini), a prefill the
        model refuses moved into the last user turn, and the placeholder signature where a
        Gemini 3 model needs one (:mod:`compiler.providers.gemini_turns`)."""
        if contents and contents[0]["role"] == "model":
            contents.insert(0, {"role": "user", "parts": [{"text": opening}]})
        if refuses_prefill(model) and move_prefill(contents):
            self.rewrite(
                report,
                options,
                "lower.prefill_unsupported",
                f"a final model turn (a prefill): {model} refuses one; its text was sent in "
                f"the last user turn, tagged '{PREFILL_NOTE.strip()}'",
                "Gemini 3.6 Flash, 3.5 Flash-Lite and later take no prefill: steer the "
                "reply's start with the system instruction (or use Structured Outputs)",
            )
        placed = sign_current_turn(contents) if needs_signatures(model) else []
        if placed:
            self.rewrite(
                report,
                options,
                "lower.missing_thought_signature",
                f"function call(s) of the current turn without a thoughtSignature "
                f"({', '.join(placed)}): {model} needs one; Google's placeholder "
                f"{SKIP_SIGNATURE!r} was sent, and the model's reasoning before the call is lost",
                "give each tool call the thoughtSignature Gemini returned with it (the run "
                "context's toolCalls[].thoughtSignature)",
            )

    def turn(
        self, m: Message, calls: dict[str, str], notes: _Notes | None
    ) -> tuple[str, list[Part]]:
        """One message as a turn's role and parts (``calls`` learns the calls' names)."""
        role = m["role"]
        if role == "tool":
            call_id = m.get("toolCallId", "")
            text = m.get("content") or ""
            return "user", [_response(calls.get(call_id, ""), call_id, text, m.get("isError"))]
        text = _text(m, notes)
        if role in SYSTEM_ROLES:
            if notes is not None:
                notes.system_notes += 1
            return "user", [{"text": SYSTEM_NOTE + text}] if text else []
        if role not in TURN_ROLES:
            raise LoweringError(code="lower.invalid_role", message=f"a message has role '{role}'")
        parts: list[Part] = [{"text": text}] if text else []
        for call in m.get("toolCalls") or []:
            name = self.tool_name(call["name"])
            calls[call["id"]] = name
            fn = {"name": name, "args": call["arguments"], "id": call["id"]}
            part: Part = {"functionCall": fn}
            if "thoughtSignature" in call:
                part["thoughtSignature"] = call["thoughtSignature"]
            parts.append(part)
        return TURN_ROLES[role], parts

    def declaration(
        self, t: ToolSpec, notes: _Notes | None, *, json_schema: bool = False
    ) -> dict[str, Any]:
        """The function declaration: ``parametersJsonSchema`` (the JSON Schema as it is) for
        a model that takes it (:func:`json_schema_model`), else ``parameters`` in the
        Schema subset (:func:`gemini_parameters`); none for a function without properties."""
        out: dict[str, Any] = {"name": t["alias"]}
        if t["description"]:
            out["description"] = t["description"]
        if json_schema:
            if (t["parameters"] or {}).get("properties"):
                out["parametersJsonSchema"] = t["parameters"]
            return out
        lost: list[str] = []
        parameters = gemini_parameters(t["parameters"], lost)
        if parameters is not None:
            out["parameters"] = parameters
        if lost and notes is not None:
            notes.schema[t["alias"]] = lost
        return out

    def config(
        self, options: LoweringOptions, notes: _Notes, tavern: TavernGemini | None = None
    ) -> dict[str, Any]:
        """The generation options under Gemini's names (``topK`` above 0 only: 0 is the
        field's unset value); for a SillyTavern preset's frame, SillyTavern's stop strings
        for Google first (:mod:`compiler.providers.gemini_tavern`)."""
        out: dict[str, Any] = {}
        stop = [*tavern.stop, *options.stop] if tavern is not None else list(options.stop)
        stop = list(dict.fromkeys(stop))  # each once: a repeat would take one of the 5 places
        if stop:
            out["stopSequences"] = stop[:MAX_STOP_SEQUENCES]
        if options.max_output_tokens is not None:
            out["maxOutputTokens"] = options.max_output_tokens
        for key, name in (
            ("temperature", "temperature"),
            ("top_p", "topP"),
            ("top_k", "topK"),
            ("frequency_penalty", "frequencyPenalty"),
            ("presence_penalty", "presencePenalty"),
            ("seed", "seed"),
        ):
            value = getattr(options, key)
            if value is not None and (key != "top_k" or value > 0):
                out[name] = value
        if len(stop) > MAX_STOP_SEQUENCES and not (tavern and "stop" in options.quiet):
            what = f"more than {MAX_STOP_SEQUENCES} stop sequences"
            notes.other.append((what, f"the first {MAX_STOP_SEQUENCES} were sent"))
        return out

    def _report(
        self, notes: _Notes, report: list[Diagnostic] | None, options: LoweringOptions
    ) -> None:
        if notes.system_notes:
            self.unsupported(
                report,
                options,
                f"system text after the conversation has begun ({notes.system_notes} message(s))",
                f"sent as user text tagged {SYSTEM_NOTE.strip()!r}, merged with the "
                "neighbouring user turn",
            )
        if notes.names:
            names = ", ".join(sorted(set(notes.names)))
            self.unsupported(
                report,
                options,
                f"message names ({names})",
                "each written before its text as 'Name: '",
            )
        if notes.schema:
            lost = "; ".join(f"{tool}: {', '.join(n)}" for tool, n in notes.schema.items())
            self.unsupported(
                report,
                options,
                f"JSON-Schema keywords outside its Schema subset in tool parameters ({lost})",
                "removed or rewritten (the rules: compiler/providers/gemini_schema.py)",
            )
        for what, how in notes.other:
            self.unsupported(report, options, what, how)

    # -- counting ----------------------------------------------------------------------
    def _content_tokens(self, content: Content, counter: TokenCounter) -> int:
        n = PER_CONTENT
        for part in content.get("parts", []):
            text = part.get("text")
            n += PER_PART + counter.count(text if isinstance(text, str) else _dumps(part))
        return n

    def _wire_tools_tokens(self, tools: list[dict[str, Any]], counter: TokenCounter) -> int:
        declarations = [d for tool in tools for d in tool.get("functionDeclarations", [])]
        if not declarations:
            return 0
        return TOOLS_FRAME + sum(PER_FUNCTION + counter.count(_dumps(d)) for d in declarations)

    def count_request(self, request: ModelRequest, counter: TokenCounter) -> int:
        counter = self.estimating(counter)
        n = REPLY_PRIMING
        for content in request["contents"]:
            n += self._content_tokens(content, counter)
        if "systemInstruction" in request:
            n += self._content_tokens(request["systemInstruction"], counter)
        return n + self._wire_tools_tokens(request.get("tools", []), counter)

    def message_tokens(self, message: Message, counter: TokenCounter) -> int:
        """A turn of its own (merging saves its framing): an over-estimate; system text is
        counted as the tagged note it becomes mid-conversation."""
        _, parts = self.turn(message, {}, None)
        n = self._content_tokens({"parts": parts}, self.estimating(counter))
        return n + (NAME_ALLOWANCE if message["role"] == "tool" else 0)

    def tools_tokens(self, tools: list[ToolSpec], counter: TokenCounter) -> int:
        """The larger of the two declaration forms (the model decides which is sent)."""
        sent = [sent_tool(t, GEMINI_KEYS)[0] for t in tools]
        counter = self.estimating(counter)
        forms = (
            [{"functionDeclarations": [self.declaration(t, None, json_schema=full) for t in sent]}]
            for full in (False, True)
        )
        return max(self._wire_tools_tokens(form, counter) for form in forms)

    # -- shape check -------------------------------------------------------------------
    def check(self, request: ModelRequest) -> None:
        contents = request.get("contents") or []
        if not contents:
            raise LoweringError(
                code="lower.empty_request",
                message="the request has no contents (the template produced no text)",
            )
        system = request.get("systemInstruction")
        if system is not None:
            parts = system.get("parts") or []
            if not parts or any(not _is_text(p) for p in parts):
                raise LoweringError(
                    code="lower.empty_content",
                    message="systemInstruction must have non-empty text parts",
                )
        _check_tools(request.get("tools") or [])
        pending = 0  # the function calls of the previous turn, to be answered now
        for i, content in enumerate(contents):
            pending = _check_turn(i, content, contents[i - 1] if i else None, pending)
        if pending:
            raise LoweringError(
                code="lower.unanswered_tool_call",
                message=f"the last turn's {pending} function call(s) are never answered",
            )


def _text(m: Message, notes: _Notes | None) -> str:
    """The message's text, its ``name`` written before it."""
    text = m.get("content") or ""
    if "name" in m and m["role"] != "tool":
        if notes is not None:
            notes.names.append(m["name"])
        if text:
            text = f"{m['name']}: {text}"
    return text


def _response(name: str, call_id: str, text: str, error: bool | None = False) -> Part:
    response = {"error": text} if error else {"content": text}
    out: dict[str, Any] = {"name": name, "response": response}
    if call_id:
        out["id"] = call_id
    return {"functionResponse": out}


def _is_text(part: Any) -> bool:
    return isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"] != ""


def _check_tools(tools: list[dict[str, Any]]) -> None:
    names: list[str] = []
    for tool in tools:
        for d in tool.get("functionDeclarations") or []:
            name = d.get("name", "")
            _check_name(name)
            names.append(name)
            if "parameters" in d:
                check_parameters(name, d["parameters"])
            if "parametersJsonSchema" in d:
                check_json_parameters(name, d)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise LoweringError(
            code="lower.duplicate_tool_name",
            message=f"function names {dup} are not unique after '.' became '_'",
        )


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not FUNCTION_NAME_RE.fullmatch(name):
        raise LoweringError(
            code="lower.invalid_tool_name",
            message=f"function name {name!r} must start with a letter or _ and use "
            "[a-zA-Z0-9_.:-], at most 128 characters",
        )


def _check_turn(i: int, content: Content, previous: Content | None, pending: int) -> int:
    """Check ``contents[i]``; return its function calls (what the next turn must answer)."""
    role = content.get("role")
    if role not in ("user", "model"):
        raise LoweringError(
            code="lower.invalid_role", message=f"contents[{i}] has role {role!r} (user|model)"
        )
    parts = content.get("parts") or []
    if not parts:
        raise LoweringError(code="lower.empty_content", message=f"contents[{i}] has no parts")
    for j, part in enumerate(parts):
        _check_part(i, j, part)
    calls = sum("functionCall" in p for p in parts)
    responses = sum("functionResponse" in p for p in parts)

    def bad(code: str, why: str) -> LoweringError:
        return LoweringError(code=code, message=f"contents[{i}]: {why}")

    if role == "model":
        if responses:
            raise bad("lower.invalid_tool_call", "function responses in a model turn")
        if pending:
            raise bad("lower.unanswered_tool_call", f"{pending} function call(s) not answered")
        if calls and (previous is None or previous.get("role") != "user"):
            raise bad(
                "lower.invalid_tool_call",
                "a function-call turn must come right after a user or function-response turn",
            )
        return calls
    if calls:
        raise bad("lower.invalid_tool_call", "function calls in a user turn")
    if responses < pending:
        raise bad(
            "lower.unanswered_tool_call",
            f"{responses} function response(s) for {pending} function call(s)",
        )
    if responses > pending:
        raise bad(
            "lower.orphan_tool_result",
            f"{responses} function response(s) for {pending} function call(s)",
        )
    return 0


def _check_part(i: int, j: int, part: Any) -> None:
    where = f"contents[{i}].parts[{j}]"
    data = [k for k in part if k in PART_DATA] if isinstance(part, dict) else []
    if len(data) != 1:
        raise LoweringError(
            code="lower.empty_content", message=f"{where} must have exactly one data field"
        )
    if "text" in part and not _is_text(part):
        raise LoweringError(code="lower.empty_content", message=f"{where} has empty text")
    for key, inner in (("functionCall", "args"), ("functionResponse", "response")):
        if key in part:
            value = part[key]
            _check_name(value.get("name") if isinstance(value, dict) else None)
            if not isinstance(value.get(inner), dict):
                raise LoweringError(
                    code="lower.invalid_tool_call", message=f"{where}: {inner} must be an object"
                )


DIALECT = Gemini()
