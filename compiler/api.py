"""The public entry points: thin orchestration over syntax -> assemble -> fit -> lower."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.assemble import Assembler
from compiler.context.run import RunContext, load_context
from compiler.errors import APCError, Diagnostic
from compiler.fit import BudgetLedger, fit
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
) -> CompileResult:
    """Compile a template (or a SillyTavern preset ``.json``) into a provider request.

    A ``.json`` source holding ``prompts``/``prompt_order`` is compiled as a SillyTavern
    chat-completion preset (:mod:`compiler.tavern.assemble`) in ``mode`` ``agent`` or
    ``legacy``; None means ``agent`` when the resolved profile's agent schema is enabled,
    else ``legacy``. ``mode`` does nothing for a template.

    ``profile`` is a resolved profile, or a profile id / None (default-writer) resolved with
    the layers the inputs carry: the preset's agent schema and the run's character card.
    Without ``budget``, the profile's totalContextBudget applies when it sets one.
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
    if budget is None:
        budget = resolved.context.total_context_budget
    journal = Journal()
    bound = check(source) if preset is None else None
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
            frame, dialect=dialect, counter=counter, model=model, budget=budget, journal=journal
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
    total = dialect.count_request(request, counter)
    ledger = fitted.ledger
    ledger.total_tokens = total
    ledger.overhead_tokens = total - sum(e.tokens_used for e in ledger.entries)
    if budget is not None and total > budget:  # the allocator's promise, checked on the request
        raise AssertionError(f"internal: request has {total} tokens, budget {budget}")
    journal.emit(
        "context_assembled",
        components=len(fitted.frame.components),
        totalTokens=total,
        budget=budget,
    )
    warnings = [*resolved.warnings, *(bound.warnings if bound is not None else ())]
    return CompileResult(request, fitted.frame, ledger, journal.events, warnings)
