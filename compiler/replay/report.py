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
    #: the chat history's oldest messages left out, and its summary's tokens (None: no history)
    cut: int | None = None
    summary_tokens: int | None = None
    #: the input as the provider bills it (see :class:`BillStats`): tokens read from its
    #: prompt cache, written to it, and neither; ``billed`` in base-price input tokens
    cached_tokens: int | None = None
    written_tokens: int | None = None
    uncached_tokens: int | None = None
    billed: float | None = None


class BillStats(_Model):
    """What a replay's input costs under the provider's prompt-cache rule
    (:attr:`BenchReport.cache_rule`), summed over its compiled turns: tokens read from the
    cache (``cached``), written to it (``written``, explicit caching only) and billed in full
    (``uncached``); ``billed`` is their sum at the rule's multipliers, in base-price input
    tokens (``billed / request_tokens``: the average price of a request token).
    ``cached_share`` is the mean over the turns after the first of the share of a turn's
    request read from the cache.

    The bound: ``bound`` is the least a cut sequence could bill over the replay that keeps
    at least what a cache-stable step of ``bound_window + 1`` keeps (never over budget, the
    newest turn kept; see :mod:`compiler.replay.cutplan`), computed in a model of the replay
    from message prices; ``model_billed`` is this run's cuts billed in the same model, and
    ``bound_ratio`` = ``model_billed / bound`` (1.0: no cut sequence is cheaper). None when
    the bench has no run without cache-stable cuts for the budget (``--no-compare``)."""

    request_tokens: int = 0
    cached: int = 0
    written: int = 0
    uncached: int = 0
    billed: float = 0.0
    cached_share: float | None = None
    model_billed: float | None = None
    bound: float | None = None
    bound_window: int | None = None
    bound_ratio: float | None = None


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
    #: the step was chosen by ``cache_stable="auto"`` (for the provider's prompt cache)
    auto: bool = False
    turns: int = 0
    failed: dict[str, int] = Field(default_factory=dict)
    #: the message of the first failed turn (None: none failed)
    first_failure: str | None = None
    total_tokens: Stats = Field(default_factory=Stats)
    budget_use: Stats = Field(default_factory=Stats)
    compile_ms: Stats = Field(default_factory=Stats)
    prefix_stability: Stats = Field(default_factory=Stats)
    cached_share: Stats = Field(default_factory=Stats)
    bill: BillStats = Field(default_factory=BillStats)
    categories: list[CategoryStats] = []
    components: list[ComponentStats] = []
    per_turn: list[TurnRecord] = []

    @property
    def label(self) -> str:
        """``budget 4,000`` (or ``default budget``), ``, cache-stable 32`` when on (``auto
        32`` when chosen)."""
        what = f"budget {self.budget:,}" if self.budget is not None else "default budget"
        auto = "auto " if self.auto else ""
        return what + (f", cache-stable {auto}{self.cache_stable}" if self.cache_stable else "")


class BenchReport(_Model):
    """What :func:`compiler.bench` measured: the set-up, and one :class:`RunReport` per
    budget and cache-stable setting (``auto``: the primary runs' steps were chosen by
    ``cache_stable="auto"``). ``turns`` are the replayed turns (each the number of
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
    turns: list[int] = []
    cache_stable: int = 0
    auto: bool = False
    #: the provider's prompt-cache rule the bills use (:meth:`CacheRule.describe`); None:
    #: none is known for the model, every input token is billed in full
    cache_rule: dict[str, Any] | None = None
    runs: list[RunReport] = []
    warnings: list[Diagnostic] = Field(default=[], exclude=True)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (camelCase keys), warnings as diagnostics."""
        data = self.model_dump(mode="json", by_alias=True)
        data["warnings"] = [w.to_json() for w in self.warnings]
        return data

    @property
    def primary(self) -> list[RunReport]:
        """The runs the options asked for, one per budget."""
        return [r for r in self.runs if r.primary]
