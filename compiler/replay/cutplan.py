"""The bill of a replay as a function of where the history is cut each turn: the least any
budget-respecting cut sequence could cost (a dynamic programme over (turn, cut)), the bill
of a cache-stable step, and the step ``cache_stable="auto"`` chooses.

Internal: the API is :func:`compiler.bench`.

The model: turn ``t`` sends the chat's first ``messages`` messages, cut at ``c`` (the oldest
``c`` left out). Its request is ``other`` tokens (everything but the kept chat messages:
system text, card, tools, summary, framing) plus the prices of messages ``c ..
messages - 1``. A cut is budget-respecting when it lies between ``low`` (the least cut the
compile made fit: the replay without cache-stable cuts) and ``keep`` (the newest turn is
kept). When the cut is where it was in the previous turn, the previous request is a prefix
of this one; when it moved, only the ``head`` (what comes before the history, the summary
excluded) is. A :class:`~compiler.providers.dialect.CacheRule` bills each turn from that.

Every cut between ``low`` and ``keep`` fits, but cutting more always shrinks the request:
the least bill would keep only the newest turn. So the bound is taken over the cut
sequences that cut at most ``window`` messages more than ``low`` (a cache-stable step of
``window + 1`` never cuts more): the least a compile could pay for keeping at least as much
of the chat as that step does.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import field
from itertools import accumulate

from compiler._records import record
from compiler.providers.dialect import CacheRule, TurnBill

#: The rule of a provider whose caching is not known: nothing is cached.
NO_CACHE = CacheRule(minimum=2**62, read=1.0)
#: ``auto``'s cheapest step is one of up to this share of the chat messages the least cut
#: keeps (the median over the replay): a step costs up to its size in messages kept, half on
#: average. It is also where the bound's window starts (see :func:`auto_step`).
AUTO_SHARE = 0.25
#: ``auto`` considers steps of at least 1 up to at least this many messages.
AUTO_MIN_LIMIT = 8
#: ``auto``'s goals: at least this share of each turn's request read from the cache (the mean
#: after the first turn) ...
AUTO_CACHED_GOAL = 0.97
#: ... asked of the model with this margin first, where a step reaches it: the model's share
#: is an estimate of the replay's, which its exact counts (rounded to the provider's
#: increments) put up to a tenth of a point lower ...
AUTO_CACHED_MARGIN = 0.002
#: ... with a bill at most this many times the least bound (see :func:`auto_step`) ...
AUTO_BILL_GOAL = 1.10
#: ... by a step of up to this share of the messages the least cut keeps (the median turn's).
AUTO_GOAL_SHARE = 0.5
#: at most this many least bills :func:`auto_step` computes for the goals (a bound on its
#: work; the steps are tried smallest first)
AUTO_MAX_BOUNDS = 12


@record(frozen=True)
class TurnShape:
    """One replayed turn in the model (see the module docstring); ``newest``: the tokens
    after an explicit cache's last breakpoint (0 in a replay: the compiler marks the
    newest turn)."""

    messages: int
    low: int
    keep: int
    other: int
    head: int
    newest: int


@record
class ReplayModel:
    """The turns of one replay and the prices of the chat's messages (oldest first)."""

    prices: Sequence[int]
    turns: Sequence[TurnShape]
    sums: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.sums = list(accumulate(self.prices, initial=0))

    def tokens(self, t: int, cut: int) -> int:
        """The request tokens of turn ``t`` cut at ``cut``."""
        turn = self.turns[t]
        end = min(turn.messages, len(self.prices))
        return turn.other + self.sums[end] - self.sums[min(cut, end)]

    def cost(
        self, rule: CacheRule, t: int, cut: int, previous: int | None, marked: bool = True
    ) -> TurnBill:
        """The bill of turn ``t`` cut at ``cut`` after turn ``t - 1`` cut at ``previous``
        (None: no previous request, a cold cache). ``marked``: the requests carry cache
        breakpoints (what an explicit rule caches)."""
        total = self.tokens(t, cut)
        mark = total - self.turns[t].newest if marked else 0
        if previous is None or t == 0:
            return rule.bill(total, 0, 0, mark)
        before = self.tokens(t - 1, previous)
        previous_mark = before - self.turns[t - 1].newest if marked else 0
        if previous != cut:
            return rule.bill(total, self.turns[t].head, previous_mark, mark)
        # the previous request is a prefix of this one (a turn the model prices below the
        # previous one, its other parts estimated from another run, reads all of itself)
        return rule.bill(total, before, min(previous_mark, total), mark)

    def bill(self, rule: CacheRule, cuts: Sequence[int | None], marked: bool = True) -> float:
        """The bill of a whole cut sequence (None: the turn failed; it bills nothing and
        the next request finds no previous one)."""
        billed, previous = 0.0, None
        for t, cut in enumerate(cuts):
            if cut is not None:
                billed += self.cost(rule, t, cut, previous, marked).billed
            previous = cut
        return billed

    def span(self, t: int, window: int) -> range:
        """The cuts the bound allows at turn ``t``: ``low`` to ``low + window``, at most
        ``keep``."""
        turn = self.turns[t]
        return range(turn.low, max(turn.low, min(turn.keep, turn.low + window)) + 1)


@record(frozen=True)
class Plan:
    """A cut sequence and its bill (base-price input tokens)."""

    billed: float
    cuts: list[int]


