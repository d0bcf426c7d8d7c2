"""Fitting a frame into its budgets: the allocator.

Budgets compose: every component fits its own ``budget=N``, its category's budget (from the
resolved profile; shared by the components of that category, see
:data:`compiler.fit.budgets.CATEGORY_OF`) and the total. Summaries count against the summary
budget.

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
:func:`floor_tokens`); if they exceed a budget the compile fails. The others get what is
left in *grant order*: required first; then higher ``priority`` first; at equal priority
components that are kept or dropped whole come before those that can shrink (so history and
tool results take the remainder); then the earlier in the frame first. Each is charged its
content and the message framing it adds to what is already granted. The tie rule for drops
follows: an optional component that does not fit is dropped, and so is every component kept
or dropped whole after it in grant order (lowest priority, then latest in the frame, goes
first), so a lower-ranked one is never kept while a higher-ranked one is dropped. A component
cut to fit the total spends all the room it was granted (the rounding of its cut is not
handed down) and counts as such a drop for the whole components after it.

Monotone: a bigger total budget never keeps fewer whole components (the set kept is a
superset), and the request never shrinks by more than the rounding of the one component cut
to fit (whole history messages, a truncation's last tokens, a summary). By construction: up
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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.dialect import Dialect
from compiler.errors import BudgetError
from compiler.fit.budgets import CATEGORIES, CATEGORY_OF, CategoryBudgets, TotalBudget
from compiler.fit.history import MIN_SUMMARY, fit_history, min_present
from compiler.fit.ledger import Action, AppliedBudget, BudgetLedger, CategoryTotal, LedgerEntry
from compiler.fit.summarize import Summarizer, SummaryCache, SummaryChain, SummaryRequest
from compiler.fit.truncate import Mode, truncate_text
from compiler.frame import (
    MESSAGE_KINDS,
    Component,
    ComponentKind,
    ContextFrame,
    Message,
    Role,
    Strategy,
)
from compiler.journal import Journal
from compiler.tokens import TokenCounter

#: ``<<agent.tool_results mode="summary">>``: each result is at most this many tokens.
SUMMARY_MODE_TOKENS = 200

#: Kinds kept whole unless the author gives them a strategy.
ALWAYS_KEPT = frozenset(
    {ComponentKind.SYSTEM_INSTRUCTION, ComponentKind.PRESET_GUIDE, ComponentKind.TOOL_DEFINITIONS}
)
#: Kinds whose truncation keeps head and tail (the rest keep the head).
HEAD_TAIL = frozenset(
    {ComponentKind.WORKSPACE_FILE, ComponentKind.DIFF_SUMMARY, ComponentKind.TOOL_RESULTS}
)
#: Over the budget by a seam, the grant loop runs again with a total this many times one
#: token smaller, then smaller by the excess (a bound on the work; seams rarely need a second run).
EXACT_STEPS = 32
MIN_KEEP = 8  # a text cut to fewer tokens than this is dropped instead
#: Characters each side of a seam between two texts that the grant loop tokenizes together.
SEAM_WINDOW = 32


@dataclass
class FitResult:
    """The fitted frame, the ledger, and the request's exact token count."""

    frame: ContextFrame
    ledger: BudgetLedger
    total_tokens: int = 0


def units(messages: list[Message]) -> list[list[Message]]:
    """Messages grouped into units that are kept or cut together."""
    out: list[list[Message]] = []
    for m in messages:
        if m["role"] == "tool" and out and bool(out[-1][0].get("toolCalls")):
            out[-1].append(m)
        else:
            out.append([m])
    return out


def _key(comp: Component | None) -> tuple[int, str] | None:
    """The message an inline component joins: its group and role."""
    return None if comp is None else (comp.group, comp.role)


def effective_strategy(comp: Component) -> Strategy:
    """The component's strategy, or the seed's default for it."""
    if comp.strategy is not None:
        strategy: Strategy = comp.strategy
    elif comp.kind in (ComponentKind.CHAT_HISTORY, ComponentKind.TOOL_RESULTS):
        strategy = "summarize"
    elif comp.required or comp.kind in ALWAYS_KEPT:
        strategy = "fail"
    else:
        strategy = "drop_optional"
    if comp.required and strategy == "drop_optional":
        strategy = "fail"  # a required component is never dropped
    return strategy


