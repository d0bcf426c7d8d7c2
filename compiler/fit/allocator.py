"""Fitting a frame into the token budget.

The fixed part (everything but chat history) is counted through the provider's cost model;
history then fills what is left newest first, in whole units (an assistant tool call and its
results are one unit), so the oldest messages drop and history never starts with an orphaned
tool result. Only the messages that are kept are counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.errors import BudgetError
from compiler.fit.ledger import AppliedBudget, BudgetLedger, LedgerEntry
from compiler.frame import Component, ComponentKind, ContextFrame, Message
from compiler.journal import Journal
from compiler.lower.base import Dialect
from compiler.tokens import TokenCounter


@dataclass
class FitResult:
    """The fitted frame, the ledger (totals filled by the caller after lowering), events."""

    frame: ContextFrame
    ledger: BudgetLedger


def units(messages: list[Message]) -> list[list[Message]]:
    """Messages grouped into units that are kept or cut together."""
    out: list[list[Message]] = []
    for m in messages:
        if m["role"] == "tool" and out and _opens_calls(out[-1]):
            out[-1].append(m)
        else:
            out.append([m])
    return out


def _opens_calls(unit: list[Message]) -> bool:
    return bool(unit[0].get("toolCalls"))


def fit(
    frame: ContextFrame,
    *,
    dialect: Dialect,
    counter: TokenCounter,
    model: str,
    budget: int | None,
    journal: Journal,
) -> FitResult:
    """Fit ``frame`` into ``budget`` tokens of ``model``'s request (None: keep everything)."""
    ledger = BudgetLedger(
        provider=dialect.name, model=model, encoding=counter.encoding_name, budget=budget
    )
    history_ids = {c.id for c in frame.components if c.kind == ComponentKind.CHAT_HISTORY}
    fixed_frame = ContextFrame(
        components=[
            c.model_copy(update={"messages": []}) if c.id in history_ids else c
            for c in frame.components
        ],
        metadata=frame.metadata,
    )
    fixed = dialect.count_request(dialect.lower(fixed_frame, model), counter)
    if budget is not None and fixed > budget:
        journal.emit(
            "context_assembly_failed", "error", code="context.budget_exceeded", fixed=fixed
        )
        raise BudgetError(
            code="context.budget_exceeded",
            message=f"the parts that cannot be cut need {fixed} tokens; the budget is {budget}",
            hint="raise --budget, or lower the budget= of components that can be cut",
            details={"fixedTokens": fixed, "budget": budget},
        )
    remaining = None if budget is None else budget - fixed
    kept_components: list[Component] = []
    for comp in frame.components:
        if comp.id not in history_ids:
            kept_components.append(comp)
            ledger.entries.append(_entry(comp, counter, dialect))
            continue
        kept, used, counted_all = _fit_history(comp.messages or [], remaining, dialect, counter)
        if remaining is not None:
            remaining -= used
        offered = len(comp.messages or [])
        new = comp.model_copy(update={"messages": kept})
        kept_components.append(new)
        cut = offered - len(kept)
        ledger.entries.append(
            LedgerEntry(
                id=comp.id,
                kind=comp.kind.value,
                source=comp.source,
                tokens_offered=used if counted_all else None,
                tokens_used=used,
                budget=AppliedBudget(total=budget),
                action="truncated" if cut else "kept",
                strategy="truncate" if cut else None,
                reason=f"dropped the {cut} oldest messages to fit the budget" if cut else None,
                messages_offered=offered,
                messages_kept=len(kept),
            )
        )
        if cut:
            journal.emit(
                "context_component_skipped",
                component=comp.id,
                kind=comp.kind.value,
                reason="budget",
                messagesDropped=cut,
            )
    return FitResult(ContextFrame(components=kept_components, metadata=frame.metadata), ledger)


def _fit_history(
    messages: list[Message], remaining: int | None, dialect: Dialect, counter: TokenCounter
) -> tuple[list[Message], int, bool]:
    """The newest whole units that fit ``remaining``, their tokens, and whether all fit."""
    groups = units(messages)
    kept: list[list[Message]] = []
    used = 0
    for unit in reversed(groups):
        cost = sum(dialect.message_tokens(m, counter) for m in unit)
        if remaining is not None and used + cost > remaining:
            break
        kept.append(unit)
        used += cost
    kept.reverse()
    flat = [m for unit in kept for m in unit]
    return flat, used, len(kept) == len(groups)


def _entry(comp: Component, counter: TokenCounter, dialect: Dialect) -> LedgerEntry:
    if comp.kind == ComponentKind.TOOL_DEFINITIONS:
        used = dialect.tools_tokens(comp.tools or [], counter)
    elif comp.messages is not None:
        used = sum(dialect.message_tokens(m, counter) for m in comp.messages)
    else:
        used = counter.count(comp.inline_content or "")
    return LedgerEntry(
        id=comp.id,
        kind=comp.kind.value,
        source=comp.source,
        tokens_offered=used,
        tokens_used=used,
        budget=AppliedBudget(own=comp.token_budget),
    )
