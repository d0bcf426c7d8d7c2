"""Positions in a document: offsets (code points of the Python string) to LSP line and
character, in the position encoding the client and server agreed on (UTF-16 code units by
default, UTF-8 or UTF-32 when negotiated).

Internal: the interface is ``apc lsp``.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r``, as the protocol says (not at the other
separators :meth:`str.splitlines` knows).
"""

from __future__ import annotations

import bisect
import re

_BREAK = re.compile(r"\r\n|\r|\n")


def _units(text: str, encoding: str) -> int:
    """How many code units of ``encoding`` ``text`` takes."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _chars(line: str, units: int, encoding: str) -> int:
    """The code points of ``line`` that ``units`` code units cover (a position inside a
    character moves to its start)."""
    if encoding == "utf-32":
        return min(units, len(line))
    used = 0
    for i, c in enumerate(line):
        size = _units(c, encoding)
        if used + size > units:
            return i
        used += size
    return len(line)


class LineIndex:
    """The line starts of one text, and conversions between offsets and (line, character)."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def _line_end(self, line: int) -> int:
        """The offset where ``line``'s text ends (before its line break)."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1] - 1
            if end > self.starts[line] and self.text[end - 1 : end + 1] == "\r\n":
                end -= 1
            return end
        return len(self.text)

    def position(self, offset: int) -> tuple[int, int]:
        """The (line, character) of ``offset``, both 0-based."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        offset = min(offset, max(self._line_end(line), start))
        return line, _units(self.text[start:offset], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The offset of a (line, character) position; past a line's end: its end."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        text = self.text[start : self._line_end(line)]
        return start + _chars(text, character, self.encoding)
