"""Fitting a message block to a limit: a window of whole units (an assistant tool call with
its results is one unit), and what stands for the rest.

Chat history keeps the newest units that fit and a summary of the cut
(:mod:`compiler.fit.history`). Tool results (and any other message block) keep whole units
while their framing fits, then each result's content within its fair share of the room
(:func:`waterfill`), summarized, else truncated head and tail.
``<<agent.tool_results mode="summary">>`` summarizes every result over
:data:`SUMMARY_MODE_TOKENS` whatever the budget.

Internal: part of the allocator.
"""

from __future__ import annotations

from compiler._base.frame import Component, ComponentKind, ContextFrame, Message
from compiler._records import record
from compiler.fit.budgets import IN_CHAT
from compiler.fit.history import fit_history, min_present
from compiler.fit.items import Item, Outcome
from compiler.fit.ledger import Action
from compiler.fit.prices import PriceBook
from compiler.fit.text import MIN_KEEP, TextFitter
from compiler.providers.dialect import Dialect

#: ``<<agent.tool_results mode="summary">>``: each result is at most this many tokens.
SUMMARY_MODE_TOKENS = 200


def search_tool_alias(frame: ContextFrame) -> str | None:
    """The name the model sees for chat.search, when the request offers it."""
    return next(
        (
            tool["alias"]
            for c in frame.components
            if c.kind == ComponentKind.TOOL_DEFINITIONS
            for tool in c.tools or ()
            if tool["name"] == "chat.search"
        ),
        None,
    )


def _a(word: str | None) -> str:
    """``word`` with its indefinite article."""
    return f"{'an' if (word or ' ')[0] in 'aeiou' else 'a'} {word}"


def units(messages: list[Message]) -> list[list[Message]]:
    """Messages grouped into units that are kept or cut together."""
    out: list[list[Message]] = []
    for m in messages:
        if m["role"] == "tool" and out and bool(out[-1][0].get("toolCalls")):
            out[-1].append(m)
        else:
            out.append([m])
    return out


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


def _bare(m: Message) -> Message:
    """A tool result without its content (what its framing costs)."""
    return {**m, "content": ""} if m["role"] == "tool" else m


@record
class _Shrunk:
    """Tool results cut to their shares."""

    messages: list[Message]
    summary_tokens: int = 0
    summarized: int = 0
    truncated: int = 0


