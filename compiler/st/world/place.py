"""Where activated world info entries go, by SillyTavern's positions.

Internal: used by :mod:`compiler._assemble.assemble` and :mod:`compiler.tavern`.

Positions 0/1 (before/after) fill the ``worldInfoBefore``/``worldInfoAfter`` markers, 4
(``@D``) is injected in chat (:mod:`compiler.tavern.world`), 5/6 (example messages top and
bottom) wrap the card's dialogue examples (:func:`with_example_entries`), 2/3 wrap the
Author's Note (:mod:`compiler.tavern.notes`, a preset compile only: elsewhere they are
reported). 7 (outlet) and unknown positions are reported (``world.position_unsupported``),
never dropped silently.
"""

from __future__ import annotations

from typing import Any

from compiler.errors import Diagnostic
from compiler.inputs.lorebook import POSITIONS

#: the world info positions the compiler places (the others are reported: docs, SillyTavern presets)
PLACED_POSITIONS = frozenset({"before", "after", "at_depth", "em_top", "em_bottom"})


def world_position(entry: dict[str, Any]) -> str:
    """An activated entry's position by name (``before``, ``at_depth``, ...), from a name
    or from SillyTavern's number (0-7)."""
    raw = entry.get("position", "before")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return POSITIONS.get(raw, "other")
    return str(raw)


def position_unsupported(entry: dict[str, Any], position: str) -> Diagnostic:
    """The warning for an activated entry at a position the compiler does not place."""
    name = f" ({entry['comment']})" if entry.get("comment") else ""
    where = (
        "around the Author's Note, which only a SillyTavern preset compile places"
        if position in ("an_top", "an_bottom")
        else "a position the compiler does not place"
    )
    return Diagnostic(
        code="world.position_unsupported",
        severity="warning",
        message=f"world info entry {entry.get('uid')!r}{name} is activated at position "
        f"{position!r} ({where}): it is not in the request",
        hint="move the entry to another position (before, after, @D, example messages)",
    )


def texts_at(entries: list[dict[str, Any]], position: str) -> list[str]:
    """The contents of the activated ``entries`` at ``position``, in prompt order."""
    return [
        str(e["content"]) for e in entries if e.get("content") and world_position(e) == position
    ]


def with_example_entries(entries: list[dict[str, Any]], examples: str) -> str:
    """The card's dialogue examples with the entries at positions 5 and 6 as SillyTavern
    adds them: each entry a ``<START>`` block, the top ones before the card's (the highest
    order first), the bottom ones after (ascending order)."""
    top = texts_at(entries, "em_top")
    bottom = texts_at(entries, "em_bottom")
    if not top and not bottom:
        return examples
    blocks = [f"<START>\n{t.strip()}" for t in reversed(top)]
    if examples.strip():
        blocks.append(examples.strip())
    blocks += [f"<START>\n{t.strip()}" for t in bottom]
    return "\n".join(blocks)


def unplaced(entries: list[dict[str, Any]]) -> list[Diagnostic]:
    """``world.position_unsupported`` for each entry at a position not placed."""
    return [
        position_unsupported(e, p)
        for e in entries
        if (p := world_position(e)) not in PLACED_POSITIONS
    ]
