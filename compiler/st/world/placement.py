"""Where each activated world info entry went in the request, and what the fit made of it
(the lorebook debugger's placement).

Internal: used by :mod:`compiler.st.world.report`; the compile calls
:func:`world_report` once it is fitted.

An entry at ``before`` / ``after`` (or any position, for ``<<agent.world.activated>>``
without one) is a piece of a world info block (:data:`~compiler._base.frame.PIECES`): the block
kept whole keeps it, a block cut to its leading entries keeps it when it is among them,
a dropped block drops it. An ``@D`` entry is injected in the chat history (a preset
compile): ``kept`` while the fitted history still holds world info. Entries around the
dialogue examples or the Author's Note have no ``fit`` (their host text's fate is not
followed). An entry with no content, at an
unsupported position, deeper than SillyTavern injects, or at a position no component
shows is ``not_placed``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from compiler._base.frame import PIECES, Component, ComponentKind
from compiler._records import record
from compiler.inputs.lorebook import WorldEntry
from compiler.st.world.place import PLACED_POSITIONS, world_position


@record(frozen=True)
class WorldPlacement:
    """Where an activated entry went: its ``position`` (``before``, ``after``,
    ``at_depth``, ``em_top``, ``an_top``, ...), ``depth`` and ``role`` (``at_depth``
    only), ``order``; the ``component`` that holds it and what the fit did: ``fit`` is
    ``kept``, ``truncated`` (the text holding it was cut), ``summarized``, ``dropped``
    (its block was left out, or its entry was cut from the block), ``not_placed`` (nowhere
    in the request: ``note`` says why) or None (placed inside another text whose fate is
    not tracked: the dialogue examples, the Author's Note)."""

    position: str
    order: int
    depth: int | None = None
    role: str | None = None
    component: str | None = None
    fit: str | None = None
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"position": self.position, "order": self.order}
        if self.depth is not None:
            out |= {"depth": self.depth, "role": self.role}
        return out | {"component": self.component, "fit": self.fit, "note": self.note}


def entry_ref(entry: WorldEntry | Mapping[str, Any]) -> tuple[str, str]:
    """An entry's (book, uid) as text: how a placed entry finds its record."""
    if isinstance(entry, WorldEntry):
        return entry.world, str(entry.uid)
    return str(entry.get("world", "")), str(entry.get("uid"))


WORLD_INFO = "worldInfo"  # the budget category of world info in chat
MAX_DEPTH = 1000  # SillyTavern injects depths 0-1000 only
_ROLES = {0: "system", 1: "user", 2: "assistant"}


def _kept(pieces: Any, content: str | None) -> int | None:
    """How many leading pieces a cut block kept (None when its text is not theirs)."""
    if not isinstance(pieces, dict) or not isinstance(pieces.get("items"), list):
        return None
    items, head, tail = pieces["items"], str(pieces["head"]), str(pieces["tail"])
    for k in range(len(items), 0, -1):
        if head + "\n".join(items[:k]) + tail == content:
            return k
    return None


def _block_fates(
    entries: Sequence[dict[str, Any]],
    blocks: Sequence[Component],
    fitted: Mapping[str, Component],
    actions: Mapping[str, str],
) -> dict[tuple[str, str], tuple[str, str]]:
    """(book, uid) -> (component, fit) of each entry in a world info block."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for comp in blocks:
        args = comp.metadata.get("args")
        position = args.get("position") if isinstance(args, dict) else None
        mine = [
            e
            for e in entries
            if e.get("content") and (position is None or world_position(e) == position)
        ]
        action = actions.get(comp.id, "not_placed")
        done = fitted.get(comp.id)
        kept = None
        if action == "truncated" and done is not None:
            kept = _kept(done.metadata.get(PIECES), done.inline_content)
        for i, entry in enumerate(mine):
            fate = action if kept is None else "kept" if i < kept else "dropped"
            out.setdefault(entry_ref(entry), (comp.id, fate))
    return out


def _holds_world_info(comp: Component | None) -> bool:
    """Whether a chat history has world info injected in it (a message, or part of one, in
    the ``worldInfo`` category). A lazily read chat has no injections (never read here)."""
    messages = comp.messages if comp is not None else None
    if not isinstance(messages, list):
        return False
    return any(
        m.get("category") == WORLD_INFO or any(s[0] == WORLD_INFO for s in m.get("spans", ()))
        for m in messages
    )


def _history_host(
    components: Sequence[Component], fitted: Mapping[str, Component], actions: Mapping[str, str]
) -> tuple[str, str] | None:
    """(component, fit) of the chat history holding the ``@D`` entries (None: no history has
    them): ``kept`` while the fitted history still holds world info, else ``dropped``."""
    for comp in components:
        if comp.kind == ComponentKind.CHAT_HISTORY and _holds_world_info(comp):
            kept = actions.get(comp.id) != "dropped" and _holds_world_info(fitted.get(comp.id))
            return comp.id, "kept" if kept else "dropped"
    return None


def _depth(entry: Mapping[str, Any]) -> int:
    raw = entry.get("depth")
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0 else 4


def _role(entry: Mapping[str, Any]) -> str:
    raw = entry.get("role")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return _ROLES.get(raw, "system")
    return raw if raw in ("system", "user", "assistant") else "system"


def _placement(
    entry: dict[str, Any],
    block: tuple[str, str] | None,
    history: tuple[str, str] | None,
) -> WorldPlacement:
    position = world_position(entry)
    raw_order = entry.get("order", 100)
    order = raw_order if isinstance(raw_order, int) else 100
    depth = _depth(entry) if position == "at_depth" else None
    role = _role(entry) if position == "at_depth" else None
    base = WorldPlacement(position=position, order=order, depth=depth, role=role)
    if not entry.get("content"):
        return _with(base, None, "not_placed", "empty content")
    if block is not None:
        return _with(base, block[0], block[1], None)
    if position not in PLACED_POSITIONS and position not in ("an_top", "an_bottom"):
        return _with(base, None, "not_placed", f"position {position!r} is not placed")
    if position == "at_depth":
        if depth is not None and depth > MAX_DEPTH:
            return _with(base, None, "not_placed", f"deeper than {MAX_DEPTH}")
        if history is not None:
            return _with(base, history[0], history[1], "in the chat history")
    if position in ("before", "after", "at_depth"):
        return _with(base, None, "not_placed", "no component places this position")
    return base


def _with(
    base: WorldPlacement, comp: str | None, fit: str | None, note: str | None
) -> WorldPlacement:
    return dataclasses.replace(base, component=comp, fit=fit, note=note)


def placements(
    shown: Sequence[dict[str, Any]], components: Sequence[Component], fitted: Sequence[Component],
    actions: Mapping[str, str],
) -> dict[tuple[str, str], WorldPlacement]:  # fmt: skip
    """(book, uid) -> placement of each activated entry ``shown`` (as placed, after the
    regex scripts), from the assembled ``components``, the ``fitted`` ones and each
    component's ledger ``actions``."""
    blocks = [c for c in components if c.kind == ComponentKind.WORLD_INFO]
    fates = _block_fates(shown, blocks, {c.id: c for c in fitted}, actions)
    history = _history_host(components, {c.id: c for c in fitted}, actions)
    return {entry_ref(e): _placement(e, fates.get(entry_ref(e)), history) for e in shown}
