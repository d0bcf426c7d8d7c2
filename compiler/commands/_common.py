"""Helpers shared by the command modules: output files, JSON printing, format option."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from compiler.atomic import atomic_write_text, check_target


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="diagnostics format"
    )


def dumps(value: Any) -> str:
    """Stable, human-readable JSON (the same input gives the same bytes)."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def check_output(out: str | None) -> None:
    """Refuse ``-o OUT`` up front when OUT exists and is not a regular file."""
    if out is not None and out != "-":
        check_target(Path(out))


def write_output(text: str, out: str | None) -> None:
    """Print to stdout, or write ``out`` atomically (a temp file then a rename)."""
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    atomic_write_text(Path(out), text)


def usage_error(message: str) -> int:
    sys.stderr.write(f"apc: error: {message}\n")
    return 2
