"""Filling the room history leaves, as SillyTavern fills it with dialogue examples.

SillyTavern (public/scripts/openai.js ``populateDialogueExamples``) adds the examples after
the history, from what the history left: each block's ``[Example Chat]`` header if it fits,
then the block's messages until the first that does not fit; a block none of whose messages
fit loses its header too; the next block is still tried. Components marked with
:data:`~compiler._base.frame.FILL_BLOCK` are granted so, each at its exact cost as a message of
its own (they are never merged: named, or the ``NO_SQUASH`` header).

Internal: part of the allocator.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler._base.frame import FILL_BLOCK, FILL_HEAD, MESSAGE_NAME, Message
from compiler._base.tokens import TokenCounter
from compiler.fit.items import Item
from compiler.providers.dialect import Dialect


class Filler:
    """The state of one grant run's fill: the room left (None: the total's, while history
    was not cut) and the blocks that stopped."""

    def __init__(self, items: Sequence[Item], dialect: Dialect, counter: TokenCounter) -> None:
        self.items = items
        self.dialect = dialect
        self.counter = counter
        self.left: int | None = None
        self.stopped: set[object] = set()

    def cost(self, item: Item) -> int:
        """The item's exact cost as a message of its own."""
        comp = item.comp
        message: Message = {"role": comp.role, "content": comp.inline_content or ""}
        name = comp.metadata.get(MESSAGE_NAME)
        if isinstance(name, str) and name:
            message["name"] = name
        return self.dialect.message_tokens(message, self.counter)

    def refusal(self, item: Item, left: int | None) -> str | None:
        """Why the item is not kept (None: it is)."""
        block = item.comp.metadata[FILL_BLOCK]
        if block in self.stopped:
            return "an earlier message of its example block did not fit"
        need = self.cost(item)
        if item.comp.metadata.get(FILL_HEAD):
            first = self._first(item)
            need += 0 if first is None else self.cost(first)
        if left is not None and need > left:
            return f"over the total budget ({left} tokens left)"
        return None

    def stop(self, item: Item) -> None:
        """The item's block takes nothing more."""
        self.stopped.add(item.comp.metadata[FILL_BLOCK])

    def _first(self, head: Item) -> Item | None:
        """The first message of the header's block."""
        block = head.comp.metadata[FILL_BLOCK]
        return next(
            (
                i
                for i in self.items[head.index + 1 :]
                if i.comp.metadata.get(FILL_BLOCK) == block and not i.comp.metadata.get(FILL_HEAD)
            ),
            None,
        )
