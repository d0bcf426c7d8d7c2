"""``apc bench SOURCE --context RUN.json [--budget N ...]``: replay the run's chat turn by
turn and report how the budgets behave (:func:`compiler.bench`).

Internal: the interface is the ``apc`` command line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from compiler import OPTIONS
from compiler.cli.commands._bench_text import render_report
from compiler.cli.commands._common import (
    add_format,
    check_output,
    diagnostics_format,
    dumps,
    usage_error,
    write_output,
)
from compiler.cli.commands._compile_options import (
    add_compile_arguments,
    options_from_args,
    usage_problem,
)
from compiler.cli.render import print_diagnostics
from compiler.errors import APCError
from compiler.replay import MAX_BUDGETS, bench, check_matplotlib, plot_report
from compiler.report import bench_html

#: ``--cache-stable auto``
AUTO = "auto"


#: the option table's budget (its bounds)
_BUDGET = next(o for o in OPTIONS if o.name == "budget")
#: the cache-stable step of a bare --cache-stable (the option table's)
_STEP = next(o.const for o in OPTIONS if o.name == "cache_stable")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="replay a run's chat turn by turn and report how the token budgets behave",
        conflict_handler="resolve",  # --budget takes several values here
    )
    add_compile_arguments(p)
    p.add_argument(
        "--budget",
        type=int,
        nargs="+",
        action="extend",
        metavar="N",
        help="total token budget(s): several compare budgets side by side",
    )
    p.add_argument(
        "--cache-stable",
        type=_step,
        nargs="?",
        const=_STEP,
        metavar="STEP|auto",
        help="move history cut points in steps of STEP messages "
        f"(default {_STEP}); auto: the smallest step that reaches a 97%% cached prefix "
        "with the bill within 10%% of the least bound under the provider's prompt cache "
        "(else the cheapest step), beside the default step",
    )
    g = p.add_argument_group("replay")
    g.add_argument("--every", type=int, default=1, metavar="K", help="replay every K-th turn")
    g.add_argument("--last", type=int, metavar="N", help="replay only the last N turns")
    g.add_argument(
        "--no-compare",
        action="store_true",
        help="skip the second replay with cache-stable the other way (half the compiles)",
    )
    p.add_argument("--plot", metavar="FILE.png", help="write a chart of tokens per category")
    p.add_argument("-o", "--output", metavar="OUT", help="write the report here, not stdout")
    add_format(p, html=True)
    p.set_defaults(func=run)


def _step(value: str) -> int | str:
    """``--cache-stable``'s value: a step, or ``auto``."""
    if value == AUTO:
        return AUTO
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a step or 'auto': {value[:40]!r}") from None


def _problem(args: argparse.Namespace) -> str | None:
    """Why the options cannot work (a usage error), or None."""
    if not args.context:
        return "apc bench needs --context RUN.json (the run whose chat is replayed)"
    if any(b < 1 for b in args.budget or ()):
        return "--budget must be at least 1"
    for budget in args.budget or ():
        problem = _BUDGET.problem(budget)  # the table's upper bound
        if problem is not None:
            return f"--budget {problem}"
    if len(set(args.budget or ())) > MAX_BUDGETS:
        return f"at most {MAX_BUDGETS} budgets (--budget) are compared in one bench"
    if args.every < 1:
        return "--every must be at least 1"
    if args.last is not None and args.last < 1:
        return "--last must be at least 1"
    return usage_problem(_single(args))


def _single(args: argparse.Namespace) -> argparse.Namespace:
    """The arguments as the shared compile options read them (one budget: set per run; an
    ``auto`` step: chosen per budget)."""
    step = None if args.cache_stable == AUTO else args.cache_stable
    return argparse.Namespace(**{**vars(args), "budget": None, "cache_stable": step})


class ProgressBar:
    """A one-line progress bar on ``stream``, drawn only when it is a terminal, at most ten
    times a second."""

    def __init__(self, stream: TextIO | None, width: int = 30) -> None:
        self.stream = stream
        self.enabled = stream is not None and stream.isatty()
        self.width = width
        self.drawn = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or self.stream is None:
            return
        now = time.monotonic()
        if done < total and now - self.drawn < 0.1:
            return
        self.drawn = now
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\rapc bench [{bar}] {done}/{total} compiles")
        self.stream.flush()

    def close(self) -> None:
        """Clear the line (nothing when nothing was drawn; once)."""
        if self.enabled and self.drawn and self.stream is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = 0.0


def run(args: argparse.Namespace) -> int:
    problem = _problem(args)
    if problem:
        return usage_error(problem)
    check_output(args.output)  # before replaying: a FIFO or symlink at OUT is refused
    if args.plot:
        check_output(args.plot)
        check_matplotlib()  # bench.plot_unavailable before a long replay, not after
    bar = ProgressBar(sys.stderr)
    try:
        report = bench(
            args.source,
            context=Path(args.context),
            budgets=args.budget,
            options=options_from_args(_single(args)),
            compare=not args.no_compare,
            auto=args.cache_stable == AUTO,
            every=args.every,
            last=args.last,
            progress=bar,
        )
    except APCError as exc:
        bar.close()
        print_diagnostics(exc.diagnostics, fmt=diagnostics_format(args))
        if "turn" in exc.details:
            sys.stderr.write(f"apc bench: stopped at the turn of {exc.details['turn']} messages\n")
        return 1
    finally:  # also on Ctrl-C: the bar's line is cleared
        bar.close()
    if report.warnings:
        print_diagnostics(report.warnings, fmt=diagnostics_format(args))
    if args.format == "html":
        text = bench_html(report)
    else:
        text = dumps(report.to_json()) if args.format == "json" else render_report(report)
    write_output(text, args.output)
    if args.plot:
        plot_report(report, Path(args.plot))
    return 0
