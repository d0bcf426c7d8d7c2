"""Where each value of a JSON text is, by its path (``prompts[3].content``), and how the
decoded characters of a JSON string map back to the characters of the text: ``\\n``,
``\\"``, ``\\uXXXX`` and a surrogate pair ``\\ud83d\\ude00`` each stand for one character.

Internal: the interface is ``apc lsp``.

The scan is lenient: it reads as far as the text is well-formed and keeps what it found, so
a preset being edited (a missing comma further down) still has its earlier entries mapped.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import re
from dataclasses import dataclass, field

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*")|(?P<punct>[{}\[\]:,])'
    r"|(?P<lit>-?[0-9][0-9.eE+-]*|true|false|null))",
    re.DOTALL,
)
_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u.{4}|\\.")


@dataclass
class JsonMap:
    """Path -> (start, end) offsets of each value of a JSON text (a string's include its
    quotes); ``keys``: path -> the offsets of the key naming that value."""

    text: str
    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)

    def string(self, path: str) -> JsonString | None:
        """The JSON string at ``path`` (None: not there, or not a string)."""
        at = self.values.get(path)
        if at is None or self.text[at[0]] != '"':
            return None
        return JsonString(self.text, at[0], at[1])

    def locate(self, path: str) -> tuple[int, int] | None:
        """The offsets of ``path``'s value, else of the nearest enclosing value found."""
        while path:
            if path in self.values:
                return self.values[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return self.values.get("")


class JsonString:
    """One JSON string of a text: its decoded value and the mapping of offsets."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self.start = start + 1  # the first character after the opening quote
        self.end = end - 1
        raw = text[self.start : self.end]
        # breakpoints: an escape starts at (decoded, raw) and the next run after it
        self._decoded = [0]
        self._raw = [self.start]
        pieces: list[str] = []
        decoded = at = 0
        for m in _ESCAPE.finditer(raw):
            pieces.append(raw[at : m.start()])
            decoded += m.start() - at
            try:
                char = json.loads(f'"{m.group()}"')
            except ValueError:  # not an escape JSON reads: kept as written
                char = m.group()
            pieces.append(char)
            self._decoded += [decoded, decoded + len(char)]
            self._raw += [self.start + m.start(), self.start + m.end()]
            decoded += len(char)
            at = m.end()
        pieces.append(raw[at:])
        self.value = "".join(pieces)

    def to_text(self, offset: int) -> int:
        """The text offset of the value's character at ``offset`` (its end: the closing
        quote)."""
        i = bisect.bisect_right(self._decoded, offset) - 1
        return min(self._raw[i] + (offset - self._decoded[i]), self.end)

    def from_text(self, offset: int) -> int:
        """The value offset of the text's ``offset`` (inside an escape: the escaped
        character's)."""
        i = bisect.bisect_right(self._raw, offset) - 1
        if i < 0:
            return 0
        if i + 1 < len(self._raw):
            raw_run = self._raw[i + 1] - self._raw[i]
            if raw_run != self._decoded[i + 1] - self._decoded[i]:  # inside an escape
                return self._decoded[i]
        return max(0, min(self._decoded[i] + (offset - self._raw[i]), len(self.value)))


def scan(text: str) -> JsonMap:
    """Map every value of the JSON ``text`` it can read (see the module docstring)."""
    found = JsonMap(text)
    tokens = _tokens(text)
    with contextlib.suppress(IndexError, ValueError):  # a broken text: keep what was found
        _value(tokens, 0, "", found)
    return found


Token = tuple[str, str, int, int]  # kind, text, start, end


def _tokens(text: str) -> list[Token]:
    out: list[Token] = []
    at = 0
    while True:
        m = _TOKEN.match(text, at)
        if m is None or m.end() == at:
            return out
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind), m.start(kind), m.end(kind)))
        at = m.end()


def _value(tokens: list[Token], i: int, path: str, found: JsonMap) -> int:
    """Read the value at token ``i``; record it under ``path``; return the next token."""
    kind, text, start, end = tokens[i]
    if kind == "punct" and text in "{[":
        close = "}" if text == "{" else "]"
        i += 1
        index = 0
        while tokens[i][1] != close:
            if text == "{":
                key_token = tokens[i]
                key = json.loads(key_token[1]) if key_token[0] == "str" else ""
                child = f"{path}.{key}" if path else key
                found.keys[child] = (key_token[2], key_token[3])
                if tokens[i + 1][1] != ":":
                    raise ValueError("expected ':'")
                i = _value(tokens, i + 2, child, found)
            else:
                i = _value(tokens, i, f"{path}[{index}]", found)
                index += 1
            if tokens[i][1] == ",":
                i += 1
            elif tokens[i][1] != close:
                raise ValueError(f"expected ',' or {close!r}")
        found.values[path] = (start, tokens[i][3])
        return i + 1
    if kind == "punct":
        raise ValueError(f"unexpected {text!r}")
    found.values[path] = (start, end)
    return i + 1
