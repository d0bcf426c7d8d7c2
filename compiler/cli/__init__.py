"""The ``apc`` command line: a thin orchestrator over the pipeline stages.

Internal: the interface is the ``apc`` command line.

Each command family lives in a module that exposes ``register(subparsers)``; the module list
below is the one place commands are wired in. Exit codes: 0 success, 1 diagnostics, 2 usage.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

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
ONE_SHOT = frozenset({"check", "compile", "explain", "explain-code", "plan", "profile", "schema"})
"""The commands that run once and end (not ``serve``, ``lsp`` or ``bench``): an ``apc``
process of one of them ends without tearing its interpreter down (:func:`run`)."""


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


def main(argv: Sequence[str] | None = None, *, process: bool = False) -> int:
    """Run ``apc``; return the exit code. ``process``: this is the ``apc`` process, whose
    modules, once imported, live as long as it does (the cycle collector leaves them be)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    if process:
        gc.freeze()  # what the imports made: later collections walk only the compile's objects
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


def run() -> NoReturn:
    """The ``apc`` process (its console script, and ``python -m compiler``): :func:`main`;
    after a one-shot command, its output flushed, the process ends at once, without the
    interpreter's teardown (a collection of every object and every module's release: a
    tenth of a compile's process, for memory the system takes back anyway). Nothing is left
    unwritten by it: files are written and closed (atomically) before a command returns."""
    argv = sys.argv[1:]
    code = main(argv, process=True)
    if not argv or argv[0] not in ONE_SHOT:
        sys.exit(code)
    try:
        for stream in (sys.stdout, sys.stderr):  # None where the descriptor was closed
            if stream is not None:
                stream.flush()
    except OSError:  # a full disk, a closed pipe: the interpreter's exit reports it (120)
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    run()