@dataclass
class _Item:
    index: int
    comp: Component
    strategy: Strategy
    category: str | None
    fixed: bool
    offered: int | None = None
    out: Component | None = None
    applied: AppliedBudget = field(default_factory=AppliedBudget)
    limit: int | None = None
    pools: tuple[int | None, int | None] = (None, None)  # category, summary left at its turn
    used: int = 0
    summary_tokens: int = 0
    action: Action = "kept"
    reason: str | None = None
    messages_kept: int | None = None
    counted_all: bool = True
    cut: bool = False  # an elastic component was cut (or dropped) to fit its limit

    @property
    def empty(self) -> bool:
        c = self.comp
        return not (c.inline_content or c.messages or c.tools)


class _Allocator:
    def __init__(
        self,
        frame: ContextFrame,
        *,
        dialect: Dialect,
        counter: TokenCounter,
        model: str,
        total: TotalBudget,
        budgets: CategoryBudgets,
        journal: Journal,
        chain: SummaryChain,
        cache_stable: int,
        summaries: Mapping[str, str],
    ) -> None:
        self.frame = frame
        self.dialect = dialect
        self.counter = counter
        self.model = model
        self.budget = total.total
        self.total = total
        self.budgets = budgets.as_dict()
        self.journal = journal
        self.chain = chain
        self.step = cache_stable
        self.summaries = summaries
        self.floor = floor_tokens(frame, dialect=dialect, counter=counter, model=model)
        self.frames: dict[str, int] = {}
        self.items: list[_Item] = []
        self.pools: dict[str, int | None] = {}
        self.left: int | None = None
        self.dropped_total = False
        self.dropped_cats: set[str] = set()
        self.skips: list[dict[str, Any]] = []  # the skip events of the current grant run
        #: the name the model sees for chat.search, when the request offers it
        self.search_tool = next(
            (
                tool["alias"]
                for c in frame.components
                if c.kind == ComponentKind.TOOL_DEFINITIONS
                for tool in c.tools or ()
                if tool["name"] == "chat.search"
            ),
            None,
        )

    # -- costs -------------------------------------------------------------------------
    def cost(self, comp: Component) -> int:
        if comp.kind == ComponentKind.TOOL_DEFINITIONS:
            return self.dialect.tools_tokens(comp.tools or [], self.counter)
        if comp.messages is not None:
            return sum(self.dialect.message_tokens(m, self.counter) for m in comp.messages)
        return self.counter.count(comp.inline_content or "")

    def frame_cost(self, role: Role) -> int:
        """What a message of ``role`` costs around its content."""
        if role not in self.frames:
            empty: Message = {"role": role, "content": ""}
            self.frames[role] = self.dialect.message_tokens(empty, self.counter)
        return self.frames[role]

    def neighbour(self, index: int, step: int) -> Component | None:
        """The nearest present inline text before (step -1) or after (step 1) ``index``;
        None when a message block or the edge comes first."""
        j = index + step
        while 0 <= j < len(self.items):
            out = self.items[j].out
            if out is not None:
                if out.kind in MESSAGE_KINDS:
                    return None
                if out.kind != ComponentKind.TOOL_DEFINITIONS and out.inline_content:
                    return out
            j += step
        return None

    def overhead(self, item: _Item, text: str | None = None) -> int:
        """What the request gains besides the item's content (``text``, else all of it) when
        it joins what is present: a message of its own or one it splits in two, the merges
        at its seams, whitespace trimmed at a message's edges, tool framing. An estimate
        (seams are looked at :data:`SEAM_WINDOW` characters wide); :meth:`run` decides on
        the exact count."""
        comp = item.comp
        if comp.kind == ComponentKind.TOOL_DEFINITIONS:
            tools = [t for i in self.items if i.out is not None for t in i.out.tools or []]
            now = self.dialect.tools_tokens(tools, self.counter)
            grown = self.dialect.tools_tokens([*tools, *(comp.tools or [])], self.counter)
            return grown - now - self.cost(comp)
        text = comp.inline_content if text is None else text
        if comp.kind not in MESSAGE_KINDS and not text:
            return 0
        before, after = self.neighbour(item.index, -1), self.neighbour(item.index, 1)
        kb, ka = _key(before), _key(after)
        seam, trim = self.seam, self.trimmed
        split = 0
        if before is not None and after is not None and kb == ka:  # one message now
            b, a = before.inline_content or "", after.inline_content or ""
            split = self.frame_cost(before.role) - seam(b, a) + trim(b, False) + trim(a, True)
        if comp.kind in MESSAGE_KINDS or not text:
            return split  # messages are counted with them; the text around cannot merge
        key = (comp.group, comp.role)
        b = before.inline_content or "" if before is not None else ""
        a = after.inline_content or "" if after is not None else ""
        if kb == key and ka == key:
            return seam(b, text) + seam(text, a) - seam(b, a)
        if kb == key:
            return seam(b, text) + trim(text, False) - trim(b, False)
        if ka == key:
            return seam(text, a) + trim(text, True) - trim(a, True)
        return self.frame_cost(comp.role) + trim(text, None) + split

    def seam(self, a: str, b: str) -> int:
        """Tokens that joining ``a`` and ``b`` adds to their separate counts (often -1)."""
        a, b = a[-SEAM_WINDOW:], b[:SEAM_WINDOW]
        return self.counter.count(a + b) - self.counter.count(a) - self.counter.count(b)

    def trimmed(self, text: str, head: bool | None) -> int:
        """Tokens that trimming whitespace saves at the head (True), tail (False) or both
        (None) of ``text`` when it stands at a message's edge (zero or negative)."""
        count = self.counter.count
        if head is None and len(text) <= 2 * SEAM_WINDOW:
            return count(text.strip()) - count(text)
        if head is None:
            return self.trimmed(text, True) + self.trimmed(text, False)
        w = text[:SEAM_WINDOW] if head else text[-SEAM_WINDOW:]
        return count(w.lstrip() if head else w.rstrip()) - count(w)

    # -- the run -----------------------------------------------------------------------
    def run(self) -> FitResult:
        """Grant at the largest total that the exact count of the request fits.

        The grant loop estimates message framing and seams (:meth:`overhead`); when the
        exact count is over the budget, the loop is run again from the start with a total
        one token smaller (after :data:`EXACT_STEPS` tries, smaller by the excess), so room
        is always handed out in grant order and never taken back from one component.
        """
        total, virtual, tries = 0, self.budget, 0
        while True:
            self.grant(virtual)
            frame = self.fitted()
            total = self.dialect.count_request(self.dialect.lower(frame, self.model), self.counter)
            if self.budget is None or virtual is None or total <= self.budget:
                break
            tries += 1
            virtual -= 1 if tries <= EXACT_STEPS else total - self.budget
        self.flush()
        ledger = self.ledger(self.items)
        ledger.total_tokens = total
        ledger.overhead_tokens = total - sum(e.tokens_used for e in ledger.entries)
        return FitResult(frame, ledger, total)

    def grant(self, virtual: int | None) -> None:
        """One grant run at the total ``virtual``: fresh state, the fixed components counted
        (the exact floor), then the others in grant order."""
        self.items = [
            _Item(
                index=i,
                comp=c,
                strategy=(s := effective_strategy(c)),
                category=CATEGORY_OF.get(c.kind),
                fixed=s == "fail",
            )
            for i, c in enumerate(self.frame.components)
        ]
        self.pools = dict(self.budgets)
        self.skips = []
        self.dropped_total, self.dropped_cats = False, set()
        for item in self.items:
            if item.fixed:
                self.fit_fixed(item)
            elif item.empty:
                item.out = item.comp  # an empty message block still separates the text
        if self.budget is not None and self.floor > self.budget:
            self.fail(
                None,
                f"the parts that cannot be cut need {self.floor} tokens; the budget is "
                f"{self.budget}",
                self.floor,
            )
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
        for item in order:
            self.grant_item(item)

    def grant_item(self, item: _Item) -> None:
        own, cat = item.comp.token_budget, self._pool(item.category)
        framing = self.overhead(item) if not item.empty else 0
        room = None if self.left is None else self.left - framing
        item.applied = AppliedBudget(own=own, category=cat, total=room)
        item.pools = (cat, self.pools["summary"])
        item.limit = min_present(own, cat, room)
        if item.empty:
            item.offered = 0
        elif item.strategy == "drop_optional" or item.comp.kind == ComponentKind.TOOL_DEFINITIONS:
            self.grant_whole(item, framing)
        else:
            self.grant_elastic(item, framing)

    def grant_elastic(self, item: _Item, framing: int) -> None:
        """Fit an elastic component to its limit. If the total was that limit and it had to
        be cut, the room it was granted is spent whatever the cut's rounding left over, and
        nothing kept or dropped whole comes after it."""
        limit, room = item.limit, item.applied.total
        bound = room is not None and limit == room
        spent, logged = 0, len(self.skips)
        for _ in range(3):
            del self.skips[logged:]  # one journal event for the fit that stands
            self.fit_elastic(item, limit)
            out = item.out
            spent = 0 if out is None else item.used + framing
            if out is not None and out.inline_content != item.comp.inline_content:
                spent = item.used + self.overhead(item, out.inline_content)  # its new seams
            over = 0 if self.left is None or limit is None else spent - self.left
            if over <= 0 or out is None or limit is None:
                break
            limit, bound = limit - over, True  # the cut's own seams: cut a little more
        if item.cut and bound:
            self.charge(item, None)
            self.left, self.dropped_total = 0, True
        else:
            self.charge(item, spent)

    def grant_whole(self, item: _Item, framing: int) -> None:
        own, cat, room = item.applied.own, item.applied.category, item.applied.total
        item.offered = self.cost(item.comp)
        why = None
        if own is not None and item.offered > own:
            why = f"{item.offered} tokens is over its own budget={own}"
        elif item.category in self.dropped_cats or (cat is not None and item.offered > cat):
            why = f"over the {item.category} budget ({cat} tokens left)"
            self.dropped_cats.add(item.category or "")
        elif self.dropped_total or (room is not None and item.offered > room):
            why = f"over the total budget ({room} tokens left)"
            self.dropped_total = True
        if why is not None:
            self.drop(item, why)
            return
        item.out, item.used = item.comp, item.offered
        self.charge(item, framing + item.used)

    def _pool(self, category: str | None) -> int | None:
        return self.pools.get(category) if category else None

    def charge(self, item: _Item, spent: int | None) -> None:
        """Take ``spent`` tokens from the total (None: leave it to the caller) and what the
        item uses from its category and the summary budget."""
        if self.left is not None and spent is not None:
            self.left -= spent
        if item.category and self.pools.get(item.category) is not None:
            self.pools[item.category] = (self.pools[item.category] or 0) - (
                item.used - item.summary_tokens
            )
        if item.summary_tokens and self.pools["summary"] is not None:
            self.pools["summary"] = (self.pools["summary"] or 0) - item.summary_tokens

    def fit_fixed(self, item: _Item) -> None:
        comp = item.comp
        item.offered = self.cost(comp)
        item.used = item.offered
        item.out = comp
        own, cat = comp.token_budget, self._pool(item.category)
        item.applied = AppliedBudget(own=own, category=cat, total=self.budget)
        item.limit = min_present(own, cat)
        why = "required" if comp.required else f"{comp.kind.value} is never cut implicitly"
        if comp.strategy == "fail":
            why = "strategy=fail"
        item.reason = why
        if own is not None and item.offered > own:
            self.fail(item, f"{comp.id} needs {item.offered} tokens; its budget={own}", own)
        if cat is not None and item.offered > cat:
            self.fail(
                item,
                f"{comp.id} needs {item.offered} tokens; {cat} are left of the "
                f"{item.category} budget",
                cat,
            )
        self.charge(item, None)  # the floor counted it

    def drop(self, item: _Item, why: str) -> None:
        item.out, item.used, item.action = None, 0, "dropped"
        item.reason = why
        item.messages_kept = 0 if item.comp.messages is not None else None
        self.skipped(item, detail=why)

    def skipped(self, item: _Item, **extra: Any) -> None:
        """The journal's ``context_component_skipped`` (reason budget) for a cut or drop."""
        self.skips.append(
            {
                "component": item.comp.id,
                "kind": item.comp.kind.value,
                "reason": "budget",
                "action": item.action,
                **extra,
            }
        )

    def flush(self) -> None:
        """Into the journal: the events of the grant run that stands (runs that were over the
        budget leave none)."""
        for payload in self.skips:
            self.journal.emit("context_component_skipped", **payload)
        self.skips = []

    def fail(self, item: _Item | None, message: str, budget: int | None) -> None:
        ledger = self.ledger(self.items)
        self.flush()
        self.journal.emit(
            "context_assembly_failed",
            "error",
            code="context.budget_exceeded",
            component=item.comp.id if item else None,
        )
        raise BudgetError(
            code="context.budget_exceeded",
            message=message,
            hint="raise --budget (or the category budget), or give the component a cutting "
            "strategy (strategy=truncate|summarize) or required=false",
            details={
                "budget": self.budget,
                "limit": budget,
                "component": item.comp.id if item else None,
                "ledger": ledger.model_dump(mode="json", by_alias=True),
            },
        )

    # -- shrinking components ----------------------------------------------------------
    def fit_elastic(self, item: _Item, limit: int | None) -> None:
        comp = item.comp
        item.cut = True  # until a fit keeps it as offered
        if comp.kind == ComponentKind.CHAT_HISTORY:
            self.fit_history(item, limit)
        elif comp.messages is not None:
            self.fit_messages(item, limit)
        else:
            self.fit_text(item, limit)
        if comp.required and item.out is None:
            self.fail(item, f"{comp.id} is required and nothing of it fits", limit)

    def precomputed(self, comp: Component) -> str | None:
        if comp.metadata.get("window") == "tail":
            return None  # a summary of the whole chat would show its hidden head
        value = comp.metadata.get("summary")
        if isinstance(value, str) and value.strip():
            return value
        return self.summaries.get(comp.id) or self.summaries.get(comp.kind.value)

    def fit_history(self, item: _Item, limit: int | None) -> None:
        comp = item.comp
        msgs = comp.messages or []
        cat, summary_left = item.pools
        fitted = fit_history(
            msgs,
            limit=min_present(comp.token_budget, limit, item.applied.total),
            message_limit=cat,
            summary_limit=summary_left,
            summarize=item.strategy == "summarize",
            step=self.step,
            dialect=self.dialect,
            counter=self.counter,
            chain=self.chain,
            component_id=comp.id,
            precomputed=self.precomputed(comp),
            search_tool=self.search_tool,
        )
        item.used, item.summary_tokens = fitted.used, fitted.summary_tokens
        item.counted_all = fitted.counted_all
        item.offered = fitted.used if fitted.counted_all else None
        kept = len(msgs) - fitted.cut
        item.messages_kept = kept
        if fitted.cut == 0:
            item.out, item.action, item.reason, item.cut = comp, "kept", None, False
            return
        item.out = comp.model_copy(update={"messages": fitted.messages})
        item.action = "summarized" if fitted.summarizer not in (None, "note") else "truncated"
        extra = {
            None: "",
            "note": "; a note says they were left out",
        }.get(fitted.summarizer, f"; a {fitted.summarizer} summary stands in their place")
        what = "the oldest message" if fitted.cut == 1 else f"the {fitted.cut} oldest messages"
        item.reason = f"cut {what} to fit the budget{extra}"
        if self.step:
            item.reason += f" (cache-stable step {self.step})"
        if not fitted.messages:
            item.out, item.action = None, "dropped"
        self.skipped(item, messagesDropped=fitted.cut)

    def summary_mode(self, comp: Component, msgs: list[Message], item: _Item) -> list[Message]:
        """Each tool result over :data:`SUMMARY_MODE_TOKENS`, summarized (else truncated)."""
        out: list[Message] = []
        for m in msgs:
            text = m["content"] or ""
            size = self.counter.count(text) if m["role"] == "tool" else 0
            if size > SUMMARY_MODE_TOKENS:
                new = self.summarize_text(comp, text, size, SUMMARY_MODE_TOKENS)
                if new is None:
                    new = truncate_text(text, SUMMARY_MODE_TOKENS, self.counter, "head_tail")
                item.summary_tokens += self.counter.count(new)
                m = {**m, "content": new}
            out.append(m)
        return out

    def with_excerpt(self, summary: str, text: str, limit: int, mode: Mode) -> str:
        """The summary, followed by as much of the original as still fits ``limit`` (so a
        short summary does not waste the room it was given)."""
        room = limit - self.counter.count(summary) - 2
        if room < MIN_KEEP:
            return summary
        for slack in (0, 2, 4):
            excerpt = truncate_text(text, room - slack, self.counter, mode)
            out = f"{summary}\n{excerpt}" if excerpt else summary
            if self.counter.count(out) <= limit:
                return out
        return summary

    def summarize_text(self, comp: Component, text: str, offered: int, target: int) -> str | None:
        """A marked summary of ``text`` within ``target`` tokens, or None."""
        head = f"[summary of {offered} tokens]"
        room = target - self.counter.count(head) - 1
        if room < MIN_SUMMARY:
            return None
        made = self.chain.summarize(
            SummaryRequest(comp.id, comp.kind.value, room, text=text), self.precomputed(comp)
        )
        if made is None:
            return None
        out = f"{head}\n{made[0]}"
        return out if self.counter.count(out) <= target else None

    def fit_text(self, item: _Item, limit: int | None) -> None:
        comp = item.comp
        text = comp.inline_content or ""
        if item.offered is None:
            item.offered = self.counter.count(text)
        if limit is None or item.offered <= limit:
            item.out, item.used, item.action, item.reason = comp, item.offered, "kept", None
            item.summary_tokens, item.cut = 0, False
            return
        content = None
        item.summary_tokens = 0
        if item.strategy == "summarize":
            target = min_present(limit, item.pools[1])
            assert target is not None
            content = self.summarize_text(comp, text, item.offered, target)
            if content is not None:
                item.summary_tokens = self.counter.count(content)
                mode_: Mode = "head_tail" if comp.kind in HEAD_TAIL else "head"
                content = self.with_excerpt(content, text, limit, mode_)
                item.action, item.reason = "summarized", f"{item.offered} tokens over {limit}"
        if content is None:
            mode: Mode = "head_tail" if comp.kind in HEAD_TAIL else "head"
            content = truncate_text(text, limit, self.counter, mode) if limit >= MIN_KEEP else ""
            item.action = "truncated"
            item.reason = f"{item.offered} tokens over {limit}; kept {mode.replace('_', '+')}"
            if item.strategy == "summarize":
                item.reason += " (no summary fits)"
        if not content:
            item.out, item.used, item.action = None, 0, "dropped"
            item.reason = f"nothing of it fits {limit} tokens"
        else:
            item.out = comp.model_copy(update={"inline_content": content})
            item.used = self.counter.count(content)
        self.skipped(item)

    def fit_messages(self, item: _Item, limit: int | None) -> None:
        """Tool results (or any message block but history): whole units while their framing
        fits, then each result's content within its fair share, summarized then truncated."""
        comp = item.comp
        msgs = list(comp.messages or [])
        cost = self.dialect.message_tokens
        if item.offered is None:
            item.offered = sum(cost(m, self.counter) for m in msgs)
        item.summary_tokens = 0
        summary_mode = comp.metadata.get("mode") == "summary"
        if summary_mode:  # <<agent.tool_results mode="summary">>: every long result summarized
            msgs = self.summary_mode(comp, msgs, item)
            comp = comp.model_copy(update={"messages": msgs})
        used = sum(cost(m, self.counter) for m in msgs) if summary_mode else item.offered
        if limit is None or used <= limit:
            item.out, item.used, item.reason, item.cut = comp, used, None, False
            item.action = "summarized" if item.summary_tokens else "kept"
            item.messages_kept = len(msgs)
            return
        groups = units(msgs)

        def bare(m: Message) -> Message:
            return {**m, "content": ""} if m["role"] == "tool" else m

        frames = [sum(cost(bare(m), self.counter) for m in u) for u in groups]
        while groups and sum(frames) > limit:
            groups.pop(0)
            frames.pop(0)
        kept = [m for u in groups for m in u]
        room = limit - sum(frames)
        tool_at = [i for i, m in enumerate(kept) if m["role"] == "tool"]
        sizes = [self.counter.count(kept[i]["content"] or "") for i in tool_at]
        shares = waterfill(sizes, room)
        summary_left = item.pools[1]
        summarized = truncated = 0
        for i, size, share in zip(tool_at, sizes, shares, strict=True):
            if size <= share:
                continue
            text = kept[i]["content"] or ""
            new = None
            if item.strategy == "summarize":
                target = min_present(share, summary_left)
                assert target is not None
                new = self.summarize_text(comp, text, size, target)
                if new is not None:
                    n = self.counter.count(new)
                    new = self.with_excerpt(new, text, share, "head_tail")
                    item.summary_tokens += n
                    summary_left = None if summary_left is None else summary_left - n
                    summarized += 1
            if new is None:
                new = truncate_text(text, share, self.counter, "head_tail")
                truncated += 1
            kept[i] = {**kept[i], "content": new}
        item.used = sum(cost(m, self.counter) for m in kept)
        item.messages_kept = len(kept)
        cut_units = len(units(msgs)) - len(groups)
        parts = []
        if cut_units:
            parts.append(f"left out the {cut_units} oldest calls")
        if summarized:
            parts.append(f"summarized {summarized} results")
        if truncated:
            parts.append(f"truncated {truncated} results")
        item.reason = f"{item.offered} tokens over {limit}: " + ", ".join(parts or ["cut"])
        item.action = "summarized" if summarized else "truncated"
        item.out = comp.model_copy(update={"messages": kept}) if kept else None
        if not kept:
            item.action = "dropped"
        self.skipped(item)

    # -- the exact check -----------------------------------------------------------------
    def fitted(self) -> ContextFrame:
        return ContextFrame(
            components=[i.out for i in self.items if i.out is not None],
            metadata=self.frame.metadata,
        )

    def ledger(self, items: list[_Item]) -> BudgetLedger:
        entries = [
            LedgerEntry(
                id=i.comp.id,
                kind=i.comp.kind.value,
                source=i.comp.source,
                category=i.category,
                priority=i.comp.priority,
                required=i.comp.required,
                tokens_offered=i.offered,
                budget=i.applied,
                tokens_granted=i.limit,
                tokens_used=i.used,
                summary_tokens=i.summary_tokens,
                action=i.action,
                strategy=i.strategy,
                reason=i.reason,
                messages_offered=len(i.comp.messages) if i.comp.messages is not None else None,
                messages_kept=i.messages_kept
                if i.messages_kept is not None
                else (len(i.comp.messages) if i.comp.messages is not None else None),
            )
            for i in items
        ]
        categories = {name: CategoryTotal(budget=self.budgets[name]) for name in CATEGORIES}
        for i in items:
            if i.category:
                categories[i.category].used += i.used - i.summary_tokens
            categories["summary"].used += i.summary_tokens
        return BudgetLedger(
            provider=self.dialect.name,
            model=self.model,
            encoding=self.counter.encoding_name,
            budget=self.budget,
            budget_source=self.total.source,
            profile_budget=self.total.profile_total,
            window=self.total.window,
            reserve=self.total.reserve,
            cache_stable=self.step or None,
            entries=entries,
            categories=categories,
        )


