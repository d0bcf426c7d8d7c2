"""The bill of a replay: each turn's input as the provider's prompt cache bills it, and per
budget the least any budget-respecting cut sequence could bill (:mod:`.cutplan`).

Internal: the API is :func:`compiler.bench`.

A turn's request is compared with the previous turn's as compact JSON, conversation last
(:func:`~compiler.replay.turns.request_bytes`); the tokens of the common prefix, and of the
prefix before an explicit cache's last breakpoint (everything but the newest message), are
the request's exact token count in proportion to those bytes (an estimate: JSON bytes are
not tokens, but the two grow together).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compiler._base.tokens import counter_for
from compiler._records import record
from compiler.errors import APCError
from compiler.fit.ledger import BudgetLedger
from compiler.inputs.run import ChatMessageIn
from compiler.providers.dialect import CacheRule, Dialect, TurnBill
from compiler.replay.cutplan import (
    NO_CACHE,
    ReplayModel,
    TurnShape,
    auto_limit,
    auto_step,
    least_bill,
)
from compiler.replay.report import BenchReport, BillStats, RunReport, TurnRecord
from compiler.replay.turns import CONVERSATION, common_prefix, request_bytes

HISTORY = "ChatHistory"


def history_cut(ledger: BudgetLedger) -> tuple[int | None, int | None]:
    """The chat history's cut (its oldest messages left out) and summary tokens, from the
    ledger's largest ``ChatHistory`` entry; (None, None) without one."""
    entries = [e for e in ledger.entries if e.kind == HISTORY and e.messages_offered is not None]
    if not entries:
        return None, None
    e = max(entries, key=lambda e: e.messages_offered or 0)
    kept = e.messages_kept if e.messages_kept is not None else e.messages_offered
    return (e.messages_offered or 0) - (kept or 0), e.summary_tokens


def _share(total: int, part: int, whole: int) -> int:
    """``total`` tokens in the proportion ``part / whole`` (bytes)."""
    return round(total * part / whole) if whole else 0


def mark_bytes(request: Mapping[str, Any], body: bytes) -> list[int]:
    """Where the request's cache breakpoints end, in ``body``'s bytes: where its
    conversation starts (the tools' and system's), after the item before its newest and
    after its newest user turn (what the compiler marks, see
    :meth:`compiler.providers.anthropic.Anthropic.mark_cache`)."""
    for key in CONVERSATION:
        items = request.get(key)
        if isinstance(items, list) and items:
            users = [
                i for i, m in enumerate(items) if isinstance(m, dict) and m.get("role") == "user"
            ]
            ends = sorted({-1, *range(max(0, len(items) - 2), len(items) - 1), *users[-1:]})
            # the item then one more: the bytes shared end where the item ends
            return [
                common_prefix(body, request_bytes({**request, key: [*items[: i + 1], None]}))
                for i in ends
            ]
    return []


