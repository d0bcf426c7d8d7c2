"""Replaying a chat turn by turn to see how budgets behave (``apc bench``).

:func:`compiler.bench` (this package's :func:`bench`) replays; the report types it returns
(:class:`BenchReport`, a :class:`RunReport` per budget and its statistics) are public here.
"""

from compiler.replay.plot import check_matplotlib, plot_report
from compiler.replay.report import (
    BenchReport,
    BillStats,
    CategoryStats,
    ComponentStats,
    RunReport,
    Stats,
    TurnRecord,
)
from compiler.replay.runner import MAX_BUDGETS, Progress, bench
from compiler.replay.turns import CompilerFactory, TurnCompiler, request_turns, sessions

__all__ = [
    "MAX_BUDGETS",
    "BenchReport",
    "BillStats",
    "CategoryStats",
    "CompilerFactory",
    "ComponentStats",
    "Progress",
    "RunReport",
    "Stats",
    "TurnCompiler",
    "TurnRecord",
    "bench",
    "check_matplotlib",
    "plot_report",
    "request_turns",
    "sessions",
]
