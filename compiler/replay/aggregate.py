"""Turning the ledgers of a replay's turns into its :class:`RunReport`: every number comes
from a turn's :class:`compiler.fit.BudgetLedger`, nothing is counted again.

Internal: the API is :func:`compiler.bench`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import field

from compiler._records import record
from compiler.fit.ledger import BudgetLedger, LedgerEntry
from compiler.replay.report import (
    CUTS,
    OVERHEAD,
    CategoryStats,
    ComponentStats,
    RunReport,
    Stats,
    TurnRecord,
)


@record
class _Component:
    """One component's values across the turns it was in."""

    kind: str
    category: str | None
    offered: list[int] = field(default_factory=list)
    uncounted: int = 0
    kept: list[int] = field(default_factory=list)
    messages_offered: list[int] = field(default_factory=list)
    messages_kept: list[int] = field(default_factory=list)
    actions: Counter[str] = field(default_factory=Counter)

    def add(self, e: LedgerEntry) -> None:
        if e.tokens_offered is None:
            self.uncounted += 1
        else:
            self.offered.append(e.tokens_offered)
        self.kept.append(e.tokens_used)
        if e.messages_offered is not None:
            self.messages_offered.append(e.messages_offered)
            self.messages_kept.append(
                e.messages_kept if e.messages_kept is not None else e.messages_offered
            )
        self.actions[e.action] += 1

    def stats(self, component_id: str) -> ComponentStats:
        msgs = bool(self.messages_offered)
        return ComponentStats(
            id=component_id,
            kind=self.kind,
            category=self.category,
            turns=len(self.kept),
            offered=Stats.of(self.offered),
            offered_uncounted=self.uncounted,
            kept=Stats.of(self.kept),
            messages_offered=Stats.of(self.messages_offered) if msgs else None,
            messages_kept=Stats.of(self.messages_kept) if msgs else None,
            actions=dict(sorted(self.actions.items())),
        )


def kept_by_category(ledger: BudgetLedger) -> dict[str, int]:
    """The tokens of one request per category (the ledger's category totals), per kind for
    the components in no budget category (``CharacterCard``, ``PresetGuide``, ...), and
    ``overhead`` for the provider's framing: together, the request's ``totalTokens``. Zeros
    are left out."""
    kept = {name: c.used for name, c in ledger.categories.items()}
    for e in ledger.entries:
        if not e.category:
            kept[e.kind] = kept.get(e.kind, 0) + e.tokens_used - e.summary_tokens
    kept[OVERHEAD] = ledger.overhead_tokens
    return {name: n for name, n in kept.items() if n}


def _cuts(ledger: BudgetLedger) -> dict[str, int]:
    """How many components the ledger cut, per action in :data:`CUTS` order (no zeros)."""
    counts: Counter[str] = Counter(e.action for e in ledger.entries)
    return {action: counts[action] for action in CUTS if counts[action]}


def _offered_by_category(ledger: BudgetLedger) -> dict[str, int | None]:
    """Per category the sum of its components' ``tokensOffered`` (None: one was not counted
    all). A chat history offers the text placed in it (``usedByCategory``) in those
    categories: counted all, it was all kept."""
    offered: dict[str, int | None] = {}

    def add(name: str, n: int | None) -> None:
        have = offered.get(name, 0)
        offered[name] = None if have is None or n is None else have + n

    for e in ledger.entries:
        name = e.category or e.kind
        placed = {k: v for k, v in (e.used_by_category or {}).items() if k not in (name, "summary")}
        for other, n in placed.items():
            add(other, None if e.tokens_offered is None else n)
        rest = None if e.tokens_offered is None else e.tokens_offered - sum(placed.values())
        add(name, rest)
    return offered


@record
class RunAccumulator:
    """Collects one replay turn by turn; :meth:`report` summarizes it."""

    run: RunReport
    components: dict[str, _Component] = field(default_factory=dict)
    offered: list[dict[str, int | None]] = field(default_factory=list)
    cuts: dict[str, Counter[str]] = field(default_factory=dict)
    budgets: dict[str, int | None] = field(default_factory=dict)

    def add(
        self, messages: int, ledger: BudgetLedger, ms: float, shares: tuple[float, float] | None
    ) -> None:
        """A compiled turn: its ledger, compile time and prefix shares (see
        :func:`compiler.replay.turns.prefix_shares`)."""
        run = self.run
        if run.effective_budget is None and run.budget_source is None:
            run.effective_budget, run.budget_source = ledger.budget, ledger.budget_source
        run.per_turn.append(
            TurnRecord(
                messages=messages,
                total_tokens=ledger.total_tokens,
                budget=ledger.budget,
                compile_ms=round(ms, 3),
                prefix_stability=None if shares is None else round(shares[0], 4),
                cached_share=None if shares is None else round(shares[1], 4),
                categories=kept_by_category(ledger),
                cuts=_cuts(ledger),
            )
        )
        self.offered.append(_offered_by_category(ledger))
        turn_cuts: dict[str, set[str]] = {}
        for e in ledger.entries:
            comp = self.components.setdefault(e.id, _Component(e.kind, e.category))
            comp.add(e)
            if e.action in CUTS:
                turn_cuts.setdefault(e.category or e.kind, set()).add(e.action)
        for name, actions in turn_cuts.items():
            self.cuts.setdefault(name, Counter()).update(actions)
        for name, c in ledger.categories.items():
            self.budgets.setdefault(name, c.budget)

    def failed(self, messages: int, code: str, message: str, ms: float) -> None:
        """A turn whose compile failed with a budget error (``code``, ``message``)."""
        if self.run.first_failure is None:
            self.run.first_failure = f"turn of {messages} messages: {message}"
        self.run.per_turn.append(TurnRecord(messages=messages, compile_ms=round(ms, 3), error=code))
        self.run.failed[code] = self.run.failed.get(code, 0) + 1

    def report(self) -> RunReport:
        """The run with its statistics filled in."""
        run = self.run
        ok = [t for t in run.per_turn if t.error is None]
        run.turns = len(run.per_turn)
        run.total_tokens = Stats.of([t.total_tokens or 0 for t in ok])
        run.budget_use = Stats.of([(t.total_tokens or 0) / t.budget for t in ok if t.budget])
        run.compile_ms = Stats.of([t.compile_ms for t in run.per_turn], digits=3)
        run.prefix_stability = Stats.of(
            [t.prefix_stability for t in ok if t.prefix_stability is not None]
        )
        run.cached_share = Stats.of([t.cached_share for t in ok if t.cached_share is not None])
        run.categories = self._categories(ok)
        run.components = [c.stats(cid) for cid, c in self.components.items()]
        return run

    def _categories(self, ok: list[TurnRecord]) -> list[CategoryStats]:
        names = list(self.budgets)
        for t in ok:
            names += [n for n in t.categories if n not in names]
        for turn in self.offered:
            names += [n for n in turn if n not in names]
        have_offers = {n for turn in self.offered for n in turn}  # not summary, overhead
        out = []
        for name in names:
            offered = [turn.get(name, 0) for turn in self.offered] if name in have_offers else []
            kept = [t.categories.get(name, 0) for t in ok]
            if not any(kept) and not any(offered) and self.budgets.get(name) is None:
                continue
            out.append(
                CategoryStats(
                    name=name,
                    budget=self.budgets.get(name),
                    kept=Stats.of(kept),
                    offered=Stats.of([n for n in offered if n is not None]),
                    offered_uncounted=sum(1 for n in offered if n is None),
                    cuts=dict(sorted(self.cuts.get(name, Counter()).items())),
                )
            )
        return out
