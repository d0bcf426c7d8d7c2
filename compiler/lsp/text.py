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
from array import array

_BREAK = re.compile(r"\r\n|\r|\n")
#: the characters that take more than one code unit, by encoding
_WIDE = {"utf-8": re.compile("[^\x00-\x7f]"), "utf-16": re.compile("[\U00010000-\U0010ffff]")}


def _units(text: str, encoding: str) -> int:
    """How many code units of ``encoding`` ``text`` takes."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    # UTF-16: a code point past U+FFFF takes two (encoded in C: a long line of a preset, its
    # JSON on one line, is measured once per position a reply sends)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


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
        #: the offsets of the characters wider than one code unit, and the extra units of
        #: those before each (made on first use): a position costs a search, not a count
        self._wide: array[int] | None = None
        self._extra = array("q", [0])

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
        return line, offset - start + self._extra_before(offset) - self._extra_before(start)

    def _extra_before(self, offset: int) -> int:
        """The code units the characters before ``offset`` take beyond one each."""
        if self.encoding == "utf-32":
            return 0
        wide = _WIDE["utf-8" if self.encoding == "utf-8" else "utf-16"]  # as _units counts
        found = self._wide
        if found is None:  # made whole, then published: threads may read it at once
            found, extra, total = array("q"), array("q", [0]), 0
            for m in wide.finditer(self.text):
                found.append(m.start())
                total += _units(m.group(), self.encoding) - 1
                extra.append(total)
            self._extra, self._wide = extra, found
        return self._extra[bisect.bisect_left(found, offset)]

    def offset(self, line: int, character: int) -> int:
        """The offset of a (line, character) position; past a line's end: its end."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        text = self.text[start : self._line_end(line)]
        return start + _chars(text, character, self.encoding)
