"""Rendering diagnostics for people (``file:line:col: error[code]: ...`` + caret) and tools."""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Iterable
from typing import TextIO

from compiler.errors import Diagnostic


def _width(text: str) -> int:
    """Display width in terminal cells (wide CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def format_diagnostic(d: Diagnostic) -> str:
    """The text form: header line, source line, caret underline, hint."""
    if d.span is not None:
        where = f"{d.span.file}:{d.span.line}:{d.span.column}: "
    elif d.file:
        where = f"{d.file}: "
    else:
        where = ""
    at = f" (at {d.path})" if d.path and d.span is None else ""
    lines = [f"{where}{d.severity}[{d.code}]: {d.message}{at}"]
    if d.span is not None and d.source_line is not None:
        num = str(d.span.line)
        pad = " " * len(num)
        src = d.source_line.replace("\t", "    ")
        col = d.span.column - 1
        before = d.source_line[:col].replace("\t", "    ")
        if d.span.end_line == d.span.line:
            marked = d.source_line[col : max(col + 1, d.span.end_column - 1)]
        else:
            marked = d.source_line[col:] or " "
        lines.append(f"{num} | {src}")
        lines.append(f"{pad} | {' ' * _width(before)}{'^' * max(1, _width(marked))}")
        if d.hint:
            lines.append(f"{pad} = hint: {d.hint}")
    elif d.hint:
        lines.append(f"  = hint: {d.hint}")
    return "\n".join(lines)


def print_diagnostics(
    diagnostics: Iterable[Diagnostic], fmt: str = "text", stream: TextIO | None = None
) -> None:
    """Write diagnostics to ``stream`` (stderr by default) as text or a JSON list."""
    out = stream if stream is not None else sys.stderr
    diags = list(diagnostics)
    if fmt == "json":
        out.write(json.dumps([d.to_json() for d in diags], ensure_ascii=False, indent=2) + "\n")
        return
    for d in diags:
        out.write(format_diagnostic(d) + "\n")
