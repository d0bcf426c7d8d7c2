"""Recording a fit: the budget events of the grant run that stands (``context_component_cut``,
``context_component_skipped``), the budget ledger, and the error (with the ledger) when a
budget cannot be met.

Internal: part of the allocator.
"""

from __future__ import annotations

from typing import Any

from compiler._base.frame import ComponentKind
from compiler._base.journal import Journal
from compiler._base.tokens import TokenCounter
from compiler.errors import BudgetError, Diagnostic
from compiler.fit.budgets import CATEGORIES, TotalBudget, messages_shares
from compiler.fit.items import Item, Outcome
from compiler.fit.ledger import BudgetLedger, CategoryTotal, LedgerEntry
from compiler.providers.dialect import Dialect

#: kinds whose loss a reader would miss: dropping one whole is a warning
MISSED = frozenset(
    {ComponentKind.CHARACTER_CARD, ComponentKind.USER_PROFILE, ComponentKind.WORLD_INFO}
)


class Recorder:
    """The journal and ledger of one fit."""

    def __init__(
        self,
        journal: Journal,
        *,
        dialect: Dialect,
        counter: TokenCounter,
        model: str,
        total: TotalBudget,
        budgets: dict[str, int | None],
        step: int,
    ) -> None:
        self.journal = journal
        self.dialect = dialect
        self.counter = counter
        self.model = model
        self.total = total
        self.budgets = budgets
        self.step = step
        #: the budget events of the current grant run: (type, payload)
        self.events: list[tuple[str, dict[str, Any]]] = []

    # -- the journal -------------------------------------------------------------------
    def reset(self) -> None:
        """A new grant run: the events of the last one are void."""
        self.events = []

    def budget_event(self, item: Item) -> None:
        """The journal's event (reason ``budget``) for a component the budget changed, held
        until the grant run stands: ``context_component_skipped`` when nothing of it is left,
        ``context_component_cut`` when it is sent shorter (truncated or summarized)."""
        fate = item.outcome
        if fate.skipped is None:
            return
        self.events.append(
            (
                "context_component_skipped" if fate.out is None else "context_component_cut",
                {
                    "component": item.comp.id,
                    "kind": item.comp.kind.value,
                    "reason": "budget",
                    "action": fate.action,
                    **fate.skipped,
                },
            )
        )

    def flush(self) -> None:
        """Into the journal: the events of the grant run that stands (runs that were over the
        budget leave none)."""
        for type_, payload in self.events:
            self.journal.emit(type_, **payload)
        self.events = []

    def failure(
        self,
        items: list[Item],
        item: Item | None,
        message: str,
        limit: int | None,
        hint: str | None = None,
    ) -> BudgetError:
        """``context.budget_exceeded`` with the ledger so far; the events of the run and the
        failure go into the journal."""
        ledger = self.ledger(items)
        for e in ledger.entries:
            if item is not None and e.id == item.comp.id:
                e.action, e.reason = "failed", message
        self.flush()
        self.journal.emit(
            "context_assembly_failed",
            "error",
            code="context.budget_exceeded",
            component=item.comp.id if item else None,
        )
        return BudgetError(
            code="context.budget_exceeded",
            message=message,
            hint=hint
            or "raise --budget (or the category budget), give the component a cutting "
            "strategy (strategy=truncate|summarize) or required=false, or let the profile's "
            "context.required name fewer parts (character, persona, newestTurn, task)",
            details={
                "budget": self.total.total,
                "limit": limit,
                "component": item.comp.id if item else None,
                "ledger": ledger.model_dump(mode="json", by_alias=True),
            },
        )

    # -- what a reader would miss ---------------------------------------------------------
    def losses(self, items: list[Item]) -> list[Diagnostic]:
        """Warnings for what the budget left out that a reader of the request would miss:
        ``context.component_dropped`` for a character card, persona or world-info block
        dropped whole, ``context.no_chat_message`` when a chat history was offered and not
        one of its messages is sent (a summary alone, or nothing)."""
        out = []
        budget = self.total.total
        for i in items:
            comp, fate = i.comp, i.outcome
            where = comp.source
            if comp.kind in MISSED and fate.action == "dropped" and fate.out is None:
                out.append(
                    Diagnostic(
                        code="context.component_dropped",
                        severity="warning",
                        message=f"the budget left out {comp.id} ({comp.kind.value}) whole",
                        file=where,
                        hint=f"{fate.reason}; raise the budget ({budget} tokens) or require "
                        "it (the profile's context.required, or required=true)",
                    )
                )
            elif (
                comp.kind == ComponentKind.CHAT_HISTORY
                and (fate.out is None or fate.messages_kept == 0)
                and any(not m.get("origin") for m in comp.messages or ())
            ):
                out.append(
                    Diagnostic(
                        code="context.no_chat_message",
                        severity="warning",
                        message=f"the request carries no message of the chat ({comp.id}): "
                        "the budget cut them all",
                        file=where,
                        hint=f"{fate.reason or 'cut to fit the budget'}; raise the budget "
                        f"({budget} tokens), or keep the newest turn (the profile's "
                        "context.required: newestTurn)",
                    )
                )
        return out

    # -- the ledger --------------------------------------------------------------------
    def split(self, item: Item) -> dict[str, int]:
        """What ``item`` uses per budget category, summaries apart: a chat history's text in
        other categories (:data:`~compiler.fit.budgets.IN_CHAT`) counted in those. The history
        walk splits what it keeps as it goes; a history kept or dropped whole is split here."""
        fate = item.outcome
        shares = None
        if fate.shares is None and item.comp.kind == ComponentKind.CHAT_HISTORY and fate.used:
            messages = fate.out.messages if fate.out is not None else None
            shares = messages_shares(messages or (), self.dialect, self.counter)
        return item.by_category(shares)

    def ledger(self, items: list[Item], total_tokens: int | None = None) -> BudgetLedger:
        """The ledger of ``items``; with the request's exact count, its totals too."""
        splits = [self.split(i) for i in items]
        entries = [entry(i, split) for i, split in zip(items, splits, strict=True)]
        categories = {name: CategoryTotal(budget=self.budgets.get(name)) for name in CATEGORIES}
        for i, split in zip(items, splits, strict=True):
            for name, used in split.items():
                categories[name].used += used
            categories["summary"].used += i.outcome.summary_tokens
        ledger = BudgetLedger(
            provider=self.dialect.name,
            model=self.model,
            encoding=self.counter.encoding_name,
            budget=self.total.total,
            budget_source=self.total.source,
            profile_budget=self.total.profile_total,
            window=self.total.window,
            reserve=self.total.reserve,
            cache_stable=self.step or None,
            entries=entries,
            categories=categories,
        )
        if total_tokens is not None:
            ledger.total_tokens = total_tokens
            ledger.overhead_tokens = total_tokens - sum(e.tokens_used for e in entries)
        return ledger


