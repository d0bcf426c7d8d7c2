"""Fitting a text to a limit: kept as offered, else summarized (followed by as much of the
original as still fits), else truncated token-exact, else dropped.

Also the summaries of single texts that the message windows use for tool results
(:mod:`compiler.fit.windows`).

Internal: part of the allocator.
"""

from __future__ import annotations

from collections.abc import Mapping

from compiler._base.frame import Component, ComponentKind
from compiler._base.tokens import TokenCounter
from compiler.fit.history import min_present
from compiler.fit.items import Item, Outcome
from compiler.fit.ledger import Action
from compiler.fit.summarize import MIN_SUMMARY_TOKENS, SummaryChain, SummaryRequest
from compiler.fit.truncate import Keep, truncate_text

#: Kinds whose truncation keeps head and tail (the rest keep the head).
HEAD_TAIL = frozenset(
    {ComponentKind.WORKSPACE_FILE, ComponentKind.DIFF_SUMMARY, ComponentKind.TOOL_RESULTS}
)
MIN_KEEP = 8  # a text cut to fewer tokens than this is dropped instead


class TextFitter:
    """Summaries and cuts of single texts."""

    def __init__(
        self,
        counter: TokenCounter,
        chain: SummaryChain,
        summaries: Mapping[str, str],
        *,
        plain: bool = False,
    ) -> None:
        self.counter = counter
        self.chain = chain
        self.summaries = summaries
        #: a roleplay prompt (a preset compile): cuts fall between words, marked ``…``
        self.plain = plain

    def truncate(self, text: str, target: int, mode: Keep) -> str:
        """:func:`truncate_text`, plain in a roleplay prompt."""
        return truncate_text(text, target, self.counter, mode, plain=self.plain)

    def precomputed(self, comp: Component) -> str | None:
        """The component's precomputed summary, if it has one."""
        if comp.metadata.get("window") == "tail":
            return None  # a summary of the whole chat would show its hidden head
        value = comp.metadata.get("summary")
        if isinstance(value, str) and value.strip():
            return value
        return self.summaries.get(comp.id) or self.summaries.get(comp.kind.value)

    def summarize_text(self, comp: Component, text: str, offered: int, target: int) -> str | None:
        """A marked summary of ``text`` within ``target`` tokens, or None."""
        head = f"[summary of {offered} tokens]"
        room = target - self.counter.count(head) - 1
        if room < MIN_SUMMARY_TOKENS:
            return None
        made = self.chain.summarize(
            SummaryRequest(comp.id, comp.kind.value, room, text=text), self.precomputed(comp)
        )
        if made is None:
            return None
        out = f"{head}\n{made[0]}"
        return out if self.counter.count(out) <= target else None

    def with_excerpt(self, summary: str, text: str, limit: int, mode: Keep) -> str:
        """The summary, followed by as much of the original as still fits ``limit`` (so a
        short summary does not waste the room it was given)."""
        room = limit - self.counter.count(summary) - 2
        if room < MIN_KEEP:
            return summary
        for slack in (0, 2, 4):
            excerpt = self.truncate(text, room - slack, mode)
            out = f"{summary}\n{excerpt}" if excerpt else summary
            if self.counter.count(out) <= limit:
                return out
        return summary

    def fit(self, item: Item, limit: int | None) -> Outcome:
        """The item's text within ``limit`` tokens (its outcome's ``offered``, when already
        counted, is reused)."""
        comp = item.comp
        text = comp.inline_content or ""
        offered = item.outcome.offered
        if offered is None:
            offered = self.counter.count(text)
        if limit is None or offered <= limit:
            return Outcome(out=comp, offered=offered, used=offered)
        mode: Keep = "head_tail" if comp.kind in HEAD_TAIL else "head"
        content, summary_tokens = None, 0
        action: Action
        if item.strategy == "summarize":
            target = min_present(limit, item.turn.summary_left)
            assert target is not None
            content = self.summarize_text(comp, text, offered, target)
            if content is not None:
                summary_tokens = self.counter.count(content)
                content = self.with_excerpt(content, text, limit, mode)
                action, reason = "summarized", f"{offered} tokens over {limit}"
        if content is None:
            content = self.truncate(text, limit, mode) if limit >= MIN_KEEP else ""
            action = "truncated"
            reason = f"{offered} tokens over {limit}; kept {mode.replace('_', '+')}"
            if item.strategy == "summarize":
                reason += " (no summary fits)"
        if not content:
            return Outcome(
                offered=offered,
                summary_tokens=summary_tokens,
                action="dropped",
                reason=f"nothing of it fits {limit} tokens",
                skipped={},
            )
        return Outcome(
            out=comp.model_copy(update={"inline_content": content}),
            offered=offered,
            used=self.counter.count(content),
            summary_tokens=summary_tokens,
            action=action,
            reason=reason,
            skipped={},
        )
