"""Helpers shared by the command modules: output files, JSON printing, format option."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from compiler._base.atomic import atomic_write_text, check_target


def add_format(parser: argparse.ArgumentParser, *, html: bool = False) -> None:
    """``--format text|json`` (and ``html`` where a command draws a report page)."""
    if html:
        parser.add_argument(
            "--format",
            choices=("text", "json", "html"),
            default="text",
            help="output format (html: a self-contained page to open in a browser; its "
            "diagnostics are on the page, and in text on stderr)",
        )
        return
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="diagnostics format"
    )


def diagnostics_format(args: argparse.Namespace) -> str:
    """The format of the diagnostics on stderr: a page's are text."""
    return "json" if args.format == "json" else "text"


def dumps(value: Any) -> str:
    """Stable, human-readable JSON (the same input gives the same bytes)."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def check_output(out: str | None) -> None:
    """Refuse ``-o OUT`` up front when OUT exists and is not a regular file."""
    if out is not None and out != "-":
        check_target(Path(out))


def same_file(a: str | None, b: str | None) -> bool:
    """Whether two output paths (``-`` is stdout) name one file: the same path, or one file
    by two names (a link)."""
    if a is None or b is None or "-" in (a, b):
        return False
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def write_output(text: str, out: str | None) -> None:
    """Print to stdout, or write ``out`` atomically (a temp file then a rename)."""
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    atomic_write_text(Path(out), text)


def usage_error(message: str) -> int:
    sys.stderr.write(f"apc: error: {message}\n")
    return 2


def add_output_tokens(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--max-output-tokens N`` (``--max-completion-tokens`` is its alias)."""
    p.add_argument(
        "--max-output-tokens",
        "--max-completion-tokens",
        dest="max_output_tokens",
        type=int,
        metavar="N",
        help="the response's token limit (max_completion_tokens, max_output_tokens, "
        "max_tokens or generationConfig.maxOutputTokens, by provider)",
    )


def add_strict(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings (e.g. context.budget_over_window) as errors: exit 1, no output",
    )


def number_problem(args: argparse.Namespace) -> str | None:
    """Why a number option cannot work (a usage error, exit 2), or None: the same checks
    for ``check``, ``compile`` and ``explain``."""
    if args.budget is not None and args.budget < 0:
        return "--budget must be at least 0"
    if args.max_output_tokens is not None and args.max_output_tokens < 1:
        return "--max-output-tokens must be at least 1"
    if args.reserve is not None and args.reserve < 0:
        return "--reserve must be at least 0"
    if getattr(args, "top_k", None) is not None and args.top_k < 0:
        return "--top-k must be at least 0"
    if getattr(args, "cache_stable", None) is not None and args.cache_stable < 1:
        return "--cache-stable STEP must be at least 1"
    return None
