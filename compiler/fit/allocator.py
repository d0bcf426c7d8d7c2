"""Fitting a frame into its budgets: the allocator.

Budgets compose: every component fits its own ``budget=N``, its category's budget (from the
resolved profile; shared by the components of that category, see
:data:`compiler.fit.budgets.CATEGORY_OF`; the text a preset places inside a chat history
counts in its own category, :data:`compiler.fit.budgets.IN_CHAT`) and the total. Summaries
count against the summary budget.

Strategies, when a component is over what it may use (``strategy=`` on the macro, else the
seed's defaults):

- ``fail``: ``context.budget_exceeded`` (a BudgetError carrying the ledger). The default for
  required components and for the parts that are never cut implicitly: the system
  instruction, the template's own text, the tool definitions.
- ``drop_optional``: the component is left out whole, with a ``context_component_skipped``
  event (reason ``budget``). The default for every other optional inline component.
- ``truncate``: token-exact cut (head kept; head and tail around an elision marker for
  workspace files, diffs and tool results); whole messages for chat history.
- ``summarize``: a summary in its place (:mod:`compiler.fit.summarize`), truncated when no
  summary fits. The default for tool results (summarize each result that is over its fair
  share, then truncate) and chat history (the newest whole units that fit, and in place of
  the cut a note that chat.search can read it plus a summary, see
  :mod:`compiler.fit.history`).

Order: the fixed components (``fail``) are counted first, exactly (the floor, see
:func:`floor_tokens`); if they exceed a budget the compile fails, unless it fits without the
text inserted into a newest turn (world info at depth 0, see :mod:`compiler.fit.turns`),
which is then left out. The others get what is left in *grant order*: required first; then
higher ``priority`` first; at equal priority components that are kept or dropped whole come
before those that can shrink (so history and tool results take the remainder); then the
earlier in the frame first. Each is charged its content and the message framing it adds to
what is already granted. The tie rule for drops follows: an optional component that does not
fit is dropped, and so is every component kept or dropped whole after it in grant order
(lowest priority, then latest in the frame, goes first), so a lower-ranked one is never kept
while a higher-ranked one is dropped. A component cut to fit the total passes the rounding
of its cut on to the components after it that can shrink (and the fill), and counts as such
a drop for the whole components after it.

Fill components (:data:`~compiler._base.frame.FILL_BLOCK`: a legacy preset's dialogue examples)
are the exception, as SillyTavern fills them (:mod:`compiler.fit.fill`): they take the room
left after everything else, including what a history cut to fit the total leaves, block by
block, and a block that stops never drops the blocks after it.

Monotone (fill components aside): a bigger total budget never keeps fewer whole components
(the set kept is a superset), and the request never shrinks by more than the rounding of
the one component cut to fit (whole history messages, a truncation's last tokens, a
summary). By construction: up
to the first component whose fate differs, two grant runs at totals ``a < b`` are identical
(the same components with the same content, only the room left differs); at that component
the run at ``a`` drops a whole component or cuts one to fit the total, and in both cases
keeps nothing whole after it. The run that stands is the one at the largest total whose
exact count fits the budget (below), which grows with the budget.

Exactness: costs are the dialect's own cost model. What a component adds around its content
(a message's framing, merges at its seams, whitespace trimmed at a message's edges) the
grant loop estimates from a few characters each side of a seam. After a grant run the
allocator lowers the frame and counts the real request. If it is over the budget, the grant
loop runs again from the start with a total one token smaller, until the exact count fits:
room is never taken back from one component, it is handed out again in grant order.

Internal: ``compiler.fit`` exports what is public.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from typing import NoReturn

from compiler._base.frame import AS_WRITTEN, FILL_BLOCK, ROLEPLAY, Component, ContextFrame
from compiler._base.journal import Journal
from compiler._base.kinds import ComponentKind
from compiler._base.tokens import TokenCounter
from compiler._records import record
from compiler.errors import BudgetError, Diagnostic, InternalError
from compiler.fit.budgets import CategoryBudgets, TotalBudget, category_of
from compiler.fit.costs import Costs, Neighbours
from compiler.fit.fill import Filler
from compiler.fit.history import min_present
from compiler.fit.items import Item, Outcome, Turn
from compiler.fit.ledger import AppliedBudget, BudgetLedger
from compiler.fit.pieces import pieces_outcome
from compiler.fit.prices import PriceMemo
from compiler.fit.record import Recorder
from compiler.fit.strategy import (
    as_counted,
    counted_tokens,
    effective_strategy,
    floor_tokens,
    turn_part,
)
from compiler.fit.summarize import Summarizer, SummaryCache, SummaryChain
from compiler.fit.text import TextFitter
from compiler.fit.turns import HINT as TURN_HINT
from compiler.fit.turns import newest_turns, without_inserted
from compiler.fit.windows import SUMMARY_MODE_TOKENS as SUMMARY_MODE_TOKENS
from compiler.fit.windows import WindowFitter, search_tool_alias
from compiler.providers.dialect import NO_OPTIONS, Dialect, LoweringOptions, ModelRequest

#: Over the budget by a seam, the grant loop runs again with a total this many times one
#: token smaller, then smaller by the excess (a bound on the work; seams rarely need a second run).
EXACT_STEPS = 32
#: Grant runs at most (each after the first smaller by the excess): a bound that is never
#: reached while the floor fits, held so a defect cannot loop for ever.
MAX_RUNS = EXACT_STEPS + 64
#: A cut text whose estimate is at most this many tokens (or 5%) over its limit is counted
#: exactly whole before it is cut (see ``_Allocator._near_whole``).
NEAR = 16


@record
class FitResult:
    """The fitted frame, the ledger, the request's exact token count, and the request
    itself, lowered with the fit's lowering options (what was counted is what is sent),
    with what its lowering reported."""

    frame: ContextFrame
    ledger: BudgetLedger
    total_tokens: int = 0
    request: ModelRequest = field(default_factory=dict)
    lowered: list[Diagnostic] = field(default_factory=list)
    #: what the budget left out that a reader would miss (:meth:`Recorder.losses`)
    warnings: list[Diagnostic] = field(default_factory=list)


class _Allocator:
    """The grant loop: who gets how many tokens, in grant order, at the largest total whose
    exact count fits. What a component is cut to is the fitters' job
    (:class:`~compiler.fit.text.TextFitter`, :class:`~compiler.fit.windows.WindowFitter`);
    the journal and the ledger are the :class:`~compiler.fit.record.Recorder`'s."""

    def __init__(
        self,
        frame: ContextFrame,
        *,
        dialect: Dialect,
        counter: TokenCounter,
        model: str,
        total: TotalBudget,
        budgets: CategoryBudgets,
        text: TextFitter,
        windows: WindowFitter,
        record: Recorder,
        lowering: LoweringOptions = NO_OPTIONS,
    ) -> None:
        self.frame = frame
        self.lowering = lowering
        self.dialect = dialect
        self.counter = counter
        self.model = model
        self.budget = total.total
        self.budgets = budgets.as_dict()
        self.costs = Costs(dialect, counter, edges=bool(frame.metadata.get(AS_WRITTEN)))
        self.text = text
        self.windows = windows
        self.record = record
        self.floor = floor_tokens(frame, dialect=dialect, counter=counter, model=model)
        #: each chat history's newest turn, by component index (:mod:`compiler.fit.turns`)
        self.turns = newest_turns(frame, self.costs, dialect, counter)
        # the state of the current grant run
        self.items: list[Item] = []
        self.near = Neighbours(self.items)  # the items seams join, as the grant run goes
        self.pools: dict[str, int | None] = {}  # what is left of each category's budget
        self.left: int | None = None  # what is left of the total
        self.virtual: int | None = None  # the total of the grant run under way
        self.dropped_total = False
        self.dropped_cats: set[str] = set()
        self.fill: Filler | None = None  # the components that fill what history leaves

    def run(self) -> FitResult:
        """Grant at the largest total that the exact count of the request fits.

        The grant loop estimates message framing and seams (:meth:`Costs.overhead`); when
        the exact count is over the budget, the loop is run again from the start with a
        total one token smaller (after :data:`EXACT_STEPS` tries, smaller by the excess), so
        room is always handed out in grant order and never taken back from one component.
        """
        total, virtual, tries = 0, self.budget, 0
        while True:
            self.grant(virtual)
            frame = self.fitted()
            report: list[Diagnostic] = []
            request = self.dialect.lower(frame, self.model, self.lowering, report)
            total = self.dialect.count_request(request, self.counter)
            counted = counted_tokens(  # as the budget counts it
                frame, total, dialect=self.dialect, counter=self.counter, model=self.model,
                lowering=self.lowering,
            )  # fmt: skip
            if self.budget is None or virtual is None or counted <= self.budget:
                break
            tries += 1
            if tries > MAX_RUNS:  # the promise cannot be kept: never loop for ever
                raise InternalError(
                    code="internal.count_mismatch",
                    message=f"after {MAX_RUNS} grant runs the request still has {counted} "
                    f"tokens, over the budget of {self.budget}",
                    hint="this is a bug in agent-prompt-compiler; please report it with the inputs",
                )
            virtual -= 1 if tries <= EXACT_STEPS else counted - self.budget
        self.record.flush()
        ledger = self.record.ledger(self.items, total)
        ledger.squash_saved_tokens = counted - total
        losses = self.record.losses(self.items)
        return FitResult(frame, ledger, total, request, report, losses)

    def fitted(self, turns: bool = False, required: bool = False) -> ContextFrame:
        """The frame of the fitted components; a history the assembler left lazy (see
        :class:`~compiler.inputs.lazy_chat.LazyChat`) and the fit kept whole is a list.
        ``turns``: with the newest turn of each history not fitted yet, where it will be;
        ``required``: with the required components not fitted yet whole (a history apart)."""
        out = []
        for i in self.items:
            if i.outcome.out is not None:
                out.append(_listed(i.outcome.out))
            elif turns and (turn := self.turns.get(i.index)) is not None:
                out.append(turn_part(i.comp, turn.keep))
            elif required and i.comp.required and i.comp.kind != ComponentKind.CHAT_HISTORY:
                out.append(_listed(i.comp))
        return ContextFrame(components=out, metadata=self.frame.metadata)

    def count(self, frame: ContextFrame) -> int:
        """The exact count of ``frame``'s request, as the budget counts it."""
        return self.dialect.count_request(
            self.dialect.lower(as_counted(frame), self.model), self.counter
        )

    def grant(self, virtual: int | None) -> None:
        """One grant run at the total ``virtual``: fresh state, the fixed components counted
        (the exact floor), then the others in grant order."""
        self.items = [
            Item(
                index=i,
                comp=c,
                strategy=(s := effective_strategy(c)),
                category=category_of(c),
                fixed=s == "fail",
            )
            for i, c in enumerate(self.frame.components)
        ]
        self.pools = dict(self.budgets)
        for turn in self.turns.values():  # each newest turn's shares of the category pools
            turn.hold(self.pools, -1)
        self.record.reset()
        self.dropped_total, self.dropped_cats = False, set()
        self.fill = Filler(self.items, self.dialect, self.counter)
        for item in self.items:
            if item.fixed:
                self.fit_fixed(item)
            elif item.empty:
                item.outcome = Outcome(out=item.comp)  # an empty block still separates text
        if self.budget is not None and self.floor > self.budget:
            with_turn = " (the newest turn of the chat included)" if self.turns else ""
            self.fail(
                None,
                f"the parts that cannot be cut need {self.floor} tokens{with_turn}; the "
                f"budget is {self.budget}",
                self.floor,
            )
        self.virtual = virtual
        self.left = None if virtual is None else virtual - self.floor
        order = sorted(
            (i for i in self.items if not i.fixed),
            key=lambda i: (
                not i.comp.required,
                -i.comp.priority,
                i.strategy != "drop_optional",
                i.index,
            ),
        )
        self.near = Neighbours(self.items)
        for item in order:
            self.grant_item(item)
            self.near.update(item)

    def fit_fixed(self, item: Item) -> None:
        """A component that is never cut: counted, checked against its own and its
        category's budget (the floor counted it against the total)."""
        comp = item.comp
        offered = self.costs.cost(comp)
        own, cat = comp.token_budget, self._pool(item.category)
        item.turn = Turn(
            AppliedBudget(own=own, category=cat, total=self.budget), min_present(own, cat)
        )
        why = "required" if comp.required else f"{comp.kind.value} is never cut implicitly"
        if comp.strategy == "fail":
            why = "strategy=fail"
        item.outcome = Outcome(out=comp, offered=offered, used=offered, reason=why)
        if own is not None and offered > own:
            self.fail(item, f"{comp.id} needs {offered} tokens; its budget={own}", own)
        if cat is not None and offered > cat:
            self.fail(
                item,
                f"{comp.id} needs {offered} tokens; {cat} are left of the {item.category} budget",
                cat,
            )
        self.charge(item, None)  # the floor counted it

    def grant_item(self, item: Item) -> None:
        own, turn = item.comp.token_budget, self.turns.get(item.index)
        if turn is not None:
            turn.hold(self.pools, 1)  # its own shares, back
            if problem := turn.problem(item.comp.id, own, self.pools):
                self.fail(item, *problem, TURN_HINT)
        cat = self._pool(item.category)
        if turn is not None and self.left is not None:
            self.left += turn.cost  # the floor held the newest turn's room until now
        framing = self.costs.overhead(self.near, item) if not item.empty else 0
        left = self.left
        if (
            self.fill is not None
            and self.fill.left is not None
            and FILL_BLOCK in item.comp.metadata
        ):
            left = self.fill.left  # a fill component's room: what the history left
        room = None if left is None else max(0, left - framing)  # never a negative grant
        item.turn = Turn(
            applied=AppliedBudget(own=own, category=cat, total=room),
            limit=min_present(own, cat, room),
            category_left=cat,
            summary_left=self.pools["summary"],
            pools=dict(self.pools),
        )
        if item.empty:
            item.outcome = replace(item.outcome, offered=0)
        elif FILL_BLOCK in item.comp.metadata and self.fill is not None:
            self.grant_fill(item, self.fill)
        elif item.strategy == "drop_optional" or item.comp.kind == ComponentKind.TOOL_DEFINITIONS:
            self.grant_whole(item, framing)
        else:
            self.grant_elastic(item, framing)

    def grant_whole(self, item: Item, framing: int) -> None:
        """Keep the component whole, or drop it (and every whole one after it that competes
        for the same budget)."""
        applied = item.turn.applied
        own, cat, room = applied.own, applied.category, applied.total
        offered = self.costs.cost(item.comp)
        blocked = self.dropped_total or item.category in self.dropped_cats  # by a drop before
        why = None
        if own is not None and offered > own:
            why = f"{offered} tokens is over its own budget={own}"
        elif item.category in self.dropped_cats or (cat is not None and offered > cat):
            why = f"over the {item.category} budget ({cat} tokens left)"
            self.dropped_cats.add(item.category or "")
        elif self.dropped_total or (room is not None and offered > room):
            why = f"over the total budget ({room} tokens left)"
            self.dropped_total = True
        if why is not None and not blocked and self.keep_pieces(item, framing):
            return
        if why is not None and item.index in self.turns:  # kept whole or not at all
            self.fail(item, f"{item.comp.id} cannot be dropped: it holds the newest turn; {why}",
                      room)  # fmt: skip
        if why is not None:
            item.outcome = Outcome(
                offered=offered,
                action="dropped",
                reason=why,
                messages_kept=0 if item.comp.messages is not None else None,
                skipped={"detail": why},
            )
            self.record.budget_event(item)
            return
        item.outcome = Outcome(out=item.comp, offered=offered, used=offered)
        self.charge(item, framing + offered)

    def grant_elastic(self, item: Item, framing: int) -> None:
        """Fit an elastic component to its limit. If the total was that limit and it had to
        be cut, the room it was granted is spent whatever the cut's rounding left over, and
        nothing kept or dropped whole comes after it."""
        limit, room = item.turn.limit, item.turn.applied.total
        bound = room is not None and limit == room
        spent = 0
        for _ in range(3):
            item.outcome = fate = self.fit_elastic(item, limit)
            out = fate.out
            spent = 0 if out is None else fate.used + framing
            if out is not None and out.inline_content != item.comp.inline_content:
                spent = fate.used + self.costs.overhead(self.near, item, out.inline_content)
            over = 0 if self.left is None or limit is None else spent - self.left
            if over <= 0 or out is None or limit is None:
                break
            limit, bound = limit - over, True  # the cut's own seams: cut a little more
        if self._near_whole(item, limit) and self._whole_fits(item):
            return  # the estimate over-counted seams: the exact count says it fits whole
        self.record.budget_event(item)  # one journal event, for the fit that stands
        if item.comp.required and item.outcome.out is None:
            self.fail(item, f"{item.comp.id} is required and nothing of it fits", limit)
        if item.outcome.cut and bound:
            # what the cut's rounding leaves flows on to the components that can shrink
            # (and the fill); whole components after it are dropped, so that a bigger
            # budget never keeps fewer of them
            self.charge(item, spent)
            if self.fill is not None and self.left is not None:
                self.fill.left = self.left
            self.dropped_total = True
        else:
            self.charge(item, spent)

    def keep_pieces(self, item: Item, framing: int) -> bool:
        """A text of whole pieces (a world-info block's entries, see
        :data:`~compiler._base.frame.PIECES`) over its limit keeps its leading pieces that fit,
        when any does; that counts as a cut to fit, so the whole components after it that
        compete for the same budget are dropped (as after a drop)."""
        applied = item.turn.applied
        limit = min_present(applied.own, applied.category, applied.total)
        fate = pieces_outcome(item.comp, limit, self.costs.cost)
        if fate is None or limit is None:
            return False
        self.dropped_total = False  # set by the drop this keep replaces
        self.dropped_cats.discard(item.category or "")
        item.outcome, used = fate, fate.used
        self.record.budget_event(item)
        self.charge(item, framing + used)
        if limit == applied.total:
            self.dropped_total = True
        elif limit == applied.category:
            self.dropped_cats.add(item.category or "")
        return True

    def grant_fill(self, item: Item, fill: Filler) -> None:
        """A fill component (see :data:`~compiler._base.frame.FILL_BLOCK`): kept when it fits the
        room left, else its block stops; it never stops the components after its block."""
        left = self.left if fill.left is None else fill.left
        offered = self.costs.cost(item.comp)
        cat = self._pool(item.category)
        why = fill.refusal(item, left)
        if why is None and cat is not None and offered > cat:
            why = f"over the {item.category} budget ({cat} tokens left)"
        if why is not None:
            fill.stop(item)
            item.outcome = Outcome(
                offered=offered, action="dropped", reason=why, skipped={"detail": why}
            )
            self.record.budget_event(item)
            return
        item.outcome = Outcome(out=item.comp, offered=offered, used=offered)
        cost = fill.cost(item)
        if fill.left is None:
            self.charge(item, cost)
        else:
            self.charge(item, cost)  # the fill's room is what is left of the total
            fill.left -= cost

    def _near_whole(self, item: Item, limit: int | None) -> bool:
        """Whether a cut component is worth an exact count whole: a required one nothing of
        which fit, or a text the estimate put just over its limit (an estimating dialect
        counts each text on its own with a little more than in the merged message; a
        history or message block is never counted whole for this)."""
        fate = item.outcome
        if item.comp.required and fate.out is None:
            return True
        if not fate.cut or item.comp.messages is not None or limit is None:
            return False
        offered = fate.offered if fate.offered is not None else self.costs.cost(item.comp)
        return offered - limit <= max(NEAR, limit // 20)

    def _whole_fits(self, item: Item) -> bool:
        """Keep a component whole if the exact count of what is kept so far, with it, is
        within the total of this grant run (the seam estimate can over-count by a token or
        two, which would fail a required part at exactly its need), with the room of the
        newest turns still to come held.

        A required component (nothing of which fit, else it is cut) is held to the budget
        itself: a grant run's total is smaller only because what came after it in grant
        order (optional) went over in an earlier run. And it is kept when the request fits
        with the required components still to come as well, whole: a request can cost less
        with more of them (SillyTavern's Claude layout opens with a placeholder user turn
        only when no user text comes first)."""
        if self.virtual is None:
            return False
        required = item.comp.required and self.budget is not None
        cap = self.budget if required and self.budget is not None else self.virtual
        cost = self.costs.cost(item.comp)
        own, cat = item.turn.applied.own, item.turn.applied.category
        if (own is not None and cost > own) or (cat is not None and cost > cat):
            return False
        before = item.outcome
        item.outcome = Outcome(out=item.comp, offered=cost, used=cost)
        total = self.count(self.fitted(turns=True))  # the turns to come too
        if total > cap and not (required and self.count(self.fitted(True, True)) <= cap):
            item.outcome = before
            return False
        self.charge(item, None)
        held = sum(  # what the newest turns still to come take back at their turn
            t.cost
            for i, t in self.turns.items()
            if i != item.index and self.items[i].outcome.out is None
        )
        if held:  # the room left, less what the turns take back (their estimate), or less
            # what they add where they will be when that is more (text after a chat costs
            # more beside it: Anthropic sends system text after the chat as a tagged note)
            total = max(total, self.count(self.fitted()) + held)
        self.left = self.virtual - total
        return True

    def fit_elastic(self, item: Item, limit: int | None) -> Outcome:
        """What the component's fitter makes of it within ``limit``."""
        if item.comp.kind == ComponentKind.CHAT_HISTORY:
            turn = self.turns.get(item.index)
            return self.windows.history(item, limit, 0 if turn is None else turn.keep)
        if item.comp.messages is not None:
            return self.windows.tool_results(item, limit)
        return self.text.fit(item, limit)

    def _pool(self, category: str | None) -> int | None:
        return self.pools.get(category) if category else None

    def charge(self, item: Item, spent: int | None) -> None:
        """Take ``spent`` tokens from the total (None: leave it to the caller) and what the
        item uses from its category and the summary budget."""
        fate = item.outcome
        if self.left is not None and spent is not None:
            self.left -= spent
        for name, used in self.record.split(item).items():  # a history's text per category
            if self.pools.get(name) is not None:
                self.pools[name] = (self.pools[name] or 0) - used
        if fate.summary_tokens and self.pools["summary"] is not None:
            self.pools["summary"] = (self.pools["summary"] or 0) - fate.summary_tokens

    def fail(
        self, item: Item | None, message: str, limit: int | None, hint: str | None = None
    ) -> NoReturn:
        raise self.record.failure(self.items, item, message, limit, hint)


def _listed(comp: Component) -> Component:
    """``comp`` with its messages as a list (a lazily made history is read whole here)."""
    if comp.messages is None or type(comp.messages) is list:
        return comp
    return comp.model_copy(update={"messages": list(comp.messages)})


def fit(
    frame: ContextFrame,
    *,
    dialect: Dialect,
    counter: TokenCounter,
    model: str,
    budget: int | TotalBudget | None,
    journal: Journal,
    budgets: CategoryBudgets | None = None,
    summarizer: Summarizer | None = None,
    cache_stable: int = 0,
    summaries: Mapping[str, str] | None = None,
    summary_cache: SummaryCache | None = None,
    lowering: LoweringOptions = NO_OPTIONS,
    prices: PriceMemo | None = None,
) -> FitResult:
    """Fit ``frame`` into its budgets (see the module docstring); None: no total budget.

    ``cache_stable`` is the history cut step in messages (0: off). ``summaries`` maps a
    component id or kind to a precomputed summary. ``summary_cache`` holds the results of
    ``summarizer`` across compiles (the caller's; None: a fresh one for this fit).
    ``lowering``: the options the request is lowered with (:attr:`FitResult.request`).
    ``prices``: the caller's prices of history messages, read and kept turn after turn
    (:mod:`compiler.fit.prices`; a session's own).
    """
    total = (
        budget
        if isinstance(budget, TotalBudget)
        else TotalBudget(budget, None, 0, "none" if budget is None else "--budget")
    )
    budgets = budgets or CategoryBudgets()
    step = max(0, cache_stable)
    chain = SummaryChain(
        counter,
        user=summarizer,
        cache=summary_cache if summary_cache is not None else SummaryCache(),
    )
    text = TextFitter(counter, chain, summaries or {}, plain=bool(frame.metadata.get(ROLEPLAY)))
    book = prices.book((dialect.name, counter)) if prices is not None else None

    def run(frame: ContextFrame) -> FitResult:
        windows = WindowFitter(
            dialect, text, step=step, search_tool=search_tool_alias(frame), book=book
        )
        record = Recorder(
            journal, dialect=dialect, counter=counter, model=model, total=total,
            budgets=budgets.as_dict(), step=step,
        )  # fmt: skip
        return _Allocator(
            frame, dialect=dialect, counter=counter, model=model, total=total,
            budgets=budgets, text=text, windows=windows, record=record, lowering=lowering,
        ).run()  # fmt: skip

    try:
        fitted = run(frame)
    except BudgetError as over:  # once more without the text inserted into the newest turn
        if (lean := without_inserted(frame)) is None:
            raise
        try:
            fitted = run(lean[0])
        except BudgetError:
            raise over from None
        fitted.warnings.extend(lean[1])
    if book is not None:
        book.close()
    return fitted
