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

Order: the fixed components (``fail``) are counted first; if they exceed a budget the
compile fails. The others get what is left in *grant order*: higher ``priority`` first; at
equal priority components that are kept or dropped whole come before those that can shrink
(so history and tool results take the remainder); then the earlier in the frame first. The
tie rule for drops follows: an optional component that does not fit is dropped, and so is
every optional component after it in grant order (lowest priority, then latest in the frame,
goes first), so a lower-ranked one is never kept while a higher-ranked one is dropped.

Exactness: costs are the dialect's own cost model (message framing included); inline
components merge into messages, so the allocator measures that framing once, and after
fitting lowers the frame and counts the real request. If it is over (a merge at a seam, a
message that vanished), the lowest-ranked component that can shrink gives up exactly the
excess, and the count is repeated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.errors import BudgetError
from compiler.fit.budgets import CATEGORIES, CATEGORY_OF, CategoryBudgets, TotalBudget
from compiler.fit.history import MIN_SUMMARY, fit_history, min_present
from compiler.fit.ledger import Action, AppliedBudget, BudgetLedger, CategoryTotal, LedgerEntry
from compiler.fit.summarize import Summarizer, SummaryCache, SummaryChain, SummaryRequest
from compiler.fit.truncate import Mode, truncate_text
from compiler.frame import Component, ComponentKind, ContextFrame, Message, Strategy
from compiler.journal import Journal
from compiler.lower.base import Dialect
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
MAX_FIX_ROUNDS = 16
MIN_KEEP = 8  # a text cut to fewer tokens than this is dropped instead


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
        self.items = [
            _Item(
                index=i,
                comp=c,
                strategy=(s := effective_strategy(c)),
                category=CATEGORY_OF.get(c.kind),
                fixed=s == "fail",
            )
            for i, c in enumerate(frame.components)
        ]
        self.pools: dict[str, int | None] = dict(self.budgets)
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
        self.total_left: int | None = None

    # -- costs -------------------------------------------------------------------------
    def cost(self, comp: Component) -> int:
        if comp.kind == ComponentKind.TOOL_DEFINITIONS:
            return self.dialect.tools_tokens(comp.tools or [], self.counter)
        if comp.messages is not None:
            return sum(self.dialect.message_tokens(m, self.counter) for m in comp.messages)
        return self.counter.count(comp.inline_content or "")

    def framing(self) -> int:
        """Tokens the request adds around the inline components and tools (exact for the
        frame as offered): message framing, merges at seams, reply priming."""
        fixed = ContextFrame(
            components=[
                c.model_copy(update={"messages": []}) if c.messages is not None else c
                for c in self.frame.components
            ]
        )
        whole = self.dialect.count_request(self.dialect.lower(fixed, self.model), self.counter)
        parts = sum(self.cost(c) for c in fixed.components if c.messages is None)
        return whole - parts

    # -- the run -----------------------------------------------------------------------
    def run(self) -> FitResult:
        framing = self.framing()
        self.total_left = None if self.budget is None else self.budget - framing
        for item in self.items:
            if item.fixed:
                self.fit_fixed(item)
        if self.total_left is not None and self.total_left < 0 and self.budget is not None:
            # the framing above assumed every offered message; count the floor exactly
            need = floor_tokens(
                self.frame, dialect=self.dialect, counter=self.counter, model=self.model
            )
            if need > self.budget:
                self.fail(
                    None,
                    f"the parts that cannot be cut need {need} tokens; the budget is {self.budget}",
                    need,
                )
            # it fits without the optional parts' framing: grant from the exact floor; the
            # exact check below drops or shrinks what the seams then cost
            self.total_left = self.budget - need
        order = sorted(
            (i for i in self.items if not i.fixed),
            key=lambda i: (
                not i.comp.required,
                -i.comp.priority,
                i.strategy != "drop_optional",
                i.index,
            ),
        )
        dropped_total = False
        dropped_cats: set[str] = set()
        for item in order:
            own, cat = item.comp.token_budget, self._pool(item.category)
            item.applied = AppliedBudget(own=own, category=cat, total=self.total_left)
            item.pools = (cat, self.pools["summary"])
            item.limit = min_present(own, cat, self.total_left)
            if item.empty:
                item.out, item.offered = item.comp, 0
                continue
            if item.strategy == "drop_optional":
                item.offered = self.cost(item.comp)
                why = None
                if own is not None and item.offered > own:
                    why = f"{item.offered} tokens is over its own budget={own}"
                elif item.category in dropped_cats or (cat is not None and item.offered > cat):
                    why = f"over the {item.category} budget ({cat} tokens left)"
                    dropped_cats.add(item.category or "")
                elif dropped_total or (
                    self.total_left is not None and item.offered > self.total_left
                ):
                    why = f"over the total budget ({self.total_left} tokens left)"
                    dropped_total = True
                if why is not None:
                    self.drop(item, why)
                    continue
                item.out, item.used = item.comp, item.offered
            else:
                self.fit_elastic(item, item.limit)
            self.charge(item)
        return self.finish(order)

    def _pool(self, category: str | None) -> int | None:
        return self.pools.get(category) if category else None

    def charge(self, item: _Item) -> None:
        if self.total_left is not None:
            self.total_left -= item.used
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
        self.charge(item)

    def drop(self, item: _Item, why: str) -> None:
        item.out, item.used, item.action = None, 0, "dropped"
        item.reason = why
        item.messages_kept = 0 if item.comp.messages is not None else None
        self.skipped(item, detail=why)

    def skipped(self, item: _Item, **extra: Any) -> None:
        """The journal's ``context_component_skipped`` (reason budget) for a cut or drop."""
        self.journal.emit(
            "context_component_skipped",
            component=item.comp.id,
            kind=item.comp.kind.value,
            reason="budget",
            action=item.action,
            **extra,
        )

    def fail(self, item: _Item | None, message: str, budget: int | None) -> None:
        ledger = self.ledger(sorted(self.items, key=lambda i: i.index))
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
            item.out, item.action, item.reason = comp, "kept", None
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
            item.summary_tokens = 0
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
            item.out, item.used, item.reason = comp, used, None
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

    def finish(self, order: list[_Item]) -> FitResult:
        total = 0
        for _ in range(MAX_FIX_ROUNDS):
            frame = self.fitted()
            total = self.dialect.count_request(self.dialect.lower(frame, self.model), self.counter)
            if self.budget is None or total <= self.budget:
                break
            self.shrink(order, total - self.budget)
        else:  # pragma: no cover - shrink always makes progress or fails
            self.fail(None, f"could not fit the request into {self.budget} tokens", self.budget)
        ledger = self.ledger(sorted(self.items, key=lambda i: i.index))
        ledger.total_tokens = total
        ledger.overhead_tokens = total - sum(e.tokens_used for e in ledger.entries)
        return FitResult(frame, ledger, total)

    def shrink(self, order: list[_Item], excess: int) -> None:
        """Take ``excess`` tokens from the lowest-ranked component that can give them."""
        for item in reversed(order):
            if item.out is None or item.used == 0 or item.empty:
                continue
            if item.strategy == "drop_optional":
                self.drop(item, "over the total budget (exact count of the request)")
                return
            before = item.used
            self.fit_elastic(item, max(0, before - excess))
            if item.used < before:
                return
        self.fail(
            None, f"the parts that cannot be cut do not fit {self.budget} tokens", self.budget
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


def floor_tokens(
    frame: ContextFrame, *, dialect: Dialect, counter: TokenCounter, model: str
) -> int:
    """Tokens of the request when everything that can be cut is cut: the components whose
    strategy is ``fail`` (required, system instruction, template text, tool definitions),
    with their message framing and the reply priming, counted exactly."""
    fixed = [c for c in frame.components if effective_strategy(c) == "fail"]
    request = dialect.lower(ContextFrame(components=fixed), model)
    return dialect.count_request(request, counter)
