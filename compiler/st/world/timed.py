"""World info timed effects (sticky, cooldown, delay), as SillyTavern's
``WorldInfoTimedEffects`` (world-info.js) keeps them in ``chat_metadata.timedWorldInfo``.

Internal: used by :mod:`compiler.st.world.scan`; the state comes in as the run
context's ``timedWorldInfo`` and goes out on :attr:`compiler.CompileResult.world_info_state`.

The state is SillyTavern's shape: ``{"sticky": {KEY: EFFECT}, "cooldown": {KEY: EFFECT}}``
with ``KEY`` = ``"{world}.{uid}"`` (the lorebook's name and the entry's uid) and ``EFFECT`` =
``{"hash", "start", "end", "protected"}``; ``start``/``end`` count scanned chat messages.
One difference: SillyTavern finds an effect's entry by ``hash`` (a hash of the entry's JSON
as it holds it in memory); here it is found by its key, so a state written by SillyTavern
works as long as the lorebook keeps its name, and an edited entry keeps its effect. The
``hash`` written here is a hash of the entry's fields (kept for SillyTavern, which
otherwise ignores an effect whose hash it does not know).

Each scan (``checkTimedEffects``) first drops an effect whose chat did not advance past its
start (unless protected), whose entry is gone and whose end passed, or whose entry no
longer has that effect; an effect whose end is reached ends (a sticky entry with a cooldown
then starts its cooldown, protected, at once); the rest are active. ``delay`` N keeps an
entry out while the chat has fewer than N messages. After the scan, each activated entry
with ``sticky``/``cooldown`` that has no such effect yet gets one from now to now + N.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from compiler.inputs.lorebook import WorldEntry

TIMED_TYPES = ("sticky", "cooldown")
MAX_TIMED_EFFECTS = 100_000
"""The most effects of one type read from the run context (the rest are dropped)."""


def entry_key(entry: WorldEntry) -> str:
    """SillyTavern's ``world.uid`` key of an entry's effects."""
    return f"{entry.world}.{entry.uid}"


def entry_hash(entry: WorldEntry) -> int:
    """A stable 53-bit hash of the entry's fields (the ``hash`` of its effects)."""
    text = json.dumps(entry.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:7], "big") & ((1 << 53) - 1)


def clean_state(raw: dict[str, Any] | None) -> dict[str, dict[str, dict[str, Any]]]:
    """A copy of the given state with SillyTavern's repairs (``#ensureChatMetadata``): each
    type an object, an effect that is not an object dropped."""
    raw = raw or {}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for kind in TIMED_TYPES:
        effects = raw.get(kind)
        items = list(effects.items())[:MAX_TIMED_EFFECTS] if isinstance(effects, dict) else []
        out[kind] = {str(k): dict(v) for k, v in items if isinstance(v, dict) and v}
    return out


def _number(value: Any) -> float:
    """JavaScript's ``Number(value)`` for what a state holds (NaN for the rest)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip() or 0)
        except ValueError:
            return float("nan")
    return 0.0 if value is None else float("nan")


class TimedEffects:
    """The timed effects of one scan over ``chat_length`` scanned messages."""

    def __init__(
        self, chat_length: int, entries: Sequence[WorldEntry], state: dict[str, Any] | None
    ) -> None:
        self.length = chat_length
        self.state = clean_state(state)
        self._by_key = {entry_key(e): e for e in entries}
        self._active: dict[str, set[int]] = {"sticky": set(), "cooldown": set(), "delay": set()}
        self._check("sticky")
        self._check("cooldown")
        for entry in entries:
            if entry.delay and self.length < entry.delay:
                self._active["delay"].add(id(entry))

    def _effect(self, kind: str, entry: WorldEntry, protected: bool) -> dict[str, Any]:
        span = entry.sticky if kind == "sticky" else entry.cooldown
        return {
            "hash": entry_hash(entry),
            "start": self.length,
            "end": self.length + (span or 0),
            "protected": protected,
        }

    def _check(self, kind: str) -> None:
        effects = self.state[kind]
        for key, value in list(effects.items()):
            entry = self._by_key.get(key)
            if self.length <= _number(value.get("start")) and not value.get("protected"):
                del effects[key]  # the chat did not advance (a swipe, a regeneration)
                continue
            if entry is None:
                if self.length >= _number(value.get("end")):
                    del effects[key]
                continue
            if not getattr(entry, kind):
                del effects[key]
                continue
            if self.length >= _number(value.get("end")):
                del effects[key]
                if kind == "sticky" and entry.cooldown:
                    self.state["cooldown"][key] = self._effect("cooldown", entry, True)
                    self._active["cooldown"].add(id(entry))
                continue
            self._active[kind].add(id(entry))

    def active(self, kind: str, entry: WorldEntry) -> bool:
        """Whether ``entry`` is under the effect ``kind`` (sticky, cooldown, delay) now."""
        return id(entry) in self._active[kind]

    def record(self, activated: Sequence[WorldEntry]) -> None:
        """Start the sticky and cooldown effects of the activated entries that have none."""
        for entry in activated:
            for kind in TIMED_TYPES:
                key = entry_key(entry)
                if getattr(entry, kind) and key not in self.state[kind]:
                    self.state[kind][key] = self._effect(kind, entry, False)
