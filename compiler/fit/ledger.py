"""The budget ledger: every fitting decision, per component, with the request's totals."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Action = Literal["kept", "truncated", "summarized", "dropped", "skipped"]


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class AppliedBudget(_Model):
    """The budgets that applied to a component (None: no such budget)."""

    own: int | None = None
    category: int | None = None
    total: int | None = None


class LedgerEntry(_Model):
    """One component's fate."""

    id: str
    kind: str
    source: str
    tokens_offered: int | None = None  # None when not all of it was counted (long history)
    tokens_used: int
    budget: AppliedBudget = Field(default_factory=AppliedBudget)
    action: Action = "kept"
    strategy: str | None = None
    reason: str | None = None
    messages_offered: int | None = None
    messages_kept: int | None = None


class BudgetLedger(_Model):
    """All entries plus the request's totals; ``total_tokens`` is the lowered request's count."""

    provider: str
    model: str
    encoding: str
    budget: int | None
    entries: list[LedgerEntry] = Field(default_factory=list)
    overhead_tokens: int = 0  # message framing, reply priming, tool-definition framing
    total_tokens: int = 0
