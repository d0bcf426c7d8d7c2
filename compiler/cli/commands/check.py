"""``apc check FILE...``: report every error (and warning) of each template or preset, and
one summary line on success.

Internal: the interface is the ``apc`` command line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler import budget_requested, check_sources
from compiler.cli.commands._common import (
    add_format,
    add_options,
    number_problem,
    option_values,
    usage_error,
)
from compiler.cli.render import print_diagnostics
from compiler.errors import Diagnostic
from compiler.inputs import is_file

if TYPE_CHECKING:
    from compiler import CompileOptions

# A template's check loads only the parser and the macro catalogue; the budget checks below
# import the pipeline when they run.


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="check templates for errors")
    p.add_argument("files", nargs="+", metavar="FILE")
    add_options(p, ("mode", "strict"))
    g = p.add_argument_group(
        "budget set-up (any of these also checks that the required parts fit the window)"
    )
    g.add_argument("--context", metavar="RUN.json", help="the run context")
    add_options(
        g,
        ("provider", "model", "encoding", "budget", "max_output_tokens", "reserve"),
        provider_help="the provider (its windows apply; default: apc compile's default)",
    )
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    missing = [f[:200] for f in args.files if not is_file(f)]
    if missing:
        return usage_error(f"no such file: {missing[0]}")
    problem = number_problem(args)
    if problem:
        return usage_error(problem)
    report = check_sources(
        [Path(name) for name in args.files],
        mode=args.mode,
        strict=args.strict,
        budget=_budget_options(args),
        context=Path(args.context) if args.context else None,
    )
    print_diagnostics(report.diagnostics, fmt=args.format)
    if report.ok and args.format == "text":
        sys.stdout.write(summary(len(args.files), list(report.diagnostics)) + "\n")
    return 0 if report.ok else 1


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary(files: int, diagnostics: list[Diagnostic]) -> str:
    """The line a successful check ends with: ``ok: 2 files, 0 errors, 3 warnings``."""
    errors = sum(d.severity == "error" for d in diagnostics)
    return (
        f"ok: {_count(files, 'file')}, {_count(errors, 'error')}, "
        f"{_count(len(diagnostics) - errors, 'warning')}"
    )


def _budget_options(args: argparse.Namespace) -> CompileOptions | None:
    """The options of the budget set-up to check, when any is given (a template's check
    alone loads no pipeline); ``--strict`` applies to the report, not to the compile."""
    if not budget_requested(vars(args), args.context):
        return None
    from compiler import CompileOptions

    values = option_values(args)
    values.pop("strict", None)
    return CompileOptions(**values)
