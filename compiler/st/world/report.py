"""The lorebook debugger: every world info entry the scan considered, whether it activated
and why (or why not), where an activated one went and what the fit made of it.

Internal: the public names are :class:`compiler.WorldInfoReport` and
:class:`compiler.WorldEntryDecision` (``CompileResult.world_info_report``).

The report is made from the scan's trace (:mod:`compiler.st.world.trace`, recorded at
the engine's decision points) and, once the compile is fitted, the placement of each
activated entry (:mod:`compiler.st.world.placement`). Its records and their text are
built when first asked for (:attr:`WorldInfoReport.entries`); the journal's summary uses
the reason codes only. It holds at most :data:`MAX_REPORTED` entries: the activated ones
first, then the near misses, then the rest, in scan order; the others are counted by
reason in :attr:`WorldInfoReport.omitted`.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol

from compiler._base.frame import Component
from compiler._base.journal import Journal
from compiler._records import record
from compiler.inputs.lorebook import WorldEntry
from compiler.st.world.placement import WorldPlacement, entry_ref, placements
from compiler.st.world.reasons import describe
from compiler.st.world.run import WorldRun
from compiler.st.world.trace import (
    ACTIVATED,
    DISABLED,
    NO_KEYS,
    NO_MATCH,
    ScanTrace,
)

MAX_REPORTED = 1000
"""The most entries one report lists (the rest are counted by reason)."""
MAX_TEXT = 200
"""The longest comment or key a record carries, in characters (longer ones are cut)."""
_FAR = frozenset({NO_MATCH, NO_KEYS, DISABLED, "character_filter", "dont_activate"})


@record(frozen=True)
class WorldEntryDecision:
    """One entry the scan considered: ``activated`` and the ``reason`` code (how it
    activated: ``constant``, ``sticky``, ``decorator``, ``key``, ``min_activations``; or
    why not: ``disabled``, ``character_filter``, ``delay``, ``cooldown``,
    ``dont_activate``, ``no_keys``, ``no_match``, ``secondary_failed``,
    ``recursion_delayed``, ``recursion_excluded``, ``group_lost``, ``probability``,
    ``budget``, ``not_checked``), ``why`` in words, ``detail`` (the key, the roll, the
    group, ...: JSON-ready) and, activated, its ``placement``."""

    uid: int | str
    world: str
    comment: str
    activated: bool
    reason: str
    why: str
    detail: dict[str, Any] = field(default_factory=dict)
    placement: WorldPlacement | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "world": self.world,
            "comment": self.comment,
            "activated": self.activated,
            "reason": self.reason,
            "why": self.why,
            "detail": self.detail,
            "placement": self.placement.as_json() if self.placement is not None else None,
        }


class Decided(Protocol):
    """A ledger entry, as the report reads it."""

    @property
    def id(self) -> str: ...
    @property
    def action(self) -> str: ...


def _rank(code: str) -> int:
    return 0 if code in ACTIVATED else 2 if code in _FAR else 1


class WorldInfoReport:
    """Every world info entry one compile's scan considered (see the module's text).

    ``considered`` is how many the scan had; ``activated`` how many activated;
    ``budget`` the world info budget in tokens (None: none). :attr:`entries` lists at most
    :data:`MAX_REPORTED` of them in scan order, :attr:`omitted` counts the others by
    reason."""

    def __init__(
        self,
        trace: ScanTrace,
        placements: Mapping[tuple[str, str], WorldPlacement] | None = None,
        budget: int | None = None,
    ) -> None:
        self._trace = trace
        self._placements = dict(placements or {})
        self.budget = budget
        self.considered = len(trace.entries)
        self.activated = len(trace.activated)

    @functools.cached_property
    def _chosen(self) -> list[int]:
        """The indexes of the listed entries, in scan order (all of them when few)."""
        trace, n = self._trace, self.considered
        if n <= MAX_REPORTED:
            return list(range(n))
        codes = [trace.why.get(id(e), "") for e in trace.entries]
        return sorted(sorted(range(n), key=lambda i: (_rank(codes[i]), i))[:MAX_REPORTED])

    @functools.cached_property
    def omitted(self) -> dict[str, int]:
        """How many entries each reason code covers among those not listed."""
        if self.considered <= MAX_REPORTED:
            return {}
        listed = Counter(self._trace.why.get(id(self._trace.entries[i]), "") for i in self._chosen)
        left = Counter(self.reasons()) - listed
        return dict(sorted(left.items()))

    def reasons(self) -> dict[str, int]:
        """How many entries each reason code covers (all considered, none omitted)."""
        return dict(sorted(Counter(self._trace.why.values()).items()))

    def placement(self, entry: WorldEntry) -> WorldPlacement | None:
        return self._placements.get(entry_ref(entry))

    @functools.cached_property
    def entries(self) -> list[WorldEntryDecision]:
        """The records, made (and their text written) on first use."""
        trace = self._trace
        out: list[WorldEntryDecision] = []
        for i in self._chosen:
            entry = trace.entries[i]
            code = trace.why.get(id(entry), "")
            why, detail = describe(trace, entry, code)
            out.append(
                WorldEntryDecision(
                    uid=entry.uid,
                    world=entry.world,
                    comment=entry.comment[:MAX_TEXT],
                    activated=id(entry) in trace.activated,
                    reason=code,
                    why=why,
                    detail=detail,
                    placement=self.placement(entry) if id(entry) in trace.activated else None,
                )
            )
        return out

    def summary(self) -> dict[str, Any]:
        """The journal's ``world_info_scanned`` payload: counts, and the entries the fit cut."""
        cut = sorted(
            f"{world}.{uid}"
            for (world, uid), p in self._placements.items()
            if p.fit is not None and p.fit != "kept"  # summarized too: not whole
        )
        return {
            "considered": self.considered,
            "activated": self.activated,
            "reasons": self.reasons(),
            "budget": self.budget,
            "budgetReached": self._trace.budget is not None,
            "notKept": cut[:100],
        }

    def as_json(self) -> dict[str, Any]:
        """``apc explain --format json``'s ``worldInfo``."""
        return {
            "considered": self.considered,
            "activated": self.activated,
            "budget": self.budget,
            "entries": [d.as_json() for d in self.entries],
            "omitted": self.omitted,
        }

    def table(self) -> str:
        """The entries as a terminal table (``apc explain``): uid, comment, book, status
        (``activated`` and what the fit did, or the reason code) and why."""
        budget = "no budget" if self.budget is None else f"budget {self.budget:,} tokens"
        if self._trace.budget is not None:
            budget += " (reached)"
        head = [
            f"world info: {self.considered:,} entries considered, {self.activated:,} "
            f"activated; {budget}",
            "",
        ]
        rows = [["uid", "entry", "book", "status", "why"]]
        for d in self.entries:
            rows.append(
                [str(d.uid), _short(d.comment, 24) or "-", _short(d.world, 20), *_status(d)]
            )
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        rows.insert(1, ["-" * w for w in widths] + ["---"])
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[4]
                 for r in rows]  # fmt: skip
        if self.omitted:
            left = ", ".join(f"{code} {n:,}" for code, n in self.omitted.items())
            lines.append(f"(not listed: {left})")
        return "\n".join(head + [line.rstrip() for line in lines]) + "\n"


