"""The newest turn of each chat history: the newest user message and what follows it, which
the fit never cuts (unless the profile's ``context.required`` lets it go, see
:func:`compiler.fit.strategy.required_turn`).

The floor counts it (:func:`compiler.fit.strategy.floor_components`), so the allocator holds
its room, and its share of each category's budget, from the start of a grant run until the
history's turn; a history fit then keeps it whatever it costs.

Internal: part of the allocator.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler._base.frame import ContextFrame
from compiler._base.tokens import TokenCounter
from compiler.fit.budgets import messages_shares
from compiler.fit.costs import Costs
from compiler.fit.strategy import required_turn, turn_part
from compiler.providers.dialect import Dialect

#: The hint of a newest turn over a budget: no cutting strategy helps it.
HINT = (
    "the newest turn is never cut: raise the budget, or let the profile's context.required "
    "leave out newestTurn"
)


@dataclass(frozen=True)
class NewestTurn:
    """One history's newest turn: how many messages, what the floor counted for them, and
    that cost by budget category (its inserted text in theirs, the rest ``history``)."""

    keep: int
    cost: int
    shares: dict[str, int]

    def hold(self, pools: dict[str, int | None], sign: int) -> None:
        """Take its shares from the category ``pools`` (-1), or give them back (1)."""
        for name, n in self.shares.items():
            if pools.get(name) is not None:
                pools[name] = (pools[name] or 0) + sign * n

    def problem(
        self, cid: str, own: int | None, pools: dict[str, int | None]
    ) -> tuple[str, int] | None:
        """Why it cannot be kept (its message and the budget it is over), or None: over the
        component's own budget, or over what is left of a category's."""
        what = f"the newest turn of {cid}"
        if own is not None and self.cost > own:
            return f"{what} needs {self.cost} tokens; its budget={own}", own
        for name, n in self.shares.items():
            left = pools.get(name)
            if left is not None and n > left:
                return f"{what} needs {n} tokens of {name}; {left} are left", left
        return None


def newest_turns(
    frame: ContextFrame, costs: Costs, dialect: Dialect, counter: TokenCounter
) -> dict[int, NewestTurn]:
    """The newest turn of each history that has one, by component index."""
    out = {}
    for i, comp in enumerate(frame.components):
        if keep := required_turn(comp):
            tail = turn_part(comp, keep)
            cost = costs.cost(tail)
            placed = messages_shares(tail.messages or (), dialect, counter)
            out[i] = NewestTurn(
                keep, cost, {"history": max(0, cost - sum(placed.values())), **placed}
            )
    return out
