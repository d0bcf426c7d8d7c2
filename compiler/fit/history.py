"""Chat history: keep the newest whole units that fit, and a summary of what was cut.

Internal: the API is :mod:`compiler.fit`.

A unit is a message, or an assistant message with tool calls together with the tool results
that answer it; units are kept or cut whole, and a kept history never starts with a tool
result. The walk goes newest first and stops at the first unit that does not fit, so only
the kept messages (and the one that did not fit) are counted: a 10,000-message chat at a 16k
budget is never tokenized whole.

Text a SillyTavern preset places among the messages (world info at depth, the Author's
Note, ...: a message with a ``category``, see :data:`compiler.fit.budgets.IN_CHAT`) is a
unit of its own that counts in its category: the history budget covers the chat's own
messages (and the summary), each placed message the budget of its category, the total
everything. The walk stops at the first unit that is over any of them, so a placed message
is kept or cut with its position, as SillyTavern cuts it.

In place of what was cut, a system message says how many messages were left out and, when
the request offers the ``chat.search`` tool, that it can read them (no other tool is ever
named); then a summary (see :mod:`compiler.fit.summarize`) when the budget leaves room for
one of at least :data:`~compiler.fit.summarize.MIN_SUMMARY_TOKENS`. In a roleplay prompt (a
preset compile, ``plain``) the note stands only with a summary or when it names the search
tool: a bare count of what was cut is left out and its room goes to messages.

Cache-stable mode (``step`` > 0): the number of messages cut is rounded up to a multiple of
``step`` (then to the next unit boundary), so the cut point, and with it the summary and
every kept message before the newest ones, stays byte-identical from turn to turn until the
chat has grown by ``step`` messages. It costs up to ``step`` messages of budget. The note
follows the summary in this mode: when the cut moves, the summary's first lines (the same
sample, see :func:`compiler.fit.summarize._grid`) still extend the prefix the previous
request shares.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import field
from itertools import accumulate
from operator import itemgetter
from typing import NamedTuple

from compiler._base.frame import Message, Role
from compiler._base.tokens import TokenCounter
from compiler._records import record
from compiler.errors import APCError
from compiler.fit.budgets import message_shares
from compiler.fit.prices import PriceBook, Sourced
from compiler.fit.summarize import SummaryChain, SummaryRequest
from compiler.fit.truncate import fit_sentences
from compiler.providers.dialect import Dialect

SUMMARY_ROLE: Role = "system"
FIRST_BLOCK = 16  # messages the history walk prices at once first (see _Walk.extend)
BOOK_BLOCK = 64  # the fewest messages a session's walk reads from its book at once
_ROLE = itemgetter("role")
_PRICE = itemgetter(2)  # of a price book's entry
MAX_RESERVE = 1024  # at most this many tokens are set aside for a history summary


def note(cut: int, search_tool: str | None = None) -> str:
    """The text that stands where ``cut`` messages were left out; it points at the chat
    search tool only when the request offers one (``search_tool``, the name the model sees)."""
    where = f"; the {search_tool} tool can read them" if search_tool else ""
    return (
        f"[Earlier conversation: {cut} older messages are not shown here (cut to fit the "
        f"context budget){where}.]"
    )


def unit_start(messages: Sequence[Message], end: int) -> int:
    """The first index of the unit that ends at ``end`` (inclusive)."""
    if messages[end]["role"] != "tool":
        return end
    j = end
    while j > 0 and messages[j - 1]["role"] == "tool":
        j -= 1
    if j > 0 and messages[j - 1].get("toolCalls"):
        return j - 1
    return end  # a tool result no call opens (an input error the lowering check reports)


def newest_turn(messages: Sequence[Message]) -> int:
    """How many of the newest messages make the turn the reply answers: from the newest user
    message of the chat itself (not one inserted into it, ``origin`` set) to the end; 0 when
    the history has no user message."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["role"] == "user" and not m.get("origin"):
            return len(messages) - i
    return 0


def min_present(*values: int | None) -> int | None:
    """The smallest of the values given (None ones ignored), or None."""
    present = [v for v in values if v is not None]
    return min(present) if present else None


@record
class HistoryFit:
    messages: list[Message]  # kept, the summary message first when there is one
    used: int  # tokens of everything kept, summary included
    summary_tokens: int
    cut: int  # oldest messages left out
    summarizer: str | None
    counted_all: bool
    #: of ``used``, the kept text placed in chat by category (see :class:`_Walk`)
    shares: dict[str, int] = field(default_factory=dict)
    #: cache-stable: the step's cut would have cut into the newest turn, so this turn was cut
    #: unstepped
    unstepped: bool = False


