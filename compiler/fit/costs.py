"""What a component costs in the request: its content by the dialect's cost model, and what
it adds around its content when it joins the components already present (a message of its
own or one it splits in two, merges at its seams, whitespace trimmed at a message's edges,
tool framing).

Internal: part of the allocator.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from compiler._base.frame import MESSAGE_KINDS, Component, ComponentKind, Message, Role
from compiler._base.tokens import TokenCounter
from compiler.fit.items import Item
from compiler.providers.dialect import Dialect

#: Characters each side of a seam between two texts that the grant loop tokenizes together.
SEAM_WINDOW = 32


def _key(comp: Component | None) -> tuple[int, str] | None:
    """The message an inline component joins: its group and role."""
    return None if comp is None else (comp.group, comp.role)


def _joins(item: Item) -> bool:
    """Whether the item's outcome is a seam's neighbour: inline text, or a message block
    (which stops the search); tool definitions and empty text are looked past."""
    out = item.outcome.out
    if out is None:
        return False
    if out.kind in MESSAGE_KINDS:
        return True
    return out.kind != ComponentKind.TOOL_DEFINITIONS and bool(out.inline_content)


class Neighbours:
    """The items a seam can join (:func:`_joins`), by index, kept as the grant loop goes:
    finding a neighbour is a bisection, not a scan past every item not yet granted (a scan
    made a frame of many components quadratic: minutes for 40,000 macros).

    The grant loop changes an item's outcome only at its own turn; :meth:`update` it then."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.items = items
        self.indices = [i.index for i in items if _joins(i)]

    def update(self, item: Item) -> None:
        """Take the item's outcome into account (after its turn)."""
        pos = bisect.bisect_left(self.indices, item.index)
        there = pos < len(self.indices) and self.indices[pos] == item.index
        if _joins(item) and not there:
            self.indices.insert(pos, item.index)
        elif there and not _joins(item):
            del self.indices[pos]

    def of(self, index: int, step: int) -> Component | None:
        """The nearest present inline text before (step -1) or after (step 1) ``index``;
        None when a message block or the edge comes first."""
        pos = bisect.bisect_left(self.indices, index)
        if step > 0 and pos < len(self.indices) and self.indices[pos] == index:
            pos += 1
        j = pos - 1 if step < 0 else pos
        if not 0 <= j < len(self.indices):
            return None
        out = self.items[self.indices[j]].outcome.out
        return None if out is None or out.kind in MESSAGE_KINDS else out


class Costs:
    """The cost model of one dialect and encoding (message framing cached per role)."""

    def __init__(self, dialect: Dialect, counter: TokenCounter, *, edges: bool = False) -> None:
        self.dialect = dialect
        self.counter = counter
        self.edges = edges  # messages keep their edges (AS_WRITTEN): nothing is trimmed
        self.frames: dict[str, int] = {}

    def cost(self, comp: Component) -> int:
        """Tokens of the component's own content."""
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

    def overhead(self, near: Neighbours, item: Item, text: str | None = None) -> int:
        """What the request gains besides the item's content (``text``, else all of it) when
        it joins what is present in ``near.items``. An estimate (seams are looked at
        :data:`SEAM_WINDOW` characters wide); the allocator decides on the exact count."""
        items = near.items
        comp = item.comp
        if comp.kind == ComponentKind.TOOL_DEFINITIONS:
            present = (i.outcome.out for i in items if i.outcome.out is not None)
            tools = [t for out in present for t in out.tools or []]
            now = self.dialect.tools_tokens(tools, self.counter)
            grown = self.dialect.tools_tokens([*tools, *(comp.tools or [])], self.counter)
            return grown - now - self.cost(comp)
        text = comp.inline_content if text is None else text
        if comp.kind not in MESSAGE_KINDS and not text:
            return 0
        before, after = near.of(item.index, -1), near.of(item.index, 1)
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
        if self.edges:
            return 0
        count = self.counter.count
        if head is None and len(text) <= 2 * SEAM_WINDOW:
            return count(text.strip()) - count(text)
        if head is None:
            return self.trimmed(text, True) + self.trimmed(text, False)
        w = text[:SEAM_WINDOW] if head else text[-SEAM_WINDOW:]
        return count(w.lstrip() if head else w.rstrip()) - count(w)
