"""Helpers shared by the command modules: output files, JSON printing, format option."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from compiler.errors import APCError


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="diagnostics format"
    )


def dumps(value: Any) -> str:
    """Stable, human-readable JSON (the same input gives the same bytes)."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def write_output(text: str, out: str | None) -> None:
    """Print to stdout, or write ``out`` atomically (a temp file then a rename)."""
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    target = Path(out)
    if target.is_dir():
        raise APCError(code="io.write_failed", message=f"{out} is a directory", file=out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise APCError(
            code="io.write_failed", message=f"cannot write {out}: {exc.strerror}", file=out
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def usage_error(message: str) -> int:
    sys.stderr.write(f"apc: error: {message}\n")
    return 2
