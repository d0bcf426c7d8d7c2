"""The public entry points: thin orchestration over syntax -> assemble -> fit -> lower."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.assemble import Assembler
from compiler.context.run import RunContext, load_context
from compiler.errors import APCError, Diagnostic, StrictError
from compiler.fit import (
    BudgetLedger,
    CategoryBudgets,
    Summarizer,
    fit,
    floor_tokens,
    total_budget,
)
from compiler.fit.budgets import budget_warnings
from compiler.frame import ContextFrame
from compiler.journal import Event, Journal
from compiler.lower.base import ModelRequest, get_dialect
from compiler.macros import BoundTemplate, bind
from compiler.profile import ResolvedAgentProfile, resolve_profile
from compiler.syntax import parse
from compiler.tavern.assemble import (
    Mode,
    assemble_preset,
    check_markers,
    default_mode,
    load_preset_source,
)
from compiler.tokens import counter_for, encoding_name_for_model

Source = str | Path


@dataclass
class CompileResult:
    """What a compile produced: the request body, the fitted frame, the ledger, the events."""

    request: ModelRequest
    frame: ContextFrame
    ledger: BudgetLedger
    events: list[Event]
    warnings: list[Diagnostic] = field(default_factory=list)


def read_source(source: Source) -> tuple[str, str]:
    """(text, name): a Path, or a str naming an existing file, is read; else it is the text."""
    if isinstance(source, Path) or _names_file(source):
        path = Path(source)
        try:  # bytes as written: CRLF kept, a UTF-8 BOM dropped
            return path.read_bytes().decode("utf-8-sig"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise APCError(
                code="template.unreadable", message=f"cannot read template: {exc}", file=str(path)
            ) from None
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
    return bind(parse(text, name))


def compile(
    source: Source,
    *,
    context: RunContext | dict[str, Any] | str | Path | None = None,
    provider: str = "openai",
    model: str = "gpt-4o",
    budget: int | None = None,
    encoding: str | None = None,
    max_completion_tokens: int | None = None,
    profile: ResolvedAgentProfile | str | None = None,
    mode: Mode | None = None,
    reserve: int | None = None,
    cache_stable: bool | int = False,
    summarizer: Summarizer | None = None,
    summaries: dict[str, str] | None = None,
    strict: bool = False,
) -> CompileResult:
    """Compile a template (or a SillyTavern preset ``.json``) into a provider request.

    A ``.json`` source holding ``prompts``/``prompt_order`` is compiled as a SillyTavern
    chat-completion preset (:mod:`compiler.tavern.assemble`) in ``mode`` ``agent`` or
    ``legacy``; None means ``agent`` when the resolved profile's agent schema is enabled,
    else ``legacy``. ``mode`` does nothing for a template.

    ``profile`` is a resolved profile, or a profile id / None (default-writer) resolved with
    the layers the inputs carry: the preset's agent schema and the run's character card.

    Budgets (:mod:`compiler.fit`): the total is ``budget`` when given, else the smaller of
    the profile's totalContextBudget and the model's window minus ``reserve`` (default:
    ``max_completion_tokens``); the profile's category budgets apply too. ``cache_stable``
    (True, or a step in messages) moves history cut points in steps so successive turns
    keep a byte-identical prefix. ``summarizer`` is a callable ``(SummaryRequest) -> str |
    None`` (e.g. an LLM) tried before the built-in extractive one; ``summaries`` maps a
    component id or kind (``"ChatHistory"``) to a precomputed summary.

    Warnings (the profile's, the template's, ``context.budget_over_window``) are in
    ``result.warnings``; with ``strict`` they raise :class:`StrictError` before assembly.
    """
    preset = load_preset_source(source)
    ctx = load_context(context)
    if isinstance(profile, ResolvedAgentProfile):
        resolved = profile
    else:
        resolved = resolve_profile(
            profile_id=profile,
            preset=Path(source) if preset is not None else None,
            character=ctx.character_source(),
        )
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
    warnings = [*resolved.warnings, *(bound.warnings if bound is not None else ())]
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
        )
        options = {"max_completion_tokens": max_completion_tokens}
        request = dialect.lower(fitted.frame, model, **options)
        dialect.check(request)
        if preset is not None:
            check_markers(request, fitted.frame)
    except APCError as exc:
        if not journal.events or journal.events[-1].type != "context_assembly_failed":
            journal.emit("context_assembly_failed", "error", code=exc.code, message=exc.message)
        exc.details.setdefault("events", journal.events)  # so --journal records the failure
        raise
    counted = dialect.count_request(request, counter)
    ledger = fitted.ledger
    if counted != ledger.total_tokens or (budget is not None and counted > budget):
        # the allocator's promise, checked on the request itself
        raise AssertionError(f"internal: request has {counted} tokens, ledger {ledger}")
    journal.emit(
        "context_assembled",
        components=len(fitted.frame.components),
        totalTokens=counted,
        budget=budget,
    )
    return CompileResult(request, fitted.frame, ledger, journal.events, warnings)


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
