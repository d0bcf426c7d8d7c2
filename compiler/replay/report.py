"""The typed report of a replay (``compiler.bench``): per run, per component, per category,
per turn; JSON with camelCase keys, like the ledger's.

Internal: the API is :func:`compiler.bench` and :class:`compiler.BenchReport`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compiler.errors import Diagnostic

#: The ledger's actions a replay counts per component and category (``kept`` is the rest).
CUTS = ("truncated", "summarized", "dropped", "skipped")
#: The per-turn category of the provider's framing around the components (besides the
#: ledger's budget categories, and the kinds of the components in none).
OVERHEAD = "overhead"


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Stats(_Model):
    """A sample summarized: how many values, and min / median / mean / p95 / max (None when
    the sample is empty). p95 is the nearest-rank 95th percentile."""

    count: int = 0
    min: float | None = None
    median: float | None = None
    mean: float | None = None
    p95: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: Sequence[float], digits: int = 4) -> Stats:
        """The stats of ``values`` (rounded to ``digits`` decimals, so JSON stays stable)."""
        if not values:
            return cls()
        ordered = sorted(values)
        rank = max(1, math.ceil(0.95 * len(ordered)))
        return cls(
            count=len(ordered),
            min=round(ordered[0], digits),
            median=round(statistics.median(ordered), digits),
            mean=round(statistics.fmean(ordered), digits),
            p95=round(ordered[rank - 1], digits),
            max=round(ordered[-1], digits),
        )


class ComponentStats(_Model):
    """One component (by ledger id) across the turns it was in.

    ``offered`` covers the turns where the ledger counted all of it (a long history that was
    cut is not counted whole: ``offered_uncounted`` says in how many turns); ``kept`` is the
    ledger's ``tokensUsed``; ``actions`` counts the turns per ledger action."""

    id: str
    kind: str
    category: str | None = None
    turns: int = 0
    offered: Stats = Field(default_factory=Stats)
    offered_uncounted: int = 0
    kept: Stats = Field(default_factory=Stats)
    messages_offered: Stats | None = None
    messages_kept: Stats | None = None
    actions: dict[str, int] = Field(default_factory=dict)


class CategoryStats(_Model):
    """One category across the turns: tokens kept (the ledger's category ``used``; for the
    components in no budget category, their kind, e.g. ``CharacterCard``; ``overhead``: the
    provider's framing), tokens offered (the sum
    of its components' ``tokensOffered``, in the turns where all were counted), and in how
    many turns at least one of its components was truncated, summarized, dropped or skipped."""

    name: str
    budget: int | None = None
    kept: Stats = Field(default_factory=Stats)
    offered: Stats = Field(default_factory=Stats)
    offered_uncounted: int = 0
    cuts: dict[str, int] = Field(default_factory=dict)


class TurnRecord(_Model):
    """One compiled turn: the first ``messages`` messages of the chat.

    ``prefix_stability`` is the share of the previous replayed turn's request (its bytes)
    that this turn's request keeps unchanged from the start (1.0: it only appended), and
    ``cached_share`` the share of this turn's request that is that common prefix (what a
    provider's prompt cache can serve); both None for the first turn and after a failed one;
    ``categories`` the tokens kept per category (zeros left out); ``cuts`` how many
    components the ledger truncated, summarized, dropped or skipped, per action (zeros left
    out); ``error`` the code of a budget failure (then no tokens)."""

    messages: int
    total_tokens: int | None = None
    budget: int | None = None
    compile_ms: float = 0.0
    prefix_stability: float | None = None
    cached_share: float | None = None
    categories: dict[str, int] = Field(default_factory=dict)
    cuts: dict[str, int] = Field(default_factory=dict)
    error: str | None = None


class RunReport(_Model):
    """One replay of the chat: one budget, cache-stable on (``cache_stable`` = its step) or
    off (0). ``budget`` is the one asked for (None: the default the compile chose);
    ``effective_budget`` the ledger's. ``primary``: the run the options asked for (the
    other is the comparison of prefix stability with cache-stable the other way)."""

    budget: int | None = None
    effective_budget: int | None = None
    budget_source: str | None = None
    cache_stable: int = 0
    primary: bool = True
    turns: int = 0
    failed: dict[str, int] = Field(default_factory=dict)
    #: the message of the first failed turn (None: none failed)
    first_failure: str | None = None
    total_tokens: Stats = Field(default_factory=Stats)
    budget_use: Stats = Field(default_factory=Stats)
    compile_ms: Stats = Field(default_factory=Stats)
    prefix_stability: Stats = Field(default_factory=Stats)
    cached_share: Stats = Field(default_factory=Stats)
    categories: list[CategoryStats] = Field(default_factory=list)
    components: list[ComponentStats] = Field(default_factory=list)
    per_turn: list[TurnRecord] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """``budget 4,000`` (or ``default budget``), ``, cache-stable 32`` when on."""
        what = f"budget {self.budget:,}" if self.budget is not None else "default budget"
        return what + (f", cache-stable {self.cache_stable}" if self.cache_stable else "")


class BenchReport(_Model):
    """What :func:`compiler.bench` measured: the set-up, and one :class:`RunReport` per
    budget and cache-stable setting. ``turns`` are the replayed turns (each the number of
    chat messages it holds); ``warnings`` the distinct warnings of all compiles (not in
    :meth:`to_json`'s ``runs``; listed under ``warnings``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    source: str
    context: str
    provider: str
    model: str | None = None
    encoding: str | None = None
    messages: int = 0
    every: int = 1
    turns: list[int] = Field(default_factory=list)
    cache_stable: int = 0
    runs: list[RunReport] = Field(default_factory=list)
    warnings: list[Diagnostic] = Field(default_factory=list, exclude=True)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (camelCase keys), warnings as diagnostics."""
        data = self.model_dump(mode="json", by_alias=True)
        data["warnings"] = [w.to_json() for w in self.warnings]
        return data

    @property
    def primary(self) -> list[RunReport]:
        """The runs the options asked for, one per budget."""
        return [r for r in self.runs if r.primary]
