"""The ``apc`` command line: a thin orchestrator over the pipeline stages.

Internal: the interface is the ``apc`` command line.

Each command family lives in a module that exposes ``register(subparsers)``; the module list
below is the one place commands are wired in. Exit codes: 0 success, 1 diagnostics, 2 usage.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence

from compiler._base.atomic import Terminated
from compiler.cli.render import print_diagnostics
from compiler.errors import APCError, is_too_deep, too_deep

COMMAND_MODULES = (
    "compiler.cli.commands.bench",
    "compiler.cli.commands.check",
    "compiler.cli.commands.compile",
    "compiler.cli.commands.explain",
    "compiler.cli.commands.explain_code",
    "compiler.cli.commands.lsp",
    "compiler.cli.commands.plan",
    "compiler.cli.commands.profile",
    "compiler.cli.commands.schema",
    "compiler.cli.commands.serve",
)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The argparse tree: only the command ``argv`` names (so ``apc check`` never imports
    the pipeline ``apc compile`` needs), else every command (``apc --help``, a typo)."""
    parser = argparse.ArgumentParser(
        prog="apc", description="Compile agent prompt presets into provider requests."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    named = f"compiler.cli.commands.{argv[0].replace('-', '_')}" if argv else ""
    # importing a command's modules builds thousands of objects (classes, models, tables)
    # that live as long as the process: the cycle collector, left on, would walk them again
    # and again while they are made (a fifth of a compile's import time)
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name in (named,) if named in COMMAND_MODULES else COMMAND_MODULES:
            importlib.import_module(name).register(sub)
    finally:
        if collecting:
            gc.enable()
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``apc``; return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 0 for --help, 2 for usage errors
        return int(exc.code or 0)
    try:
        code: int = args.func(args)
    except APCError as exc:
        print_diagnostics(exc.diagnostics, fmt=getattr(args, "format", "text"))
        return 1
    except (RecursionError, ValueError) as exc:  # nested too deep to process: still coded
        if not is_too_deep(exc):
            raise
        print_diagnostics(too_deep().diagnostics, fmt=getattr(args, "format", "text"))
        return 1
    except KeyboardInterrupt:
        return 130
    except Terminated as exc:  # SIGTERM during an atomic write, its temp file removed
        return 128 + exc.signum
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