def waterfill(sizes: list[int], capacity: int) -> list[int]:
    """Fair shares of ``capacity``: the small get all they need, the rest split the remainder
    equally (leftover tokens to the earliest)."""
    if sum(sizes) <= capacity:
        return list(sizes)
    out = [0] * len(sizes)
    left = max(0, capacity)
    pending = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    for n, i in enumerate(pending):
        give = min(sizes[i], left // (len(pending) - n))
        out[i] = give
        left -= give
    for i in range(len(sizes)):
        if left <= 0:
            break
        if out[i] < sizes[i]:
            out[i] += 1
            left -= 1
    return out


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
) -> FitResult:
    """Fit ``frame`` into its budgets (see the module docstring); None: no total budget.

    ``cache_stable`` is the history cut step in messages (0: off). ``summaries`` maps a
    component id or kind to a precomputed summary. ``summary_cache`` holds the results of
    ``summarizer`` across compiles (the caller's; None: a fresh one for this fit).
    """
    total = (
        budget
        if isinstance(budget, TotalBudget)
        else TotalBudget(budget, None, 0, "none" if budget is None else "--budget")
    )
    allocator = _Allocator(
        frame,
        dialect=dialect,
        counter=counter,
        model=model,
        total=total,
        budgets=budgets or CategoryBudgets(),
        journal=journal,
        chain=SummaryChain(
            counter,
            user=summarizer,
            user_cache=summary_cache if summary_cache is not None else SummaryCache(),
        ),
        cache_stable=max(0, cache_stable),
        summaries=summaries or {},
    )
    return allocator.run()


def floor_components(frame: ContextFrame) -> list[Component]:
    """What is left when everything that can be cut is cut: the components whose strategy
    is ``fail`` (required, system instruction, template text, tool definitions) and the
    empty ones (an empty message block still separates the text around it)."""
    return [
        c
        for c in frame.components
        if effective_strategy(c) == "fail" or not (c.inline_content or c.messages or c.tools)
    ]


def floor_tokens(
    frame: ContextFrame, *, dialect: Dialect, counter: TokenCounter, model: str
) -> int:
    """Tokens of the request when everything that can be cut is cut (see
    :func:`floor_components`), with message framing and the reply priming, counted exactly.
    Every budget from this one up fits the frame, unless a required component that can be
    cut needs more room than its cut leaves."""
    request = dialect.lower(ContextFrame(components=floor_components(frame)), model)
    return dialect.count_request(request, counter)
