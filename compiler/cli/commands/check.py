"""``apc check FILE...``: report every error (and warning) of each template or preset, and
one summary line on success.

Internal: the interface is the ``apc`` command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from compiler._driver.checking import add_new, check, over_window
from compiler.cli.commands._common import (
    add_format,
    add_output_tokens,
    add_strict,
    number_problem,
    usage_error,
)
from compiler.cli.render import print_diagnostics
from compiler.errors import APCError, Diagnostic
from compiler.inputs.read import is_file

# A template's check loads only the parser and the macro catalogue; the budget checks below
# import the pipeline when they run.


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="check templates for errors")
    p.add_argument("files", nargs="+", metavar="FILE")
    g = p.add_argument_group(
        "budget set-up (any of these also checks that the required parts fit the window)"
    )
    p.add_argument(
        "--mode",
        choices=("agent", "legacy"),
        help="check a preset as compiled in this mode (default: the one apc compile chooses, "
        "agent for an enabled agent schema or <<agent.*>> macros in its entries)",
    )
    g.add_argument("--context", metavar="RUN.json", help="the run context")
    g.add_argument(
        "--provider", help="the provider (its windows apply; default: apc compile's default)"
    )
    g.add_argument("--model", help="model (default: the provider's); its window is checked")
    g.add_argument("--encoding", help="tokenizer encoding (default: the model's)")
    g.add_argument("--budget", type=int, metavar="N", help="total token budget of the request")
    add_output_tokens(g)
    g.add_argument("--reserve", type=int, metavar="N", help="tokens reserved for the response")
    add_strict(p)
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    missing = [f[:200] for f in args.files if not is_file(f)]
    if missing:
        return usage_error(f"no such file: {missing[0]}")
    problem = number_problem(args)
    if problem:
        return usage_error(problem)
    diagnostics: list[Diagnostic] = []
    failed = False
    for name in args.files:
        try:  # a .json file is a preset (broken JSON is an error, not template text)
            diagnostics.extend(check(Path(name), mode=args.mode).warnings)
        except APCError as exc:
            diagnostics.extend(exc.diagnostics)
            failed = True
    if args.budget is not None:
        diagnostics.extend(
            over_window(
                _provider(args), args.model, args.budget, args.reserve, args.max_output_tokens
            )
        )
    if not failed and _budget_requested(args):
        for name in args.files:
            found = _check_budget(name, args)
            add_new(diagnostics, found)
            failed = failed or any(d.severity == "error" for d in found)
    if args.strict and any(d.severity == "warning" for d in diagnostics):
        diagnostics = [dataclasses.replace(d, severity="error") for d in diagnostics]
        failed = True
    print_diagnostics(diagnostics, fmt=args.format)
    if not failed and args.format == "text":
        sys.stdout.write(summary(len(args.files), diagnostics) + "\n")
    return 1 if failed else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary(files: int, diagnostics: list[Diagnostic]) -> str:
    """The line a successful check ends with: ``ok: 2 files, 0 errors, 3 warnings``."""
    errors = sum(d.severity == "error" for d in diagnostics)
    return (
        f"ok: {_count(files, 'file')}, {_count(errors, 'error')}, "
        f"{_count(len(diagnostics) - errors, 'warning')}"
    )


_BUDGET_OPTIONS = ("context", "model", "encoding", "budget", "max_output_tokens", "reserve")


def _budget_requested(args: argparse.Namespace) -> bool:
    return any(getattr(args, name, None) is not None for name in _BUDGET_OPTIONS)


def _provider(args: argparse.Namespace) -> str:
    """The provider named, else the default one (the registry is imported only here: a
    template's check loads no provider)."""
    if args.provider is not None:
        return str(args.provider)
    from compiler.providers import DEFAULT_PROVIDER

    return DEFAULT_PROVIDER


def _check_budget(name: str, args: argparse.Namespace) -> list[Diagnostic]:
    """``context.budget_infeasible`` when what cannot be cut (plus the reserve) does not fit."""
    from compiler._driver.options import CompileOptions
    from compiler._driver.session import check_budget

    try:
        found = check_budget(
            Path(name),
            context=Path(args.context) if args.context else None,
            options=CompileOptions(
                model=args.model,
                budget=args.budget,
                encoding=args.encoding,
                provider=_provider(args),
                mode=args.mode,
                max_output_tokens=args.max_output_tokens,
                reserve=args.reserve,
            ),
        )
    except APCError as exc:
        return exc.diagnostics
    return found.diagnostics(name)
