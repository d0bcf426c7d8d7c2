"""A text of whole pieces cut to a limit: its leading pieces (a world-info block's entries,
:data:`~compiler._base.frame.PIECES`), never a piece cut short.

Internal: part of the allocator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compiler._base.frame import PIECES, Component
from compiler.fit.items import Outcome


def _text(pieces: dict[str, Any], k: int) -> str:
    return str(pieces["head"]) + "\n".join(pieces["items"][:k]) + str(pieces["tail"])


def leading_pieces(
    comp: Component, limit: int | None, cost: Callable[[Component], int]
) -> tuple[Component, int, int] | None:
    """``comp`` with the most leading pieces whose cost fits ``limit``, with that cost and
    how many pieces it keeps; None when it has no pieces, when they do not make its text
    (it changed after they were taken), or when not even one piece fits."""
    pieces = comp.metadata.get(PIECES)
    if limit is None or not isinstance(pieces, dict):
        return None
    items = pieces.get("items")
    if (
        not isinstance(items, list)
        or len(items) < 2
        or _text(pieces, len(items)) != (comp.inline_content)
    ):
        return None

    def made(k: int) -> tuple[Component, int]:
        part = comp.model_copy(update={"inline_content": _text(pieces, k)})
        return part, cost(part)

    # the largest k < len(items) that fits: a bisection (costs grow with k), then a step
    # down in case a seam made one prefix dearer than the next
    lo, hi = 0, len(items) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if made(mid)[1] <= limit:
            lo = mid
        else:
            hi = mid - 1
    while lo > 0:
        part, used = made(lo)
        if used <= limit:
            return part, used, lo
        lo -= 1
    return None


def pieces_outcome(
    comp: Component, limit: int | None, cost: Callable[[Component], int]
) -> Outcome | None:
    """What the fit makes of a text of pieces over ``limit``: its leading pieces that fit
    (:func:`leading_pieces`), truncated; None when not even one fits."""
    part = leading_pieces(comp, limit, cost)
    if part is None:
        return None
    out, used, kept = part
    total = len(comp.metadata[PIECES]["items"])
    why = f"kept the first {kept} of {total} entries to fit {limit} tokens"
    return Outcome(
        out=out,
        offered=cost(comp),
        used=used,
        action="truncated",
        reason=why,
        skipped={"detail": why, "piecesKept": kept},
    )
