"""The records of one grant run, per component: what it is (:class:`Item`), the budgets left
at its turn (:class:`Turn`) and what a fit made of it (:class:`Outcome`).

The grant loop replaces an item's turn and outcome whole; the fitters read an item and
return a new outcome, so no fitter changes the state of the run.

Internal: part of the allocator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from compiler._base.frame import Component, Strategy
from compiler._records import record
from compiler.fit.ledger import Action, AppliedBudget


@record(frozen=True)
class Turn:
    """The budgets that applied when the component's turn came."""

    applied: AppliedBudget = field(default_factory=AppliedBudget)
    limit: int | None = None  # the smallest of them: the grant (None: unlimited)
    category_left: int | None = None  # of its category's budget (elastic components)
    summary_left: int | None = None  # of the summary budget (elastic components)
    #: what was left of every category's budget (a history's text in other categories)
    pools: Mapping[str, int | None] = field(default_factory=dict)


@record(frozen=True)
class Outcome:
    """What was made of a component; the defaults stand for "not fitted yet"."""

    out: Component | None = None  # what the request carries (None: nothing)
    offered: int | None = None  # None: not (all) counted
    used: int = 0
    summary_tokens: int = 0
    action: Action = "kept"
    reason: str | None = None
    messages_kept: int | None = None
    #: of ``used``, the tokens in other categories than the component's: the text placed
    #: inside a chat history (:data:`compiler.fit.budgets.IN_CHAT`); None: not split yet
    shares: Mapping[str, int] | None = None
    #: the extra payload of its budget event (``context_component_skipped`` when nothing is
    #: left, else ``context_component_cut``); None: it was kept as
    #: offered (no event)
    skipped: Mapping[str, Any] | None = None

    @property
    def cut(self) -> bool:
        """Cut (or dropped) to fit its limit."""
        return self.skipped is not None


@record
class Item:
    """One component in a grant run."""

    index: int
    comp: Component
    strategy: Strategy
    category: str | None
    fixed: bool
    turn: Turn = field(default_factory=Turn)
    outcome: Outcome = field(default_factory=Outcome)

    def by_category(self, shares: Mapping[str, int] | None = None) -> dict[str, int]:
        """What the component uses per budget category, summaries apart: its ``shares``
        (the outcome's, else ``shares``) and the rest in its own category."""
        fate = self.outcome
        split = dict(fate.shares if fate.shares is not None else shares or {})
        own = fate.used - fate.summary_tokens - sum(split.values())
        if self.category:
            split[self.category] = split.get(self.category, 0) + own
        return split

    @property
    def empty(self) -> bool:
        c = self.comp
        return not (c.inline_content or c.messages or c.tools)
