"""``apc bench --plot``: a PNG chart of the tokens per category across the turns, one panel
per budget. matplotlib is an optional extra (``pip install 'agent-prompt-compiler[plot]'``).

Internal: the API is :func:`plot_report` (``apc bench --plot``).
"""

from __future__ import annotations

import importlib
import importlib.util
import io
from pathlib import Path
from types import ModuleType
from typing import Any

from compiler._base.atomic import atomic_write_bytes
from compiler.errors import APCError
from compiler.fit.budgets import CATEGORIES
from compiler.replay.report import OVERHEAD, BenchReport, RunReport

MAX_PANELS = 8
"""The most budgets charted (one panel each)."""


def _unavailable() -> APCError:
    return APCError(
        code="bench.plot_unavailable",
        message="--plot needs matplotlib, which is not installed",
        hint="pip install 'agent-prompt-compiler[plot]' (or pip install matplotlib)",
    )


def check_matplotlib() -> None:
    """``bench.plot_unavailable`` when matplotlib is not installed (found, not imported: a
    replay then runs without it loaded)."""
    try:
        found = importlib.util.find_spec("matplotlib")
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise _unavailable()


def require_matplotlib() -> ModuleType:
    """matplotlib's Agg canvas module; ``bench.plot_unavailable`` when it cannot be
    imported."""
    try:
        importlib.import_module("matplotlib")
        return importlib.import_module("matplotlib.backends.backend_agg")
    except ImportError:
        raise _unavailable() from None


def _names(runs: list[RunReport]) -> list[str]:
    """The categories of all runs' turns: the fixed parts (kinds) first, the budget
    categories above them, the framing on top (one order, so one colour each)."""
    names: list[str] = []
    for run in runs:
        for t in run.per_turn:
            names += [n for n in t.categories if n not in names]
    return sorted(names, key=lambda n: (n == OVERHEAD, n in CATEGORIES))


def _panel(ax: Any, run: RunReport, names: list[str], title: str) -> None:
    """One run: its turns' tokens per category, stacked, and its budget as a line."""
    ok = [t for t in run.per_turn if t.error is None]
    x = [t.messages for t in ok]
    if x:
        shown = [n for n in names if any(t.categories.get(n) for t in ok)]
        ax.stackplot(
            x,
            *([t.categories.get(n, 0) for t in ok] for n in shown),
            labels=shown,
            colors=[f"C{names.index(n) % 10}" for n in shown],
            step="post",
        )
    budgets = [t.budget for t in ok if t.budget]
    if budgets:
        ax.axhline(max(budgets), color="black", linestyle="--", linewidth=1, label="budget")
    ax.set_title(title if x else f"{title}: no turn fit")
    ax.set_xlabel("chat messages at the turn")
    ax.set_ylabel("tokens")
    if x:  # the legend top down, as the bands are stacked
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(
            handles[::-1],
            labels[::-1],
            loc="upper left",
            bbox_to_anchor=(1.01, 1),
            fontsize="small",
        )


def plot_report(report: BenchReport, path: Path) -> None:
    """Write the chart to ``path`` (PNG, atomically): per budget (the primary runs, at most
    :data:`MAX_PANELS`) the tokens kept per category across the turns, the budget a line."""
    agg = require_matplotlib()
    figure_mod = importlib.import_module("matplotlib.figure")
    runs = report.primary[:MAX_PANELS]
    fig = figure_mod.Figure(figsize=(9, 3.2 * len(runs)), layout="constrained")
    agg.FigureCanvasAgg(fig)
    axes = fig.subplots(len(runs), 1, squeeze=False)
    names = _names(runs)
    for i, run in enumerate(runs):
        _panel(axes[i][0], run, names, f"{report.model or ''} {run.label}".strip())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    atomic_write_bytes(path, buffer.getvalue())
