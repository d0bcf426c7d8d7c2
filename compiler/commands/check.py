"""``apc check FILE...``: report every error (and warning) of each template."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from compiler.api import check
from compiler.commands._common import add_format, usage_error
from compiler.errors import APCError, Diagnostic
from compiler.render import print_diagnostics
from compiler.tavern.assemble import check_preset, load_preset_source


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="check templates for errors")
    p.add_argument("files", nargs="+", metavar="FILE")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        return usage_error(f"no such file: {missing[0]}")
    diagnostics: list[Diagnostic] = []
    failed = False
    for name in args.files:
        try:
            preset = load_preset_source(Path(name))
            if preset is not None:
                found = check_preset(preset)
                failed = failed or any(d.severity == "error" for d in found)
                diagnostics.extend(found)
                continue
            bound = check(Path(name))
        except APCError as exc:
            diagnostics.extend(exc.diagnostics)
            failed = True
            continue
        diagnostics.extend(bound.warnings)
    print_diagnostics(diagnostics, fmt=args.format)
    return 1 if failed else 0
