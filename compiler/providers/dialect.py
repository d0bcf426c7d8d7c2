"""The provider dialect interface: what the fit stage counts with and each
``compiler.providers.<provider>`` module implements.

Internal: the public names are :class:`compiler.providers.Dialect` and
:class:`compiler.providers.LoweringOptions`.

It sits below both stages, so that fit (which must count the request the provider will see)
never imports the lower stage, and the lower stage never imports fit; the public API hands
fit the dialect :func:`compiler.providers.get_dialect` found.

A dialect owns everything provider-specific (sqlglot's dialects are the model): its request
shape (:meth:`Dialect.lower`), its cost model and whether it is exact (``exact_counts``; an
estimate counts texts with ``estimate_scale``, a per-script upper bound over a tiktoken
count, and holds back ``safety_margin`` of the budget), its model windows and output maxima,
its tokenizer choice, its tool naming rule, its option names, and what it cannot express
(:meth:`Dialect.unsupported`: a ``lower.unsupported`` warning, or an error when strict).

The response length a request asks for never exceeds the model's documented maximum output
(:attr:`Dialect.output_limits`, matched like the windows): :meth:`Dialect.within_output_limit`
clamps it when a dialect lowers (``lower.output_clamped``), passes it through for a model the
table does not know (``lower.unknown_output_limit``), and :meth:`Dialect.reserved_output` gives
the same clamped length to the budget's reserve, so what the budget keeps back for the reply
is what the request asks for.

Each sampler a dialect sends lies within the provider's documented range
(:attr:`Dialect.sampler_ranges`, :meth:`Dialect.within_sampler_ranges`): a caller's value
outside it is refused (``lower.sampler_out_of_range``), a preset's is clamped to the range
(``lower.sampler_clamped``, an error when strict).
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar, TypeVar

from compiler._base.frame import ContextFrame, Message, ToolSpec
from compiler._base.tokens import ScriptScale, TokenCounter, encoding_name_for_model
from compiler._records import record
from compiler.errors import Diagnostic, LoweringError

_V = TypeVar("_V")

ModelRequest = dict[str, Any]
"""A provider request body, ready for JSON."""


@record(frozen=True)
class LoweringOptions:
    """Generation options, each lowered under the provider's own name (None: not sent).

    ``strict`` makes what a provider cannot express an error instead of a warning;
    ``cache_stable`` asks for prompt-cache breakpoints where the provider takes them
    (Anthropic's ``cache_control``) at the end of the stable prefix. ``quiet`` names the
    options a preset supplied (the caller did not ask for them): what the provider cannot
    express of those is left out without a report, as SillyTavern sends each source only
    what it takes.
    """

    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    strict: bool = False
    cache_stable: bool = False
    quiet: frozenset[str] = frozenset()


NO_OPTIONS = LoweringOptions()


@record(frozen=True)
class SamplerRange:
    """A sampler's documented range: ``low`` to ``high``; ``open_high``: ``high`` itself is
    out (Gemini's penalties go up to, not including, 2.0)."""

    low: float
    high: float
    open_high: bool = False

    def __contains__(self, value: float) -> bool:
        if self.open_high:
            return self.low <= value < self.high
        return self.low <= value <= self.high  # NaN is in no range

    def clamp(self, value: float) -> float:
        """The nearest value in the range."""
        if value < self.low:
            return self.low
        return math.nextafter(self.high, -math.inf) if self.open_high else self.high

    def __str__(self) -> str:
        return f"{_number(self.low)} to {'below ' if self.open_high else ''}{_number(self.high)}"


def _number(value: float) -> str:
    """A bound as written: an integer whole (``2147483647``), a float short (``0.5``)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


#: OpenAI's documented ranges (Chat Completions and Responses)
OPENAI_SAMPLER_RANGES: Mapping[str, SamplerRange] = {
    "temperature": SamplerRange(0, 2),
    "top_p": SamplerRange(0, 1),
    "frequency_penalty": SamplerRange(-2, 2),
    "presence_penalty": SamplerRange(-2, 2),
}

#: The largest ``top_k`` sent (Gemini's ``topK`` is a 32-bit integer; a ``top_k`` above a
#: vocabulary's size limits nothing, so a larger preset value clamped to it sends the same)
MAX_TOP_K = 2**31 - 1
#: The range of ``top_k`` where a provider takes it (Anthropic, Gemini)
TOP_K_RANGE = SamplerRange(0, MAX_TOP_K)

#: The command-line option of each ranged sampler.
SAMPLER_FLAGS: Mapping[str, str] = {
    "temperature": "--temperature",
    "top_p": "--top-p",
    "top_k": "--top-k",
    "frequency_penalty": "--frequency-penalty",
    "presence_penalty": "--presence-penalty",
}


@record(frozen=True)
class TurnBill:
    """One request's input as a provider bills it under a :class:`CacheRule`: tokens read
    from the prompt cache, written to it, and neither (billed at the base input price);
    ``billed`` is their sum weighted by the rule's multipliers, in base-price input tokens."""

    cached: int
    written: int
    uncached: int
    billed: float


@record(frozen=True)
class CacheRule:
    """How a provider's prompt cache bills a request's input (relative to its base input
    price), as its documentation states it on ``as_of`` (``source``).

    ``explicit`` False: the provider caches every request's prefix by itself (automatic
    prefix caching); a request's cached tokens are its longest prefix shared with an earlier
    request, when at least ``minimum`` tokens, rounded down to a multiple of ``increment``.
    ``explicit`` True: only what a request marks is cached (breakpoints): the request writes
    its prefix up to its last breakpoint, and reads the prefix the previous request wrote
    when it shares all of it. ``read`` and ``write`` are the prices of a cached token and of
    a token written to the cache, as multiples of the base input price; ``ttl`` how long an
    entry lives unused."""

    minimum: int
    read: float
    write: float = 1.0
    increment: int = 1
    explicit: bool = False
    ttl: str = ""
    source: str = ""
    as_of: str = ""

    def bill(self, total: int, common: int, previous_mark: int = 0, mark: int = 0) -> TurnBill:
        """The bill of a request of ``total`` input tokens whose first ``common`` tokens
        are those of the previous request (0: none, or no previous request). Explicit
        caching: ``mark`` is where this request's last breakpoint ends (0: it has none),
        ``previous_mark`` the previous request's."""
        total = max(0, total)
        common = max(0, min(common, total))
        if not self.explicit:
            cached = common - common % self.increment if common >= self.minimum else 0
            return TurnBill(cached, 0, total - cached, total - cached + cached * self.read)
        mark = max(0, min(mark, total))
        hit = 0 < previous_mark <= common and previous_mark >= self.minimum
        cached = previous_mark if hit else 0
        written = mark - cached if mark >= self.minimum and mark > cached else 0
        uncached = total - cached - written
        return TurnBill(
            cached, written, uncached, uncached + cached * self.read + written * self.write
        )

    def describe(self) -> dict[str, Any]:
        """The rule as JSON-ready data (camelCase keys; the multipliers always floats)."""
        return {
            "caching": "explicit" if self.explicit else "automatic",
            "minimumTokens": self.minimum,
            "incrementTokens": self.increment,
            "readMultiplier": float(self.read),  # a float: written as one (2.0x, not 2x)
            "writeMultiplier": float(self.write),
            "ttl": self.ttl,
            "source": self.source,
            "asOf": self.as_of,
        }


class Dialect(ABC):
    """A provider's request format. Subclasses set ``name`` and implement the methods."""

    name: ClassVar[str]
    #: whether :meth:`count_request` is what the provider counts (else an estimate)
    exact_counts: ClassVar[bool] = True
    #: the share of the budget held back when counts are estimates
    safety_margin: ClassVar[float] = 0.0
    #: the tiktoken encoding an estimate counts every model with (None: the model's own)
    estimate_encoding: ClassVar[str | None] = None
    #: the per-script estimate over that encoding's count (None: the count as it is)
    estimate_scale: ClassVar[ScriptScale | None] = None
    #: the model compiled for when the caller names none
    default_model: ClassVar[str] = "gpt-4o"
    #: context windows by model name prefix (the longest matching prefix wins)
    windows: ClassVar[Mapping[str, int]] = {}
    #: the largest response each model may be asked for, by model name prefix like
    #: ``windows`` (a model no prefix matches has an unknown maximum)
    output_limits: ClassVar[Mapping[str, int]] = {}
    #: the request field the response length is sent in (for messages)
    output_field: ClassVar[str] = "max_output_tokens"
    #: the tool names the provider takes (definitions and calls, after :meth:`tool_name`)
    tool_name_rule: ClassVar[re.Pattern[str]] = re.compile(r"[a-zA-Z0-9_-]{1,64}")
    #: the property keys the provider takes in tool parameters (None: any key); others are
    #: renamed (:mod:`compiler.providers.tool_params`)
    property_key_rule: ClassVar[re.Pattern[str] | None] = None
    #: each sampler's documented range, by :class:`LoweringOptions` name (absent: unchecked)
    sampler_ranges: ClassVar[Mapping[str, SamplerRange]] = {}
    #: the SillyTavern preset key holding this provider's model (None: SillyTavern has none)
    preset_model_key: ClassVar[str | None] = None
    #: the provider's prompt-cache billing by model name prefix, like ``windows`` (a model
    #: no prefix matches: no caching rule is known, every input token is billed in full)
    cache_rules: ClassVar[Mapping[str, CacheRule]] = {}

    @abstractmethod
    def lower(
        self,
        frame: ContextFrame,
        model: str,
        options: LoweringOptions = NO_OPTIONS,
        report: list[Diagnostic] | None = None,
    ) -> ModelRequest:
        """The provider's JSON body for the frame (not yet shape-checked: see ``check``);
        what it cannot express goes to ``report`` (:meth:`unsupported`)."""

    @abstractmethod
    def count_request(self, request: ModelRequest, counter: TokenCounter) -> int:
        """Input tokens the provider will count for ``request`` (or their estimate)."""

    @abstractmethod
    def message_tokens(self, message: Message, counter: TokenCounter) -> int:
        """What one history message adds to the request's count."""

    def messages_tokens(self, messages: Sequence[Message], counter: TokenCounter) -> list[int]:
        """:meth:`message_tokens` of each message (a dialect may count many at once)."""
        return [self.message_tokens(m, counter) for m in messages]

    @abstractmethod
    def tools_tokens(self, tools: list[ToolSpec], counter: TokenCounter) -> int:
        """What the tool definitions add to the request's count."""

    @abstractmethod
    def check(self, request: ModelRequest) -> None:
        """Raise LoweringError when the provider would reject ``request``."""

    # -- provider facts with defaults ---------------------------------------------------
    def window(self, model: str) -> int | None:
        """The context window of ``model`` (``vendor/model-2024-08-06`` works), or None."""
        return by_prefix(self.windows, model)

    def cache_rule(self, model: str) -> CacheRule | None:
        """How the provider's prompt cache bills requests to ``model`` (matched like
        :meth:`window`), or None when no rule is known (nothing is cached)."""
        return by_prefix(self.cache_rules, model)

    def cache_view(self, request: ModelRequest) -> ModelRequest:
        """``request`` as the provider's prompt cache compares it with an earlier one (the
        body itself; a dialect whose cache markers move from turn to turn leaves them out)."""
        return request

    def output_limit(self, model: str) -> int | None:
        """The maximum output of ``model`` (matched like :meth:`window`), or None: unknown."""
        return by_prefix(self.output_limits, model)

    def reserved_output(self, model: str, requested: int | None) -> int | None:
        """The response length a request to ``model`` carries, and the budget reserves:
        ``requested`` within the model's maximum output, else the dialect's default
        (:meth:`default_output_tokens`); None when neither is sent. Reports nothing: the
        lowering does (:meth:`within_output_limit`)."""
        if requested is None:
            return self.default_output_tokens(model)
        limit = self.output_limit(model)
        return requested if limit is None else min(requested, limit)

    def within_output_limit(
        self, model: str, options: LoweringOptions, report: list[Diagnostic] | None
    ) -> LoweringOptions:
        """``options`` with the requested response length (``max_output_tokens``) within
        ``model``'s maximum output. Over it: clamped to the maximum, a
        ``lower.output_clamped`` warning (an error when strict). For a model whose maximum
        is unknown: sent as requested, a ``lower.unknown_output_limit`` warning (an error
        when strict). Nothing requested: nothing reported. A preset's value (``quiet``) is
        reported too: it is sent, not left out."""
        requested = options.max_output_tokens
        if requested is None:
            return options
        limit = self.output_limit(model)
        if limit is not None and requested <= limit:
            return options
        if limit is not None:
            self._output_report(
                "lower.output_clamped",
                f"{self.output_field} {requested:,} is over the maximum output of {model} "
                f"({limit:,} tokens)",
                f"{limit:,} sent",
                f"ask for at most {limit:,} output tokens (--max-output-tokens, or a preset's "
                "openai_max_tokens)",
                options,
                report,
            )
            return replace(options, max_output_tokens=limit)
        self._output_report(
            "lower.unknown_output_limit",
            f"the maximum output of {model} is not known to the {self.name} dialect "
            f"({self.output_field} {requested:,} requested)",
            "sent as requested",
            "check the model name: the provider refuses more than the model's maximum",
            options,
            report,
        )
        return options

    def sampler_problem(self, name: str, value: float) -> str | None:
        """Why ``value`` cannot be sent as the sampler ``name`` (out of the provider's
        documented range), or None."""
        bounds = self.sampler_ranges.get(name)
        if bounds is None or value in bounds:
            return None
        return f"{name} {_number(value)} is outside {self.name}'s range ({bounds})"

    def within_sampler_ranges(
        self, options: LoweringOptions, report: list[Diagnostic] | None, *, sends: bool = True
    ) -> LoweringOptions:
        """``options`` with every sampler within :attr:`sampler_ranges`. The caller's own
        value out of range is refused (``lower.sampler_out_of_range``); a preset's
        (``quiet``) is clamped to the range with the warning ``lower.sampler_clamped`` (an
        error when strict). ``sends`` False: the dialect leaves these samplers out
        (Anthropic), so only the caller's values are checked."""
        clamped: dict[str, float] = {}
        for name, bounds in self.sampler_ranges.items():
            value = getattr(options, name)
            problem = None if value is None else self.sampler_problem(name, value)
            if problem is None:
                continue
            flag = SAMPLER_FLAGS.get(name, name)
            if name not in options.quiet:
                raise LoweringError(
                    code="lower.sampler_out_of_range",
                    message=problem,
                    hint=f"give {flag} within {bounds}",
                )
            if not sends:
                continue
            clamped[name] = bounds.clamp(value)
            what = f"the preset's {problem}"
            hint = f"set the preset's {name} within {bounds}, or give {flag}"
            if options.strict:
                raise LoweringError(code="lower.sampler_clamped", message=what, hint=hint)
            if report is not None:
                report.append(
                    Diagnostic(
                        code="lower.sampler_clamped",
                        message=f"{what}: {clamped[name]!r} sent",
                        severity="warning",
                        hint=hint,
                    )
                )
        return replace(options, **clamped) if clamped else options  # type: ignore[arg-type]

    @staticmethod
    def _output_report(
        code: str,
        what: str,
        outcome: str,
        hint: str,
        options: LoweringOptions,
        report: list[Diagnostic] | None,
    ) -> None:
        """A response-length finding: an error when strict (nothing is sent), else a
        warning that says what was sent."""
        if options.strict:
            raise LoweringError(code=code, message=what, hint=hint)
        if report is not None:
            report.append(
                Diagnostic(code=code, message=f"{what}: {outcome}", severity="warning", hint=hint)
            )

    def default_output_tokens(self, model: str) -> int | None:
        """The response limit a request to ``model`` carries when none is given (None: the
        dialect sends none). It is reserved from the window like ``--max-output-tokens``."""
        return None

    def encoding(self, model: str) -> str:
        """The tiktoken encoding this dialect counts ``model`` with: the estimate's for a
        provider whose tokenizer is not public, else the model's own."""
        return self.estimate_encoding or encoding_name_for_model(model)

    def estimating(self, counter: TokenCounter) -> TokenCounter:
        """The counter this dialect counts with: ``counter``'s :meth:`TokenCounter.scaled`
        by :attr:`estimate_scale` (itself when the dialect has none, or when a caller's
        count function counts). The counting methods take any counter through it, so a
        plain counter handed to them counts what the fit counted."""
        return counter.scaled(self.estimate_scale)

    def tool_name(self, name: str) -> str:
        """The name the model sees for the dotted tool ``name`` (``.`` becomes ``_``)."""
        return name.replace(".", "_")

    def budget_for(self, budget: int | None) -> int | None:
        """The budget the allocator fits to: all of it for exact counts, less the safety
        margin for estimates (so the provider's own count stays within ``budget``)."""
        if budget is None or self.exact_counts:
            return budget
        return int(budget * (1 - self.safety_margin))

    def rewrite(
        self,
        report: list[Diagnostic] | None,
        options: LoweringOptions,
        code: str,
        message: str,
        hint: str,
    ) -> None:
        """Record a request whose meaning the provider would change, or that this dialect
        had to change for the provider to take it (``code``): a warning, or an error when
        strict."""
        if options.strict:
            raise LoweringError(code=code, message=message, hint=hint)
        if report is not None:
            report.append(Diagnostic(code=code, message=message, severity="warning", hint=hint))

    def unsupported(
        self, report: list[Diagnostic] | None, options: LoweringOptions, what: str, how: str
    ) -> None:
        """Record what this provider cannot express (``what``) and how it was lowered
        instead (``how``): a ``lower.unsupported`` warning, or an error when strict."""
        if what.split(" ", 1)[0] in options.quiet:  # a preset's option, not the caller's
            return
        message = f"{self.name} cannot express {what}: {how}"
        if options.strict:
            raise LoweringError(code="lower.unsupported", message=message)
        if report is not None:
            report.append(Diagnostic(code="lower.unsupported", message=message, severity="warning"))


def by_prefix(table: Mapping[str, _V], model: str) -> _V | None:
    """``table``'s value for ``model`` by its longest matching prefix: the name after any
    ``vendor/``, equal to the prefix or continuing it with ``-`` (a dated snapshot such as
    ``gpt-4o-2024-08-06``, a variant such as ``gpt-4o-mini``); None when none matches."""
    name = model.split("/")[-1]
    best = max((p for p in table if name == p or name.startswith(p + "-")), key=len, default=None)
    return table[best] if best is not None else None
