"""``apc profile resolve``: resolve an agent profile from its layers and print it as JSON.

Internal: the interface is the ``apc`` command line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compiler.cli.commands._common import add_format, dumps
from compiler.cli.render import print_diagnostics
from compiler.profile import ResolvedAgentProfile, add_profile_arguments, resolve_from_args


def register(sub: Any) -> None:
    p = sub.add_parser("profile", help="agent profiles")
    actions = p.add_subparsers(dest="profile_command", metavar="ACTION")
    actions.required = True
    r = actions.add_parser(
        "resolve",
        help="resolve a profile from its layers",
        description="Resolve built-in < preset < character < user < run into one profile and "
        "print it as JSON (or, with --explain, which layer and file set each field).",
    )
    add_profile_arguments(r)
    r.add_argument(
        "--explain", action="store_true", help="print which layer and file set each field"
    )
    add_format(r)
    r.set_defaults(func=run_resolve)


def explain(resolved: ResolvedAgentProfile) -> str:
    """One line per field: ``PATH  LAYER  FILE``, aligned."""
    rows = [(path, e.layer, e.file or "-") for path, e in sorted(resolved.provenance.items())]
    width = max((len(r[0]) for r in rows), default=0)
    return "".join(f"{p.ljust(width)}  {layer.ljust(9)}  {file}\n" for p, layer, file in rows)


def run_resolve(args: argparse.Namespace) -> int:
    resolved = resolve_from_args(args)
    if resolved.warnings:
        print_diagnostics(resolved.warnings, fmt=args.format)
    if args.explain and args.format == "text":
        sys.stdout.write(explain(resolved))
    elif args.explain:
        sys.stdout.write(dumps(resolved.to_json()["provenance"]))
    else:
        sys.stdout.write(dumps(resolved.to_json()))
    return 0