def least_bill(model: ReplayModel, rule: CacheRule, window: int) -> Plan:
    """The cheapest cut sequence within ``window`` (see the module docstring), by dynamic
    programming over (turn, cut): the cost of a turn depends only on its cut and the
    previous turn's. A moved cut costs the same whatever it moved from, unless the previous
    request's breakpoint lies within the new request's head; so each state looks at its own
    cut, the two cheapest others, and those few."""
    if not model.turns:
        return Plan(0.0, [])
    best: dict[int, float] = {c: model.cost(rule, 0, c, None).billed for c in model.span(0, window)}
    back: list[dict[int, int]] = []
    for t in range(1, len(model.turns)):
        ranked = sorted(best, key=best.__getitem__)[:2]
        head, before = model.turns[t].head, model.turns[t - 1].newest
        near = [c for c in best if model.tokens(t - 1, c) - before <= head]
        now: dict[int, float] = {}
        links: dict[int, int] = {}
        for cut in model.span(t, window):
            options = {*ranked, *near} | ({cut} if cut in best else set())
            scored = ((best[p] + model.cost(rule, t, cut, p).billed, p) for p in options)
            now[cut], links[cut] = min(scored)
        best = now
        back.append(links)
    cut = min(best, key=best.__getitem__)
    billed = best[cut]
    cuts = [cut]
    for links in reversed(back):
        cut = links[cut]
        cuts.append(cut)
    return Plan(billed, cuts[::-1])


def brute_force(model: ReplayModel, rule: CacheRule, window: int) -> float:
    """The least bill over every cut sequence within ``window`` (tiny replays: a check of
    :func:`least_bill`)."""
    spans = [model.span(t, window) for t in range(len(model.turns))]
    return min((model.bill(rule, cuts) for cuts in itertools.product(*spans)), default=0.0)


def stepped_cuts(model: ReplayModel, step: int) -> list[int]:
    """The cuts of a cache-stable step: the least cut rounded up to a multiple of ``step``,
    unless that would cut the newest turn (then the least cut); ``step`` 0: the least."""
    cuts = []
    for turn in model.turns:
        rounded = -(-turn.low // step) * step if step > 0 else turn.low
        cuts.append(rounded if rounded <= turn.keep else turn.low)
    return cuts


def _median_kept(model: ReplayModel) -> int:
    kept = sorted(t.messages - t.low for t in model.turns)
    return kept[len(kept) // 2] if kept else 0


def auto_limit(model: ReplayModel) -> int:
    """The largest step ``auto``'s cheapest step is chosen from, and the least window of the
    bound it is compared with: :data:`AUTO_SHARE` of the messages the least cut keeps (the
    median turn's), at least :data:`AUTO_MIN_LIMIT`."""
    return max(AUTO_MIN_LIMIT, int(_median_kept(model) * AUTO_SHARE))


def cached_share(model: ReplayModel, rule: CacheRule, cuts: Sequence[int]) -> float:
    """The mean share of a turn's request read from the cache, after the first turn, when
    the replay is cut at ``cuts`` (every turn compiled); 0.0 with fewer than two turns."""
    shares, previous = [], None
    for t, cut in enumerate(cuts):
        if previous is not None:
            total = model.tokens(t, cut)
            bill = model.cost(rule, t, cut, previous)
            shares.append(bill.cached / total if total else 0.0)
        previous = cut
    return sum(shares) / len(shares) if shares else 0.0


def auto_step(model: ReplayModel, rule: CacheRule, largest: int | None = None) -> int:
    """The step ``auto`` replays with, in the model: the smallest step (it keeps the most
    history) of 1 to :data:`AUTO_GOAL_SHARE` of the messages the least cut keeps that meets
    both goals: a cached share of at least :data:`AUTO_CACHED_GOAL` (asked with
    :data:`AUTO_CACHED_MARGIN` first, where a step reaches it), and a bill at most
    :data:`AUTO_BILL_GOAL` times the least bill within the window the bench bounds it with
    (the larger of the step and :func:`auto_limit`, less one). When no step does (or
    ``largest`` is given), the step of 1 to ``largest`` (None: :func:`auto_limit`) that
    bills the least (the smallest on a tie)."""
    limit = auto_limit(model)
    if largest is None:
        for share in (AUTO_CACHED_GOAL + AUTO_CACHED_MARGIN, AUTO_CACHED_GOAL):
            if (goal := _goal_step(model, rule, limit, share)) is not None:
                return goal
    largest = limit if largest is None else largest
    bills = [(model.bill(rule, stepped_cuts(model, s)), s) for s in range(1, largest + 1)]
    return min(bills)[1]


def _goal_step(model: ReplayModel, rule: CacheRule, limit: int, share: float) -> int | None:
    """The smallest step that meets ``auto``'s goals (see :func:`auto_step`), the cached
    share asked being ``share``, or None. A least bill is only computed where it decides:
    the bound shrinks as its window grows, so a bill within the goal of the widest window's
    bound passes, and one over the goal of the narrowest window's (``limit - 1``) fails."""
    top = max(limit, int(_median_kept(model) * AUTO_GOAL_SHARE))
    if len(model.turns) < 2:
        return None
    narrow = least_bill(model, rule, limit - 1).billed
    wide: float | None = None
    computed = 0
    for step in range(1, top + 1):
        cuts = stepped_cuts(model, step)
        if cached_share(model, rule, cuts) < share:
            continue
        billed = model.bill(rule, cuts)
        if billed > AUTO_BILL_GOAL * narrow:
            continue
        if step <= limit:
            return step
        if wide is None:
            wide = least_bill(model, rule, top - 1).billed
        if billed <= AUTO_BILL_GOAL * wide:
            return step
        if computed == AUTO_MAX_BOUNDS:
            return None
        computed += 1
        if billed <= AUTO_BILL_GOAL * least_bill(model, rule, step - 1).billed:
            return step
    return None
