"""Offsets -> 1-based line and code-point column, for spans and diagnostics.

Internal: the API is :mod:`compiler.syntax`.
"""

from __future__ import annotations

import bisect

from compiler.errors import Span


class LineIndex:
    """Maps offsets of one source text to lines and columns."""

    def __init__(self, source: str, name: str) -> None:
        self.source = source
        self.name = name
        self._starts = [0]
        find = source.find
        i = find("\n")
        while i >= 0:
            self._starts.append(i + 1)
            i = find("\n", i + 1)

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.line_col(start)
        end_line, end_col = self.line_col(end)
        return Span(start, end, line, col, end_line, end_col, self.name)

    def line_text(self, offset: int) -> str:
        line, _ = self.line_col(offset)
        begin = self._starts[line - 1]
        stop = self.source.find("\n", begin)
        return self.source[begin : len(self.source) if stop < 0 else stop]
