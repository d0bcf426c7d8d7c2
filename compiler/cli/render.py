"""Rendering diagnostics for people (``file:line:col: error[code]: ...`` + caret) and tools.

Internal: used by the command line.

Output stays proportional to the input: at most :data:`MAX_PER_FILE` diagnostics are shown
per input file, then one ``FILE: note: and N more errors`` line (in JSON, one ``note``
entry with an ``omitted`` count), and the source excerpt under a header is at most
:data:`EXCERPT_WIDTH` terminal columns wide, cut with ``...`` around the span.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any, TextIO

from compiler.errors import CODES, Diagnostic, omitted_json

#: Diagnostics shown per input file (a preset's entries count as one file).
MAX_PER_FILE = 50
#: Width of a source excerpt in terminal columns, ``...`` markers included.
EXCERPT_WIDTH = 160
#: Columns of the line kept before the span when a long line is cut.
LEFT_CONTEXT = 40
_MORE = "..."


def colour_enabled(stream: TextIO) -> bool:
    """Whether to colour what goes to ``stream``: only a terminal, and never with ``NO_COLOR``
    set (https://no-color.org) or ``TERM=dumb``."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def _cell(ch: str) -> int:
    """Terminal cells of one character: a tab is shown as 4 spaces, wide CJK takes 2."""
    if ch == "\t":
        return 4
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def _width(text: str) -> int:
    """Display width in terminal cells."""
    return sum(_cell(ch) for ch in text)


def _window(line: str, col: int, cut_left: bool) -> tuple[int, int]:
    """The part ``line[a:b]`` to show: all of it when it fits, else a window holding ``col``
    with up to LEFT_CONTEXT columns before it (more when the line ends soon after)."""
    if _width(line) <= EXCERPT_WIDTH - (len(_MORE) if cut_left else 0):
        return 0, len(line)
    room = EXCERPT_WIDTH - 2 * len(_MORE)
    a = b = col
    used = 0
    while a > 0 and used + _cell(line[a - 1]) <= LEFT_CONTEXT:
        a -= 1
        used += _cell(line[a])
    while b < len(line) and used + _cell(line[b]) <= room:
        used += _cell(line[b])
        b += 1
    if b == len(line):  # no "..." on the right: its room goes to the left
        room += len(_MORE)
    while a > 0 and used + _cell(line[a - 1]) <= room:
        a -= 1
        used += _cell(line[a])
    return a, b


def _line_excerpt(source: str, start: int, column: int) -> tuple[str, int]:
    """The line holding offset ``start`` (at 1-based ``column``), cut to what a window can
    show, plus one character on the right to tell whether it goes on; and how many of the
    line's characters were cut on the left. Bounded work, however long the line."""
    begin = start - (column - 1)
    lo = max(begin, start - EXCERPT_WIDTH)
    hi = min(len(source), start + EXCERPT_WIDTH + 1)
    stop = source.find("\n", start, hi)
    return source[lo : hi if stop < 0 else stop], lo - begin


def _excerpt(d: Diagnostic) -> tuple[str, str] | None:
    """The source line (or a bounded window of it) and its caret underline."""
    if d.span is None:
        return None
    if d.source_line is not None:
        line, base = d.source_line, 0
    elif d.source is not None:
        line, base = _line_excerpt(d.source, d.span.start, d.span.column)
    else:
        return None
    col = min(max(d.span.column - 1 - base, 0), len(line))
    end = d.span.end_column - 1 - base if d.span.end_line == d.span.line else len(line)
    a, b = _window(line, col, base > 0)
    left = _MORE if base + a > 0 else ""
    right = _MORE if b < len(line) else ""
    shown = left + line[a:b].replace("\t", "    ") + right
    pad = len(left) + _width(line[a:col])
    carets = max(1, _width(line[col : min(max(end, col + 1), b)]))
    return shown, " " * pad + "^" * carets


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
    excerpt = _excerpt(d)
    if d.span is not None and excerpt is not None:
        num = str(d.span.line)
        pad = " " * len(num)
        shown, caret = excerpt
        lines.append(f"{num} | {shown}")
        lines.append(f"{pad} | {caret}")
        if d.hint:
            lines.append(f"{pad} = hint: {d.hint}")
    elif d.hint:
        lines.append(f"  = hint: {d.hint}")
    return "\n".join(lines)


def _file_of(d: Diagnostic) -> str:
    """The input file a diagnostic belongs to (``preset.json#prompts[3].content``: the preset)."""
    name = d.span.file if d.span is not None else d.file
    return (name or "").partition("#")[0]


class Omitted:
    """The diagnostics of one file left out after the first ``limit``."""

    def __init__(self, file: str, counts: Counter[str]) -> None:
        self.file = file
        self.count = sum(counts.values())
        if counts["warning"] == 0:
            noun = "error" if self.count == 1 else "errors"
        elif counts["error"] == 0:
            noun = "warning" if self.count == 1 else "warnings"
        else:
            noun = "errors and warnings"
        self.message = f"and {self.count} more {noun}"

    def text(self) -> str:
        return f"{self.file}: note: {self.message}" if self.file else f"note: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """An entry shaped like a diagnostic's, severity ``note``, with the ``omitted`` count."""
        return omitted_json(self.message, self.count, self.file or None)


def cap_per_file(
    diagnostics: Iterable[Diagnostic], limit: int | None = MAX_PER_FILE
) -> list[Diagnostic | Omitted]:
    """The first ``limit`` diagnostics of each file, in order; in place of the rest of a file,
    one :class:`Omitted` (where its first left-out diagnostic was). ``None``: no limit."""
    diags = list(diagnostics)
    if limit is None:
        return list(diags)
    left_out: dict[str, Counter[str]] = {}
    seen: Counter[str] = Counter()
    for d in diags:
        key = _file_of(d)
        seen[key] += 1
        if seen[key] > limit:
            left_out.setdefault(key, Counter())[d.severity] += 1
    out: list[Diagnostic | Omitted] = []
    seen.clear()
    for d in diags:
        key = _file_of(d)
        seen[key] += 1
        if seen[key] <= limit:
            out.append(d)
        elif seen[key] == limit + 1:
            out.append(Omitted(key, left_out[key]))
    return out


def print_diagnostics(
    diagnostics: Iterable[Diagnostic],
    fmt: str = "text",
    stream: TextIO | None = None,
    *,
    limit: int | None = MAX_PER_FILE,
    explain: bool = True,
) -> None:
    """Write diagnostics to ``stream`` (stderr by default) as text or a JSON list, at most
    ``limit`` per file (see :func:`cap_per_file`); the text ends with :func:`explain_note`
    unless ``explain`` is false."""
    out = stream if stream is not None else sys.stderr
    items = cap_per_file(diagnostics, limit)
    if fmt == "json":
        out.write(json.dumps([d.to_json() for d in items], ensure_ascii=False, indent=2) + "\n")
        return
    for d in items:
        out.write((d.text() if isinstance(d, Omitted) else format_diagnostic(d)) + "\n")
    note = explain_note(items) if explain else None
    if note:
        out.write(note + "\n")


def explain_note(items: Iterable[Diagnostic | Omitted]) -> str | None:
    """The one line after a text report that says where a code is explained (as rustc's
    ``--explain``), naming the report's code when it has one; None when no code is known."""
    codes = list(dict.fromkeys(d.code for d in items if isinstance(d, Diagnostic)))
    known = [code for code in codes if code in CODES]
    if not known:
        return None
    if len(codes) == 1:
        return f"note: for more on this code, run `apc explain-code {known[0]}`"
    return f"note: for more on a code, run `apc explain-code CODE` (e.g. `{known[0]}`)"