@record
class _Walk:
    """The newest units that fit: within a total cap (an argument), and each category
    within what is left of its budget (``limits``; ``history``: the chat's own messages, a
    message with a ``category``: its category, see :func:`compiler.fit.budgets.message_shares`).
    A summary's room (``less``) comes off the total and ``history``."""

    messages: Sequence[Message]
    dialect: Dialect
    counter: TokenCounter
    book: PriceBook | None = None  # a session's prices: a message priced last turn is known
    limits: Mapping[str, int] = field(default_factory=dict)
    keep_from: int = -1  # the first message of the newest turn, always kept (-1: none)

    def __post_init__(self) -> None:
        self.sources: Sequence[object] | None = (
            self.messages.sources()
            if self.book is not None and isinstance(self.messages, Sourced)
            else None
        )
        self.units: list[tuple[int, int]] = []  # (start, cost), newest first
        self.used = 0
        self.next = len(self.messages)  # the end (exclusive) of the next older unit
        self.chat = 0  # of used, the chat's own messages (history)
        self.shares: dict[str, int] = {}  # of used, the text placed in chat, by category
        self.placed: dict[int, dict[str, int]] = {}  # such a unit's start -> its shares
        self.less = 0  # the room a summary takes (off the total and history)
        self.forced = False  # adding the newest turn: no limit applies
        if self.keep_from < 0:
            self.keep_from = len(self.messages)

    @property
    def start(self) -> int:
        return self.units[-1][0] if self.units else len(self.messages)

    def bound(self, cap: int | None) -> int | None:
        """What everything kept may use within the total ``cap``: the chat's own messages
        (and a summary) within ``history``, besides the text placed in chat that is kept."""
        history = self.limits.get("history")
        return min_present(cap, None if history is None else history + self.used - self.chat)

    def room(self, cap: int | None, less: int = 0) -> int | None:
        """What is left for more chat messages of the total ``cap`` and of ``history``, with
        ``less`` set aside."""
        history = self.limits.get("history")
        return min_present(
            None if cap is None else cap - less - self.used,
            None if history is None else history - less - self.chat,
        )

    def _cap(self, cap: int | None) -> int | None:
        """What :attr:`used` may grow to with chat messages: the total ``cap`` and
        ``history``, less :attr:`less`."""
        history = self.limits.get("history")
        if self.forced:
            return None
        return min_present(
            None if cap is None else cap - self.less,
            None if history is None else history - self.less + self.used - self.chat,
        )

    def extend(self, cap: int | None, less: int = 0) -> None:
        """Add older units while they fit ``cap`` (None: all) and the category limits, with
        ``less`` set aside (a summary's room). Without a session's prices, and with tiktoken
        counting, messages are priced a block at a time (see :meth:`_block`); the units kept
        are the same."""
        self.less = less
        if self.sources is not None:
            self._from_book(cap)
            return
        if not self.counter.local:
            self._units(0, cap)
            return
        size = self._block_size(cap)
        while self.next > 0:
            lo = max(0, self.next - size) if self._cap(cap) is not None else 0
            fits = self._block(lo, cap)
            if fits is None:  # a tool result among them, or a failed price: unit by unit
                fits = self._units(lo, cap)
            if not fits:
                return
            size = self._block_size(cap)

    def _units(self, floor: int, cap: int | None) -> bool:
        """Add older units, one at a time, down to ``floor`` while they fit ``cap`` and the
        category limits; False when one did not fit."""
        msgs, tokens, counter = self.messages, self.dialect.message_tokens, self.counter
        sources, book = self.sources, self.book
        units, used, end = self.units, self.used, self.next
        limit = self._cap(cap)  # for the chat's messages (it moves with text placed in chat)
        fits = True
        while end > floor:
            shares = None
            known = book.get(sources[end - 1]) if sources is not None and book else None
            if known is not None:  # priced before, as a unit of one: not read again
                s, cost = end - 1, known[2]
            elif (last := msgs[end - 1])["role"] == "tool":
                s = unit_start(msgs, end - 1)
                cost = sum(tokens(msgs[i], counter) for i in range(s, end))
            else:  # a unit of one message: most of them
                s, cost = end - 1, tokens(last, counter)
                if "category" in last:  # text placed in chat: counted in its categories
                    shares = message_shares(last, cost, counter)
                elif sources is not None and book:
                    book.put(sources[s], last["role"], cost)
            if shares is None:
                if limit is not None and used + cost > limit:
                    fits = False
                    break
                self.chat += cost
            else:
                self.used = used
                framing = cost - sum(shares.values())  # the chat's (history)
                if not self._placed_fits(cost, shares, framing, cap):
                    fits = False
                    break
                self.placed[s] = shares
                for name, n in shares.items():
                    self.shares[name] = self.shares.get(name, 0) + n
                self.chat += framing
                self.used = used + cost
                limit = self._cap(cap)
            units.append((s, cost))
            used += cost
            end = s
        self.used, self.next = used, end
        return fits

    def _placed_fits(
        self, cost: int, shares: Mapping[str, int], framing: int, cap: int | None
    ) -> bool:
        """Whether a message placed in chat fits the total ``cap``, its categories' and, for
        its ``framing``, ``history``."""
        if self.forced:
            return True
        if cap is not None and self.used + cost > cap - self.less:
            return False
        history = self.limits.get("history")
        if history is not None and self.chat + framing > history - self.less:
            return False
        limits, have = self.limits, self.shares
        return all(
            limits.get(name) is None or have.get(name, 0) + n <= limits[name]
            for name, n in shares.items()
        )

    def _from_book(self, cap: int | None) -> None:
        """Add older units while they fit ``cap``, a session's: the messages its book
        prices (last turn's, as units of one, as :meth:`_units` takes them) a block at a time
        at C speed, the others (new, or in a unit with tool results) by :meth:`_units`."""
        assert self.sources is not None and self.book is not None
        sources, book = self.sources, self.book
        while self.next > 0:
            end = self.next
            lo = max(0, end - max(BOOK_BLOCK, self._block_size(cap)))
            known, new = book.recall(sources[lo:end])
            if new:  # not priced last turn: the unit walk, down to the next one that was
                fits = self._units(end - new, cap)
            else:
                fits = self._add(list(map(_PRICE, reversed(known))), cap)
            if not fits:
                return

    def _add(self, costs: list[int], cap: int | None) -> bool:
        """Add the chat messages just older than :attr:`next`, each a unit of one, priced
        ``costs`` (newest first), while they fit ``cap``; False when one did not fit."""
        end, limit = self.next, self._cap(cap)
        totals = list(accumulate(costs, initial=self.used))  # what is used with the first k
        # the most that fit (a price is never negative, so the totals only grow)
        k = len(costs) if limit is None else max(0, bisect_right(totals, limit) - 1)
        self.units.extend(zip(range(end - 1, end - 1 - k, -1), costs[:k], strict=True))
        self.chat += totals[k] - self.used
        self.used, self.next = totals[k], end - k
        return k == len(costs)

    def _block(self, lo: int, cap: int | None) -> bool | None:
        """Add the messages ``lo`` .. :attr:`next`, newest first, while they fit ``cap``,
        each a unit of one, priced together (:meth:`Dialect.messages_tokens`); False when
        one did not fit, None (nothing added) when one is a tool result, text placed in chat
        or pricing one failed (a block reaches past the cut: only a message the walk reaches
        may fail it, as the unit walk then says)."""
        end = self.next
        block = list(self.messages[lo:end])
        if "tool" in map(_ROLE, block) or any("category" in m for m in block):
            return None
        try:
            costs = self.dialect.messages_tokens(block, self.counter)[::-1]  # newest first
        except APCError:  # e.g. tool calls on a user message, maybe never reached
            return None
        return self._add(costs, cap)

    def _block_size(self, cap: int | None) -> int:
        """How many messages the next block prices: most of what the room left holds at
        the average price so far, and one at a time once that is less than one message
        (so few are priced and not kept: a block's messages that are dearer than the
        average)."""
        limit = self._cap(cap)
        if limit is None or not self.units:
            return FIRST_BLOCK
        average = max(1.0, self.used / len(self.units))
        return max(1, int((limit - self.used) / average * 0.8))

    def cover(self) -> None:
        """Add older units, whatever they cost, until the newest turn is kept whole (over any
        limit: the allocator reserved its room)."""
        self.forced = True
        while self.start > self.keep_from and self.next > 0:
            self._units(min(self.keep_from, self.next - 1), None)
        self.forced = False

    def poppable(self) -> bool:
        """Whether the oldest kept unit lies wholly before :attr:`keep_from`."""
        if not self.units:
            return False
        end = self.units[-2][0] if len(self.units) > 1 else len(self.messages)
        return end <= self.keep_from

    def trim(self, cap: int | None, less: int = 0) -> None:
        """Drop the oldest kept units until ``used <= cap`` and the chat's messages are
        within ``history``, with ``less`` set aside in both; never one of the newest turn."""
        history = self.limits.get("history")
        while (
            self.units
            and self.poppable()
            and (
                (cap is not None and self.used > cap - less)
                or (history is not None and self.chat > history - less)
            )
        ):
            self.pop()

    def pop(self) -> None:
        start, cost = self.units.pop()
        self.used -= cost
        shares = self.placed.pop(start, None)
        if shares is None:
            self.chat -= cost
        else:
            for name, n in shares.items():
                self.shares[name] -= n
            self.chat -= cost - sum(shares.values())  # its framing
        self.next = self.start

    def drop_leading_tool(self) -> None:
        while self.units and self.messages[self.units[-1][0]]["role"] == "tool" and self.poppable():
            self.pop()


