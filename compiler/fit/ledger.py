"""The budget ledger: every fitting decision, per component, with the request's totals.

Internal: the API is :mod:`compiler.fit`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Action = Literal["kept", "truncated", "summarized", "dropped", "skipped", "failed", "not_reached"]
"""A component's fate. Only in the ledger of a failed fit: ``failed``, the component whose
budget could not be met, and ``not_reached``, one whose turn never came."""


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class AppliedBudget(_Model):
    """The budgets that applied to a component when it was fitted (None: no such budget).

    ``own`` is its ``budget=N``; ``category`` and ``total`` are what was left of its category's
    budget and of the total when its turn came (fixed components: the whole budgets).
    """

    own: int | None = None
    category: int | None = None
    total: int | None = None


class LedgerEntry(_Model):
    """One component's fate."""

    id: str
    kind: str
    source: str
    category: str | None = None
    priority: int = 0
    required: bool = False
    tokens_offered: int | None = None  # None when not all of it was counted (long history)
    budget: AppliedBudget = Field(default_factory=AppliedBudget)
    tokens_granted: int | None = None  # the smallest budget that applied (None: unlimited)
    tokens_used: int = 0
    #: tokens_used by budget category (summing to it), when the component's tokens are in
    #: more than one: a chat history with text a preset places in it (world info at depth,
    #: the Author's Note, ...) counted in those categories, the rest in ``history`` and
    #: ``summary``. None: all of tokens_used is in ``category`` (and ``summary``)
    used_by_category: dict[str, int] | None = None
    summary_tokens: int = 0  # of tokens_used, what summaries take (summaryBudgetTokens)
    action: Action = "kept"
    strategy: str | None = None
    reason: str | None = None
    messages_offered: int | None = None
    messages_kept: int | None = None


class CategoryTotal(_Model):
    """A budget category: its budget and what its components used (a chat history's entry
    counts in each category of its ``used_by_category``)."""

    budget: int | None = None
    used: int = 0


class BudgetLedger(_Model):
    """All entries plus the request's totals; ``total_tokens`` is the lowered request's count.

    ``overhead_tokens`` is what the provider adds around the components' own tokens (message
    framing, names, reply priming, tool-definition framing, and the merging of inline
    components into one message); ``total_tokens`` = sum of ``tokens_used`` + overhead.
    """

    provider: str
    model: str
    encoding: str
    budget: int | None
    budget_source: str = "none"  # --budget, profile, window (window - reserve), preset, none
    profile_budget: int | None = None  # the profile's totalContextBudget
    window: int | None = None
    reserve: int = 0
    cache_stable: int | None = None
    entries: list[LedgerEntry] = []
    categories: dict[str, CategoryTotal] = Field(default_factory=dict)
    overhead_tokens: int = 0
    total_tokens: int = 0
    #: what ``squash_system_messages`` saved after the fit: a legacy preset's budget counts
    #: every system message apart, with its framing, as SillyTavern counts them before it
    #: squashes them, so ``total_tokens + squash_saved_tokens`` is what the budget held
    squash_saved_tokens: int = 0
    #: "exact" when the dialect counts as the provider does, else "estimate" (the budget then
    #: holds back the dialect's safety margin: ``safety_margin``)
    counts: Literal["exact", "estimate"] = "exact"
    safety_margin: float = 0.0

    def entry(self, component_id: str) -> LedgerEntry:
        """The entry of one component (KeyError when there is none)."""
        for e in self.entries:
            if e.id == component_id:
                return e
        raise KeyError(component_id)