def entry(item: Item, split: dict[str, int] | None = None) -> LedgerEntry:
    """One component's ledger entry; ``split``: what it uses per category (summaries apart),
    reported when it is in more than one (a chat history with text placed in it)."""
    comp, fate = item.comp, item.outcome
    by_category = None
    if split and set(split) - {item.category}:
        by_category = {
            name: split[name]
            for name in CATEGORIES
            if split.get(name) or (name == item.category and name in split)
        }
        if fate.summary_tokens:
            by_category["summary"] = fate.summary_tokens
    offered_msgs = len(comp.messages) if comp.messages is not None else None
    common = {
        "id": comp.id,
        "kind": comp.kind.value,
        "source": comp.source,
        "category": item.category,
        "priority": comp.priority,
        "required": comp.required,
        "strategy": item.strategy,
        "messages_offered": offered_msgs,
    }
    if fate == Outcome():  # never fitted: the fit failed before its turn
        return LedgerEntry(
            **common,
            action="not_reached",
            reason="not reached: the fit failed before this component's turn",
            messages_kept=0 if offered_msgs is not None else None,
        )
    return LedgerEntry(
        **common,
        tokens_offered=fate.offered,
        budget=item.turn.applied,
        tokens_granted=item.turn.limit,
        tokens_used=fate.used,
        used_by_category=by_category,
        summary_tokens=fate.summary_tokens,
        action=fate.action,
        reason=fate.reason,
        messages_kept=fate.messages_kept if fate.messages_kept is not None else offered_msgs,
    )