def fit_history(
    messages: Sequence[Message],
    *,
    limit: int | None,
    message_limit: int | None,
    summary_limit: int | None,
    summarize: bool,
    step: int,
    dialect: Dialect,
    counter: TokenCounter,
    chain: SummaryChain,
    component_id: str,
    precomputed: str | None,
    search_tool: str | None = None,
    plain: bool = False,
    book: PriceBook | None = None,
    category_limits: Mapping[str, int | None] | None = None,
    keep: int = 0,
) -> HistoryFit:
    """Fit one history into ``limit`` tokens (everything it keeps, summary included), its
    own messages and the summary into ``message_limit`` (the history budget), the text
    placed in it (a message with a ``category``) into ``category_limits`` (what is left of
    those categories' budgets) and its summary into ``summary_limit`` (the summary budget).
    None: no such limit. ``book``: a session's prices of messages
    (:mod:`compiler.fit.prices`). The newest ``keep`` messages are kept whatever they cost
    (the newest turn, see :func:`newest_turn`; the caller reserved their room)."""
    n = len(messages)
    limits = {k: v for k, v in (category_limits or {}).items() if v is not None}
    limits.pop("history", None)
    if message_limit is not None:
        limits["history"] = message_limit
    keep_from = n - min(keep, n)
    walk = _Walk(messages, dialect, counter, book, limits, keep_from)
    walk.extend(limit)
    walk.cover()
    if walk.next == 0:
        return HistoryFit(list(messages), walk.used, 0, 0, None, True, _kept(walk.shares))
    # something has to go: set room aside for the summary, round the cut, no orphan first
    maker = _SummaryMaker(
        dialect, counter, chain, component_id, precomputed, search_tool, plain, step > 0
    )
    bound = walk.bound(limit)  # what everything kept may use
    reserve = maker.reserve(n, bound, bound, summary_limit) if summarize else 0
    # the summary counts against the summary budget, so only a total limit loses the room
    walk.trim(limit, reserve)
    unstepped = False
    if step > 0:
        rounded = -(-walk.start // step) * step
        if rounded > keep_from:  # the step would cut into the newest turn: cut unstepped
            unstepped, step = True, 0
        while walk.units and walk.start < rounded and not unstepped:
            walk.pop()
    walk.drop_leading_tool()
    made = None
    if summarize:
        # cache-stable: a target that does not move with the newest messages
        room = walk.room(limit, reserve)
        slack = 0 if step > 0 else None if room is None else max(0, room)
        target = min_present(summary_limit, None if slack is None else reserve + slack)
        if walk.bound(limit) is not None:
            target = min_present(target, walk.room(limit))
        made = _summarize_cut(walk, maker, target, limit=limit, step=step)
    if made is None and step == 0:  # the room set aside went unused: more messages
        walk.extend(limit)
        walk.drop_leading_tool()
    kept = list(messages[walk.start :])
    summary_cost, which = (made[1], made[2]) if made is not None else (0, None)
    if made is not None:
        kept.insert(0, made[0])
    return HistoryFit(
        kept,
        walk.used + summary_cost,
        summary_cost,
        walk.start,
        which,
        walk.start == 0 and n > 0,
        _kept(walk.shares),
        unstepped,
    )


def _kept(shares: Mapping[str, int]) -> dict[str, int]:
    return {name: n for name, n in shares.items() if n}


def _summarize_cut(
    walk: _Walk,
    maker: _SummaryMaker,
    target: int | None,
    *,
    limit: int | None,
    step: int,
) -> _Made | None:
    """The summary of what ``walk`` leaves out, within ``target``. Without cache-stable
    steps, the room a short summary leaves goes back to the walk (more messages, then the
    same summary with the note of the smaller cut: nobody is asked again), a few times at
    most."""
    made = None
    body: tuple[str, str] | None = None  # after the first: the summary made, re-fitted
    for _ in range(4):
        made = maker.make(walk.messages[: walk.start], target, body)
        if made is None or step > 0 or walk.bound(limit) is None:
            break
        # a summary the chain made of what is cut is made again of the new cut (it is
        # cheap, and never stands for a message the request also sends); a precomputed
        # one or the caller's answer is re-fitted (nobody is asked again)
        body = made.body or ("", "note")
        if body[1] == "extractive":
            body = None
        before = walk.start
        walk.extend(limit, made.cost)
        walk.drop_leading_tool()
        if walk.start == before:
            break
        if walk.start == 0:
            return None
        target = min_present(target, walk.room(limit))
    return made


@record(frozen=True)
class _SummaryMaker:
    """The system message that stands for the cut part of one history."""

    dialect: Dialect
    counter: TokenCounter
    chain: SummaryChain
    component_id: str
    precomputed: str | None
    search_tool: str | None
    plain: bool = False  # a roleplay prompt: no bare note (see the module docstring)
    note_last: bool = False  # cache-stable: the note after the summary (see :meth:`content`)

    def content(self, head: str, text: str) -> str:
        """The summary message's text: the note ``head`` and the summary ``text``. In
        cache-stable mode the note (which counts the cut) goes last: the summary's first
        lines stay the same when the cut moves (see :func:`compiler.fit.summarize._grid`),
        so a moved cut's request still shares them with the previous one."""
        if not text:
            return head
        return f"{text}\n{head}" if self.note_last else f"{head}\n{text}"

    def reserve(self, n: int, limit: int | None, cap: int | None, summary_limit: int | None) -> int:
        """The room set aside for a summary: a tenth of the limit, at least room for the note
        (unless that is over a quarter), at most :data:`MAX_RESERVE` and the summary budget."""
        base = limit if limit is not None else cap or 0
        floor = self.dialect.message_tokens(
            {"role": SUMMARY_ROLE, "content": note(n, self.search_tool)}, self.counter
        )
        wanted = max(base // 10, floor if floor <= base // 4 else 0)
        return min_present(summary_limit, min(MAX_RESERVE, wanted)) or 0

    def make(
        self, cut: Sequence[Message], target: int | None, body: tuple[str, str] | None = None
    ) -> _Made | None:
        """The system message standing for ``cut``, its cost, its summarizer and its summary
        body, within ``target`` tokens (None: no limit); None when nothing (useful) fits.
        ``body`` (text, summarizer): a summary already made, re-fitted by whole sentences
        instead of asking again."""
        if not cut:
            return None
        counter = self.counter
        frame_cost = self.dialect.message_tokens({"role": SUMMARY_ROLE, "content": ""}, counter)
        head = note(len(cut), self.search_tool)
        room = None if target is None else target - frame_cost - counter.count(head) - 1
        made = None
        if body is not None:
            text = body[0] if room is None else fit_sentences(body[0], room, counter)
            made = (text, body[1]) if text else None
        elif room is None or room > 0:  # the chain asks nobody for less than a sentence
            request = SummaryRequest(
                self.component_id,
                "ChatHistory",
                4 * MAX_RESERVE if room is None else room,
                messages=cut,
            )
            made = self.chain.summarize(request, self.precomputed)
        text, which = made if made is not None else ("", "note")
        content = self.content(head, text)
        while target is not None and text and frame_cost + counter.count(content) > target:
            # rare: the seam between note and summary merges differently; whole sentences
            text = fit_sentences(text, counter.count(text) - 1, counter)
            content, which = self.content(head, text), which if text else "note"
        message: Message = {"role": SUMMARY_ROLE, "content": content}
        cost = self.dialect.message_tokens(message, counter)
        while target is not None and text and cost > target:
            # the message frames its text beyond the empty frame (Gemini's system-note tag)
            text = fit_sentences(text, counter.count(text) - 1, counter)
            which = which if text else "note"
            message = {"role": SUMMARY_ROLE, "content": self.content(head, text)}
            cost = self.dialect.message_tokens(message, counter)
        if which == "note" and self.plain and self.search_tool is None:
            return None  # a bare count of what was cut is no use in a roleplay prompt
        if target is not None and cost > target:
            return None
        return _Made(message, cost, which, (text, which) if text else None)


class _Made(NamedTuple):
    """A summary message: the message, its cost, its summarizer (``note``: none) and its
    body (text, summarizer) when it has one."""

    message: Message
    cost: int
    which: str
    body: tuple[str, str] | None
