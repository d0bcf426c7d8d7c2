"""The public entry points: thin orchestration over syntax -> assemble -> fit -> lower."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.assemble import Assembler
from compiler.context.inputs import decode_text, read_bytes, sanitize, surrogate_warning
from compiler.context.run import RunContext, load_context
from compiler.errors import APCError, Diagnostic, InternalError, StrictError
from compiler.fit import (
    BudgetLedger,
    CategoryBudgets,
    Summarizer,
    SummaryCache,
    fit,
    floor_tokens,
    total_budget,
)
from compiler.fit.budgets import budget_warnings
from compiler.frame import ContextFrame, ToolSpec
from compiler.journal import Event, Journal
from compiler.lower.base import ModelRequest, get_dialect, layout
from compiler.macros import BoundTemplate, bind
from compiler.markers import check_markers
from compiler.policy.tools import ToolGate
from compiler.profile import ProfileLayers, ResolvedAgentProfile
from compiler.syntax import parse
from compiler.syntax.parser import MAX_TEMPLATE_CHARS
from compiler.tavern.assemble import (
    Mode,
    assemble_preset,
    default_mode,
    load_preset_source,
)
from compiler.tokens import counter_for, encoding_name_for_model

Source = str | Path


@dataclass
class CompileResult:
    """What a compile produced: the request body, the fitted frame, the ledger, the events.

    ``profile`` is the resolved profile bound to the run (its ``tools.visible`` covers the
    run's own tools too); ``tools`` is the concrete list of tool definitions the request
    offered the model (dotted name, provider alias, approval mark), empty when it offered none.
    """

    request: ModelRequest
    frame: ContextFrame
    ledger: BudgetLedger
    events: list[Event]
    warnings: list[Diagnostic] = field(default_factory=list)
    profile: ResolvedAgentProfile | None = None
    tools: list[ToolSpec] = field(default_factory=list)

    def tool_gate(self) -> ToolGate:
        """The run-time gate for this request: it admits exactly the tools the model was
        offered (by dotted name or provider alias), within the profile's policy and budgets;
        a request that offered no tools admits no call."""
        if self.profile is None:
            raise ValueError("this CompileResult carries no profile to gate tool calls with")
        return ToolGate(self.profile, tools=self.tools)


MAX_TEMPLATE_FILE_BYTES = 4 * MAX_TEMPLATE_CHARS
"""The largest template file read (UTF-8 takes at most 4 bytes a character)."""


def read_source(source: Source) -> tuple[str, str]:
    """(text, name): a Path, or a str naming an existing file, is read; else it is the text."""
    if isinstance(source, Path) or _names_file(source):
        path = Path(source)
        # bytes as written: CRLF kept, a UTF-8 BOM dropped; a regular file within the limit
        data = read_bytes(path, limit=MAX_TEMPLATE_FILE_BYTES, what="template")
        return decode_text(data, str(path), code="template.unreadable"), str(path)
    return str(source), "<string>"


def _names_file(text: str) -> bool:
    if "\n" in text or "<<" in text:
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # too long, NUL, ...: not a path
        return False


#: The default cache-stable step: history cut points move 32 messages at a time.
CACHE_STABLE_STEP = 32


def _step(cache_stable: bool | int) -> int:
    if cache_stable is True:
        return CACHE_STABLE_STEP
    return max(0, int(cache_stable))


def check(source: Source) -> BoundTemplate:
    """Parse and bind a template; raises TemplateError with every error of the file."""
    text, name = read_source(source)
    text, repaired = sanitize(text)  # only a str from Python can hold them
    bound = bind(parse(text, name))
    if repaired:
        warning = surrogate_warning(repaired, name)
        bound = dataclasses.replace(bound, warnings=(warning, *bound.warnings))
    return bound


def compile(
    source: Source,
    *,
    context: RunContext | dict[str, Any] | str | Path | None = None,
    provider: str = "openai",
    model: str = "gpt-4o",
    budget: int | None = None,
    encoding: str | None = None,
    max_completion_tokens: int | None = None,
    profile: ResolvedAgentProfile | ProfileLayers | str | None = None,
    mode: Mode | None = None,
    reserve: int | None = None,
    cache_stable: bool | int = False,
    summarizer: Summarizer | None = None,
    summaries: dict[str, str] | None = None,
    summary_cache: SummaryCache | None = None,
    strict: bool = False,
) -> CompileResult:
    """Compile a template (or a SillyTavern preset ``.json``) into a provider request.

    A ``.json`` source holding ``prompts``/``prompt_order`` is compiled as a SillyTavern
    chat-completion preset (:mod:`compiler.tavern.assemble`) in ``mode`` ``agent`` or
    ``legacy``; None means ``agent`` when the resolved profile's agent schema is enabled,
    else ``legacy``. ``mode`` does nothing for a template.

    ``profile`` is a resolved profile; or :class:`ProfileLayers`, or a profile id / None
    (default-writer), resolved with the layers the inputs carry (the preset's agent schema
    and the run's character card, already parsed: no input is read twice).

    Budgets (:mod:`compiler.fit`): the total is ``budget`` when given, else the smaller of
    the profile's totalContextBudget and the model's window minus ``reserve`` (default:
    ``max_completion_tokens``); the profile's category budgets apply too. ``cache_stable``
    (True, or a step in messages) moves history cut points in steps so successive turns
    keep a byte-identical prefix. ``summarizer`` is a callable ``(SummaryRequest) -> str |
    None`` (e.g. an LLM) tried before the built-in extractive one; its results are kept in
    ``summary_cache`` (a :class:`SummaryCache` the caller owns and reuses across turns; None:
    only for this compile). ``summaries`` maps a component id or kind (``"ChatHistory"``) to
    a precomputed summary.

    Warnings (the profile's, the inputs', the template's, ``context.budget_over_window``,
    world info's) are in ``result.warnings``; with ``strict`` they raise
    :class:`StrictError` (before assembly for all but world info's, found while assembling).
    """
    preset = load_preset_source(source)
    ctx = load_context(context)
    if isinstance(profile, ResolvedAgentProfile):
        resolved = profile
    else:  # every input is read once: the layers get the preset and card already parsed
        layers = profile if isinstance(profile, ProfileLayers) else ProfileLayers(profile)
        resolved = dataclasses.replace(
            layers,
            preset=layers.preset or (preset.layer_source() if preset is not None else None),
            character=layers.character or ctx.character_source(),
        ).resolve()
    # the one computation of tool visibility for this run: known tools plus the run's own
    resolved = resolved.with_run_tools(t.name for t in ctx.tools)
    total = total_budget(
        budget=budget,
        profile_total=resolved.context.total_context_budget,
        model=model,
        reserve=reserve,
        max_completion_tokens=max_completion_tokens,
    )
    budget = total.total
    journal = Journal()
    bound = check(source) if preset is None else None
    warnings = [*resolved.warnings, *ctx.warnings, *(bound.warnings if bound is not None else ())]
    warnings += budget_warnings(total, model)
    if strict and warnings:
        raise StrictError(warnings)
    name = bound.template.name if bound is not None else str(source)
    dialect = get_dialect(provider)
    counter = counter_for(encoding or encoding_name_for_model(model))
    journal.emit("context_assembly_started", template=name, provider=provider, model=model)
    try:
        assembler = Assembler(ctx, journal, profile=resolved)
        if bound is not None:
            assembler.add_template(bound)
        else:
            assert preset is not None
            assemble_preset(assembler, preset, mode=mode or default_mode(resolved, preset))
        frame = assembler.frame()
        warnings += assembler.warnings
        if strict and assembler.warnings:
            raise StrictError(assembler.warnings)
        fitted = fit(
            frame,
            dialect=dialect,
            counter=counter,
            model=model,
            budget=total,
            journal=journal,
            budgets=CategoryBudgets.from_policy(resolved.context),
            summarizer=summarizer,
            cache_stable=_step(cache_stable),
            summaries=summaries,
            summary_cache=summary_cache,
        )
        options = {"max_completion_tokens": max_completion_tokens}
        request = dialect.lower(fitted.frame, model, **options)
        dialect.check(request)
        check_markers(fitted.frame)  # no <<agent.*>> that was never expanded is sent
    except APCError as exc:
        if not journal.events or journal.events[-1].type != "context_assembly_failed":
            journal.emit("context_assembly_failed", "error", code=exc.code, message=exc.message)
        exc.details.setdefault("events", journal.events)  # so --journal records the failure
        raise
    counted = dialect.count_request(request, counter)
    ledger = fitted.ledger
    if counted != ledger.total_tokens or (budget is not None and counted > budget):
        # the allocator's promise, checked on the request itself
        raise InternalError(
            code="internal.count_mismatch",
            message=f"the request has {counted} tokens, but the ledger promised "
            f"{ledger.total_tokens} within a budget of {budget}",
            hint="this is a bug in agent-prompt-compiler; please report it with the inputs",
        )
    journal.emit(
        "context_assembled",
        components=len(fitted.frame.components),
        totalTokens=counted,
        budget=budget,
    )
    _, offered = layout(fitted.frame)
    return CompileResult(
        request, fitted.frame, ledger, journal.events, warnings, profile=resolved, tools=offered
    )


@dataclass
class Feasibility:
    """Whether what cannot be cut fits: the floor (exact tokens), the budget, the window."""

    floor_tokens: int
    budget: int | None
    window: int | None
    reserve: int
    model: str

    @property
    def problem(self) -> str | None:
        """Why the set-up cannot fit (None: it can)."""
        if self.window is not None and self.floor_tokens + self.reserve > self.window:
            return (
                f"the parts that cannot be cut need {self.floor_tokens} tokens and "
                f"{self.reserve} are reserved for the response: "
                f"{self.floor_tokens + self.reserve} > the {self.window}-token window of "
                f"{self.model}"
            )
        if self.budget is not None and self.floor_tokens > self.budget:
            return (
                f"the parts that cannot be cut need {self.floor_tokens} tokens; "
                f"the budget is {self.budget}"
            )
        return None


def check_budget(
    source: Source,
    *,
    context: RunContext | dict[str, Any] | str | Path | None = None,
    provider: str = "openai",
    model: str = "gpt-4o",
    budget: int | None = None,
    encoding: str | None = None,
    max_completion_tokens: int | None = None,
    reserve: int | None = None,
    profile: ResolvedAgentProfile | str | None = None,
    mode: Mode | None = None,
) -> Feasibility:
    """The budget set-up of a compile, checked before fitting: the required floors (exact)
    plus the reserved response against the model's window, and against the total budget."""
    full = compile(
        source,
        context=context,
        provider=provider,
        model=model,
        budget=sys.maxsize,
        encoding=encoding,
        max_completion_tokens=max_completion_tokens,
        profile=profile,
        mode=mode,
    )
    dialect = get_dialect(provider)
    counter = counter_for(encoding or encoding_name_for_model(model))
    floor = floor_tokens(full.frame, dialect=dialect, counter=counter, model=model)
    total = total_budget(
        budget=budget,
        profile_total=full.ledger.profile_budget,
        model=model,
        reserve=reserve,
        max_completion_tokens=max_completion_tokens,
    )
    return Feasibility(floor, total.total, total.window, total.reserve, model)