class WindowFitter:
    """Message blocks within a limit."""

    def __init__(
        self,
        dialect: Dialect,
        text: TextFitter,
        *,
        step: int,
        search_tool: str | None,
        book: PriceBook | None = None,
    ) -> None:
        self.book = book  # a session's prices of history messages
        self.dialect = dialect
        self.counter = text.counter
        self.text = text
        self.step = step
        self.search_tool = search_tool  # the name the model sees for chat.search, if offered

    def cost(self, messages: list[Message]) -> int:
        return sum(self.dialect.message_tokens(m, self.counter) for m in messages)

    # -- chat history ------------------------------------------------------------------
    def history(self, item: Item, limit: int | None, keep: int = 0) -> Outcome:
        """The newest whole units that fit (the newest ``keep`` messages whatever they cost),
        and a note (and summary) in place of the cut."""
        comp, turn = item.comp, item.turn
        msgs = comp.messages or []
        # the history budget covers the chat's own messages, not the text placed among them:
        # the total apart from it, both less what the grant took off ``limit`` for its seams
        applied = turn.applied
        whole = min_present(applied.own, applied.category, applied.total)
        shave = 0 if limit is None or whole is None else max(0, whole - limit)
        total = min_present(comp.token_budget, applied.total, None if whole is not None else limit)
        fitted = fit_history(
            msgs,
            limit=None if total is None else total - shave,
            message_limit=None if turn.category_left is None else turn.category_left - shave,
            category_limits={name: turn.pools.get(name) for name in IN_CHAT},
            summary_limit=turn.summary_left,
            summarize=item.strategy == "summarize",
            step=self.step,
            dialect=self.dialect,
            counter=self.counter,
            chain=self.text.chain,
            component_id=comp.id,
            precomputed=self.text.precomputed(comp),
            search_tool=self.search_tool,
            plain=self.text.plain,
            book=self.book,
            keep=keep,
        )
        offered = fitted.used if fitted.counted_all else None
        kept = len(msgs) - fitted.cut
        if fitted.cut == 0:
            return Outcome(
                comp,
                offered,
                fitted.used,
                fitted.summary_tokens,
                messages_kept=kept,
                shares=fitted.shares,
            )
        extra = {
            None: "",
            "note": "; a note says they were left out",
        }.get(fitted.summarizer, f"; {_a(fitted.summarizer)} summary stands in their place")
        what = "the oldest message" if fitted.cut == 1 else f"the {fitted.cut} oldest messages"
        if kept == 0:
            what = "the only message" if fitted.cut == 1 else f"all {fitted.cut} messages"
        reason = f"cut {what} to fit the budget{extra}"
        if self.step and fitted.unstepped:
            reason += (
                f" (cache-stable step {self.step} not applied this turn: it would have cut "
                "the newest turn)"
            )
        elif self.step:
            reason += f" (cache-stable step {self.step})"
        action: Action = "truncated"
        if not fitted.messages:
            action = "dropped"
        elif fitted.summarizer not in (None, "note"):
            action = "summarized"
        return Outcome(
            out=comp.model_copy(update={"messages": fitted.messages}) if fitted.messages else None,
            offered=offered,
            used=fitted.used,
            summary_tokens=fitted.summary_tokens,
            action=action,
            reason=reason,
            messages_kept=kept,
            shares=fitted.shares,
            skipped={"messagesDropped": fitted.cut}
            | ({"cacheStableStep": "not_applied"} if fitted.unstepped else {}),
        )

    # -- tool results ------------------------------------------------------------------
    def tool_results(self, item: Item, limit: int | None) -> Outcome:
        """Tool results (or any message block but history): whole units while their framing
        fits, then each result's content within its fair share, summarized then truncated
        (its outcome's ``offered``, when already counted, is reused)."""
        comp = item.comp
        msgs = list(comp.messages or [])
        offered = item.outcome.offered
        if offered is None:
            offered = self.cost(msgs)
        summary_tokens = 0
        summary_mode = comp.metadata.get("mode") == "summary"
        if summary_mode:  # <<agent.tool_results mode="summary">>: every long result summarized
            msgs, summary_tokens = self.summary_mode(comp, msgs)
            comp = comp.model_copy(update={"messages": msgs})
        used = self.cost(msgs) if summary_mode else offered
        if limit is None or used <= limit:
            action: Action = "summarized" if summary_tokens else "kept"
            return Outcome(comp, offered, used, summary_tokens, action, None, len(msgs))
        groups = units(msgs)
        offered_units = len(groups)
        frames = [
            sum(self.dialect.message_tokens(_bare(m), self.counter) for m in u) for u in groups
        ]
        while groups and sum(frames) > limit:
            groups.pop(0)
            frames.pop(0)
        kept = [m for u in groups for m in u]
        shrunk = self.shrink_results(item, comp, kept, limit - sum(frames))
        kept = shrunk.messages
        parts = []
        if offered_units - len(groups):
            parts.append(f"left out the {offered_units - len(groups)} oldest calls")
        if shrunk.summarized:
            parts.append(f"summarized {shrunk.summarized} results")
        if shrunk.truncated:
            parts.append(f"truncated {shrunk.truncated} results")
        action = "summarized" if shrunk.summarized else "truncated"
        return Outcome(
            out=comp.model_copy(update={"messages": kept}) if kept else None,
            offered=offered,
            used=self.cost(kept),
            summary_tokens=summary_tokens + shrunk.summary_tokens,
            action=action if kept else "dropped",
            reason=f"{offered} tokens over {limit}: " + ", ".join(parts or ["cut"]),
            messages_kept=len(kept),
            skipped={},
        )

    def shrink_results(
        self, item: Item, comp: Component, kept: list[Message], room: int
    ) -> _Shrunk:
        """Each tool result in ``kept`` within its fair share of ``room``: summarized (when
        the strategy is summarize and one fits), else truncated head and tail."""
        out = _Shrunk(list(kept))
        tool_at = [i for i, m in enumerate(kept) if m["role"] == "tool"]
        sizes = [self.counter.count(kept[i]["content"] or "") for i in tool_at]
        summary_left = item.turn.summary_left
        for i, size, share in zip(tool_at, sizes, waterfill(sizes, room), strict=True):
            if size <= share:
                continue
            text = kept[i]["content"] or ""
            new = None
            if item.strategy == "summarize":
                target = min_present(share, summary_left)
                assert target is not None
                new = self.text.summarize_text(comp, text, size, target)
                if new is not None:
                    n = self.counter.count(new)
                    new = self.text.with_excerpt(new, text, share, "head_tail")
                    out.summary_tokens += n
                    summary_left = None if summary_left is None else summary_left - n
                    out.summarized += 1
            if new is None:  # a share too small for any of it: left empty, not a scrap
                new = self.text.truncate(text, share, "head_tail") if share >= MIN_KEEP else ""
                out.truncated += 1
            out.messages[i] = {**kept[i], "content": new}
        return out

    def summary_mode(self, comp: Component, msgs: list[Message]) -> tuple[list[Message], int]:
        """Each tool result over :data:`SUMMARY_MODE_TOKENS`, summarized (else truncated);
        and the tokens the summaries take."""
        out: list[Message] = []
        summary_tokens = 0
        for m in msgs:
            text = m["content"] or ""
            size = self.counter.count(text) if m["role"] == "tool" else 0
            if size > SUMMARY_MODE_TOKENS:
                new = self.text.summarize_text(comp, text, size, SUMMARY_MODE_TOKENS)
                if new is None:
                    new = self.text.truncate(text, SUMMARY_MODE_TOKENS, "head_tail")
                summary_tokens += self.counter.count(new)
                m = {**m, "content": new}
            out.append(m)
        return out, summary_tokens
