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

from compiler.atomic import atomic_write_bytes
from compiler.errors import APCError
from compiler.fit.budgets import CATEGORIES
from compiler.replay.report import OVERHEAD, BenchReport

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


def _series(report: BenchReport, run_index: int) -> tuple[list[int], dict[str, list[int]]]:
    """The turns (messages) and, per category, the tokens kept in each (0 when absent)."""
    run = report.primary[run_index]
    ok = [t for t in run.per_turn if t.error is None]
    names: list[str] = []
    for t in ok:
        names += [n for n in t.categories if n not in names]
    # the fixed parts at the bottom, the budget categories above them, the framing on top
    order = sorted(names, key=lambda n: (n in CATEGORIES, n == OVERHEAD))
    return [t.messages for t in ok], {n: [t.categories.get(n, 0) for t in ok] for n in order}


def plot_report(report: BenchReport, path: Path) -> None:
    """Write the chart to ``path`` (PNG, atomically): per budget the tokens kept per
    category across the turns (stacked), the budget as a line."""
    agg = require_matplotlib()
    figure_mod = importlib.import_module("matplotlib.figure")
    runs = report.primary[:MAX_PANELS]
    fig = figure_mod.Figure(figsize=(9, 3.2 * len(runs)), layout="constrained")
    agg.FigureCanvasAgg(fig)
    axes = fig.subplots(len(runs), 1, squeeze=False)
    for i, run in enumerate(runs):
        ax = axes[i][0]
        x, series = _series(report, i)
        if x:
            ax.stackplot(x, *series.values(), labels=list(series), step="post")
        budgets = [t.budget for t in run.per_turn if t.error is None and t.budget]
        if budgets:
            ax.axhline(max(budgets), color="black", linestyle="--", linewidth=1, label="budget")
        ax.set_title(f"{report.model or ''} {run.label}".strip())
        ax.set_xlabel("chat messages at the turn")
        ax.set_ylabel("tokens")
        ax.legend(loc="upper left", fontsize="small")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    atomic_write_bytes(path, buffer.getvalue())
