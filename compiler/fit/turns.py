"""The newest turn of each chat history: the newest user message and what follows it, which
the fit never cuts (unless the profile's ``context.required`` lets it go, see
:func:`compiler.fit.strategy.required_turn`).

The floor counts it (:func:`compiler.fit.strategy.floor_components`), so the allocator holds
its room, and its share of each category's budget, from the start of a grant run until the
history's turn; a history fit then keeps it whatever it costs.

In-chat text inserted into the newest turn (a message with an ``origin``: world info, a
note or a preset entry at depth 0) is not the user's own words: when the budget cannot hold
the frame, the fit tries once more without it (:func:`without_inserted`), so a bigger budget
whose world-info scan activates more never fails where a smaller one fit.

Internal: part of the allocator.
"""

from __future__ import annotations

from compiler._base.frame import ContextFrame
from compiler._base.kinds import ComponentKind
from compiler._base.tokens import TokenCounter
from compiler._records import record
from compiler.errors import Diagnostic
from compiler.fit.budgets import messages_shares
from compiler.fit.costs import Costs
from compiler.fit.strategy import required_turn, turn_part
from compiler.providers.dialect import Dialect

#: The hint of a newest turn over a budget: no cutting strategy helps it.
HINT = (
    "the newest turn is never cut: raise the budget, or let the profile's context.required "
    "leave out newestTurn"
)


@record(frozen=True)
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


def without_inserted(frame: ContextFrame) -> tuple[ContextFrame, list[Diagnostic]] | None:
    """``frame`` with the inserted messages (``origin`` set) of each history's newest turn
    left out, and a ``context.component_dropped`` warning for each history that lost some;
    None when no newest turn holds one. A history read lazily is read whole here."""
    out, warnings = [], []
    for comp in frame.components:
        keep = required_turn(comp)
        msgs = comp.messages or []
        head, tail = len(msgs) - keep, list(msgs[len(msgs) - keep :]) if keep else []
        own = [m for m in tail if not m.get("origin")]
        if not keep or len(own) == len(tail):
            out.append(comp)
            continue
        kinds = sorted({str(m.get("category") or "injection") for m in tail if m.get("origin")})
        out.append(comp.model_copy(update={"messages": [*msgs[:head], *own]}))
        warnings.append(
            Diagnostic(
                code="context.component_dropped",
                severity="warning",
                message=f"the budget left out the {len(tail) - len(own)} in-chat message(s) "
                f"({', '.join(kinds)}) inserted into the newest turn of {comp.id} "
                f"({ComponentKind.CHAT_HISTORY.value})",
                file=comp.source,
                hint="the request with them is over the budget; raise the budget to send them",
            )
        )
    if not warnings:
        return None
    return ContextFrame(components=out, metadata=frame.metadata), warnings
