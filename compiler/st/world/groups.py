"""World info inclusion groups, as SillyTavern's ``filterByInclusionGroups`` (world-info.js)
picks one entry per group among the entries one scan pass activated.

Internal: used by :mod:`compiler.st.world.scan`.

An entry's ``group`` may name several groups (a comma list). Per group, in this order:

1. timed effects: if some members are sticky, only they stay (the group is then settled);
   members on cooldown or delay are removed;
2. scoring, when the scan setting ``world_info_use_group_scoring`` or a member's
   ``useGroupScoring`` is on: each scored member whose key-match score
   (:meth:`compiler.st.world.activation.Scanner.score`) is below the group's best is
   removed;
3. a group that an already activated entry belongs to (its whole ``group`` text equal to
   the group's name, as SillyTavern compares) loses all its new members;
4. with one member left there is nothing to choose; else the member with
   ``groupOverride`` and the highest ``order`` wins; else a weighted roll on
   ``groupWeight`` (default 100) picks the winner. The roll is seeded
   (:func:`group_roll`), so a compile is reproducible.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection

from compiler.inputs.lorebook import WorldEntry

DEFAULT_WEIGHT = 100

Lost = Callable[[WorldEntry, str, str, object], None]
"""Told of each entry an inclusion group removes: (entry, group, how, the other entry or the
scores)."""


def group_roll(seed: int, group: str, chat_length: int, scan_pass: int) -> float:
    """The roll in [0, 1) for ``group``: ``random.Random`` seeded with the run's seed, the
    group's name, the number of scanned messages and the scan pass (1 = the first)."""
    return random.Random(
        f"{seed}\x00world_info.group\x00{group}\x00{chat_length}\x00{scan_pass}"
    ).random()


def _groups(entries: list[WorldEntry]) -> dict[str, list[WorldEntry]]:
    grouped: dict[str, list[WorldEntry]] = {}
    for entry in entries:
        for name in re.split(r",\s*", entry.group):
            if name:
                grouped.setdefault(name, []).append(entry)
    return grouped


def filter_groups(
    new: list[WorldEntry],
    activated: Collection[WorldEntry],
    *,
    is_active: Callable[[str, WorldEntry], bool],
    score: Callable[[WorldEntry], int],
    use_scoring: bool,
    roll: Callable[[str], float],
    lost: Lost | None = None,
) -> list[WorldEntry]:
    """``new`` (this pass's activated entries, in candidate order) with each inclusion
    group's losers removed. ``is_active(kind, entry)`` tells timed effects, ``score`` an
    entry's key score, ``roll(group)`` the group's seeded roll; ``lost(entry, group, how,
    other)`` hears of each loser (``how``: ``sticky``, ``timed``, ``score`` with
    (score, best), ``taken`` with the entry already activated, ``override`` or ``roll``
    with the winner)."""
    grouped = _groups([e for e in new if e.group])
    if not grouped:
        return new
    removed: dict[int, tuple[WorldEntry, str, str, object]] = {}

    def remove(entry: WorldEntry, group: str, how: str, other: object = None) -> None:
        removed.setdefault(id(entry), (entry, group, how, other))

    sticky_groups: set[str] = set()
    for name, group in grouped.items():
        sticky = [e for e in group if is_active("sticky", e)]
        if sticky:
            for e in group:
                if not is_active("sticky", e):
                    remove(e, name, "sticky", sticky[0])
            sticky_groups.add(name)
        for e in group:
            if is_active("cooldown", e) or is_active("delay", e):
                remove(e, name, "timed")
    for name, group in grouped.items():
        if name in sticky_groups:
            continue
        if not use_scoring and not any(e.use_group_scoring for e in group):
            continue
        scores = [score(e) for e in group]
        best = max(scores)
        scored = [
            e
            for e, s in zip(group, scores, strict=True)
            if (e.use_group_scoring if e.use_group_scoring is not None else use_scoring)
            and s < best
        ]
        for e, s in zip(group, scores, strict=True):
            if e in scored:
                remove(e, name, "score", (s, best))
        grouped[name] = [e for e in group if e not in scored]
    done: dict[str, WorldEntry] = {}
    for e in activated:
        done.setdefault(e.group, e)
    for name, group in grouped.items():
        if name in sticky_groups:
            continue
        if name in done:
            for e in group:
                remove(e, name, "taken", done[name])
            continue
        if len(group) <= 1:
            continue
        winner = _winner(group, roll(name))
        if winner is not None:
            how = "override" if winner.group_override else "roll"
            for e in group:
                if e is not winner:
                    remove(e, name, how, winner)
    if lost is not None:
        for entry, group_name, how, other in removed.values():
            lost(entry, group_name, how, other)
    return [e for e in new if id(e) not in removed]


def _winner(group: list[WorldEntry], roll: float) -> WorldEntry | None:
    """The override with the highest order, else the weighted roll's pick."""
    overrides = sorted((e for e in group if e.group_override), key=lambda e: -e.order)
    if overrides:
        return overrides[0]
    total = sum(e.group_weight for e in group)
    value = roll * total
    current = 0.0
    for entry in group:
        current += entry.group_weight
        if value <= current:
            return entry
    return None