def _short(text: str, size: int) -> str:
    """One terminal cell of at most ``size`` characters: a lorebook's text on one line, its
    control characters (a newline, an escape sequence's ESC) as spaces."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= size else text[: size - 1] + "\u2026"


def _status(d: WorldEntryDecision) -> list[str]:
    """The status and why cells of one record."""
    if not d.activated:
        return [d.reason, _short(d.why, 140)]
    p = d.placement
    if p is None:
        return ["activated", _short(d.why, 140)]
    where = p.position + (f" @{p.depth} {p.role}" if p.depth is not None else "")
    where += f", order {p.order}"
    where += f", {p.component}" if p.component else ""
    where += f" ({p.note})" if p.note else ""
    fit = p.fit.replace("_", " ") if p.fit else "placed"
    return [f"activated, {fit}", _short(f"{d.why}; {where}", 140)]


def world_report(
    run: WorldRun | None,
    components: Sequence[Component],
    fitted: Sequence[Component],
    ledger: Sequence[Decided],
    journal: Journal | None = None,
) -> WorldInfoReport | None:
    """The report of a compile's scan ``run`` (None when nothing was scanned), with the
    assembled ``components``, the ``fitted`` ones and the ledger's entries. The
    ``journal`` gets one ``world_info_scanned`` event with the report's summary."""
    if run is None or run.trace is None:
        return None
    actions = {e.id: e.action for e in ledger}
    places = placements(run.shown, components, fitted, actions)
    report = WorldInfoReport(run.trace, places, run.budget)
    if journal is not None:
        journal.emit("world_info_scanned", **report.summary())
    return report