@record
class Biller:
    """Bills one replay turn by turn under ``rule`` (``marked``: its requests carry cache
    breakpoints, what an explicit rule caches); ``dialect`` says how its cache sees a
    request (:meth:`~compiler.providers.dialect.Dialect.cache_view`)."""

    dialect: Dialect
    rule: CacheRule
    marked: bool
    #: the previous request, and its marks (where each ends in bytes, and in tokens)
    last: tuple[bytes, list[tuple[int, int]]] | None = None

    def body(self, request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """The request as the provider's cache sees it, and as the bytes compared."""
        view = self.dialect.cache_view(request)
        return view, request_bytes(view)

    def turn(self, request: Mapping[str, Any], body: bytes, total: int) -> TurnBill:
        """The bill of a compiled turn (``request`` and ``body`` as :meth:`body` gives them),
        after the previous one (see the module docstring). The previous request's mark read
        is the furthest within the shared prefix, decided in bytes (both token figures are
        estimates)."""
        common = previous_mark = 0
        marks: list[tuple[int, int]] = []
        if self.rule.explicit and self.marked:
            marks = [(at, _share(total, at, len(body))) for at in mark_bytes(request, body)]
        if self.last is not None:
            before, previous = self.last
            shared = common_prefix(before, body)
            common = _share(total, shared, len(body))
            within = [tokens for at, tokens in previous if 0 < at <= shared]
            previous_mark = max(within or [tokens for _, tokens in previous] or [0])
            if within:
                common = max(common, previous_mark)
        self.last = (body, marks)
        mark = max((tokens for _, tokens in marks), default=0)
        return self.rule.bill(total, common, previous_mark, mark)

    def failed(self) -> None:
        """A failed turn: the next request finds no previous one."""
        self.last = None


def rule_for(dialect: Dialect, model: str | None) -> CacheRule:
    """The dialect's rule for ``model``; :data:`NO_CACHE` when none is known."""
    rule = dialect.cache_rule(model) if model else None
    return rule if rule is not None else NO_CACHE


def message_prices(
    messages: Sequence[ChatMessageIn], dialect: Dialect, encoding: str | None
) -> list[int]:
    """Each chat message's tokens by the dialect's cost model (its text and framing; a
    message the dialect cannot price alone, such as a tool result, by its text)."""
    counter = dialect.estimating(counter_for(encoding or "o200k_base"))
    prices = []
    for m in messages:
        text = m.content or ""
        try:
            prices.append(dialect.message_tokens({"role": m.role, "content": text}, counter))
        except APCError:
            prices.append(counter.count(text))
    return prices


def _newest_user(messages: Sequence[ChatMessageIn], k: int) -> int:
    """The index of the newest user message of the first ``k`` (``k``: none)."""
    for i in range(k - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return k


def replay_model(
    off: RunReport,
    others: Sequence[RunReport],
    messages: Sequence[ChatMessageIn],
    prices: list[int],
) -> ReplayModel:
    """The model of one budget's replay (:mod:`.cutplan`): the turns the run without
    cache-stable cuts (``off``) compiled, its cuts the least; any cut another run made at a
    turn is budget-respecting too, so it widens that turn's range."""
    sums = [0]
    for p in prices:
        sums.append(sums[-1] + p)
    seen: dict[int, list[int]] = {}
    for run in others:
        for rec in run.per_turn:
            if rec.error is None and rec.cut is not None:
                seen.setdefault(rec.messages, []).append(rec.cut)
    turns = []
    for rec in off.per_turn:
        if rec.error is not None or rec.total_tokens is None:
            continue
        k, low = min(rec.messages, len(prices)), rec.cut or 0
        cuts = [low, *seen.get(rec.messages, [])]
        other = max(0, rec.total_tokens - (sums[k] - sums[min(low, k)]))
        turns.append(
            TurnShape(
                messages=k,
                low=min(cuts),
                keep=max(_newest_user(messages, k), *cuts),
                other=other,
                head=max(0, other - (rec.summary_tokens or 0)),
                newest=0,  # the newest turn is marked: nothing after the breakpoint
            )
        )
    return ReplayModel(prices, turns)


def run_cuts(run: RunReport, model: ReplayModel) -> list[int | None]:
    """The run's cut at each turn of the model (None: it failed there)."""
    by_turn = {rec.messages: rec for rec in run.per_turn}
    cuts: list[int | None] = []
    for turn in model.turns:
        rec = by_turn.get(turn.messages)
        cuts.append(None if rec is None or rec.error is not None else rec.cut or 0)
    return cuts


def measured(run: RunReport) -> BillStats:
    """The run's bill summed over its compiled turns."""
    ok = [t for t in run.per_turn if t.error is None and t.billed is not None]
    shares = [
        (t.cached_tokens or 0) / t.total_tokens
        for t in ok
        if t.prefix_stability is not None and t.total_tokens
    ]
    return BillStats(
        request_tokens=sum(t.total_tokens or 0 for t in ok),
        cached=sum(t.cached_tokens or 0 for t in ok),
        written=sum(t.written_tokens or 0 for t in ok),
        uncached=sum(t.uncached_tokens or 0 for t in ok),
        billed=round(sum(t.billed or 0.0 for t in ok), 1),
        cached_share=round(sum(shares) / len(shares), 4) if shares else None,
    )


def record_bill(rec: TurnRecord, bill: TurnBill) -> None:
    rec.cached_tokens, rec.written_tokens = bill.cached, bill.written
    rec.uncached_tokens, rec.billed = bill.uncached, round(bill.billed, 2)


def finish(
    report: BenchReport, messages: Sequence[ChatMessageIn], dialect: Dialect, rule: CacheRule
) -> None:
    """Each run's :class:`BillStats`, and per budget the bound and each run's ratio to it."""
    report.cache_rule = None if rule is NO_CACHE else rule.describe()
    prices: list[int] | None = None
    budgets: dict[int | None, list[RunReport]] = {}
    for run in report.runs:
        run.bill = measured(run)
        budgets.setdefault(run.budget, []).append(run)
    for runs in budgets.values():
        off = next((r for r in runs if r.cache_stable == 0), None)
        if off is None:
            continue
        if prices is None:
            prices = message_prices(messages, dialect, report.encoding)
        model = replay_model(off, runs, messages, prices)
        limit = auto_limit(replay_model(off, [], messages, prices))
        steps = [max(limit, r.cache_stable) if r.auto else r.cache_stable for r in runs]
        window = max(0, max(steps) - 1)
        plan = least_bill(model, rule, window)
        for run in runs:
            billed = model.bill(rule, run_cuts(run, model), marked=run.cache_stable > 0)
            run.bill.model_billed = round(billed, 1)
            run.bill.bound = round(plan.billed, 1)
            run.bill.bound_window = window
            run.bill.bound_ratio = round(billed / plan.billed, 4) if plan.billed else None


def choose_step(
    off: RunReport,
    messages: Sequence[ChatMessageIn],
    dialect: Dialect,
    rule: CacheRule,
    encoding: str | None,
) -> int:
    """The step ``auto`` replays with, in the model of the run without cache-stable cuts
    (:func:`.cutplan.auto_step`)."""
    model = replay_model(off, [], messages, message_prices(messages, dialect, encoding))
    return auto_step(model, rule)
