"""Where each value of a JSON text is, by its path (``prompts[3].content``), and how the
decoded characters of a JSON string map back to the characters of the text: ``\\n``,
``\\"``, ``\\uXXXX`` and a surrogate pair ``\\ud83d\\ude00`` each stand for one character.

Internal: the interface is ``apc lsp``.

The scan is lenient: it reads as far as the text is well-formed and keeps what it found, so
a preset being edited (a missing comma further down) still has its earlier entries mapped;
past :data:`MAX_DEPTH` levels of nesting it stops.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 1000
"""How deeply the scan follows nested containers (deeper than JSON readers parse): a path
is as long as its depth, so a text of nothing but ``[`` would otherwise cost the square of
its length (100 KB: 15 GB)."""
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
    """One JSON string of a text: its decoded value, and the mapping of offsets (made on
    first use: most strings of a preset are never mapped)."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self.start = start + 1  # the first character after the opening quote
        self.end = end - 1
        self._text = text
        raw = text[self.start : self.end]
        try:
            self.value: str = json.loads(text[start:end]) if "\\" in raw else raw
        except ValueError:  # an escape JSON cannot read: the mapping keeps it as written
            self.value = self._breakpoints()
        self._decoded: list[int] = []
        self._raw: list[int] = []

    def _breakpoints(self) -> str:
        """Record where each escape starts and ends, in the value and in the text (the
        runs between them map one to one); return the value."""
        raw = self._text[self.start : self.end]
        self._decoded, self._raw = [0], [self.start]
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
        return "".join(pieces)

    def to_text(self, offset: int) -> int:
        """The text offset of the value's character at ``offset`` (its end: the closing
        quote)."""
        if not self._raw:
            self._breakpoints()
        i = bisect.bisect_right(self._decoded, offset) - 1
        return min(self._raw[i] + (offset - self._decoded[i]), self.end)

    def from_text(self, offset: int) -> int:
        """The value offset of the text's ``offset`` (inside an escape: the escaped
        character's)."""
        if not self._raw:
            self._breakpoints()
        i = bisect.bisect_right(self._raw, offset) - 1
        if i < 0:
            return 0
        if i + 1 < len(self._raw):
            raw_run = self._raw[i + 1] - self._raw[i]
            if raw_run != self._decoded[i + 1] - self._decoded[i]:  # inside an escape
                return self._decoded[i]
        return max(0, min(self._decoded[i] + (offset - self._raw[i]), len(self.value)))


def scan(text: str) -> JsonMap:
    """Map every value of the JSON ``text`` it can read (see the module docstring): one
    pass over its tokens, with a stack of the open objects and arrays."""
    found = JsonMap(text)
    stack: list[list[Any]] = []  # [path, start, opener, index] of each open container
    state, path, at = "value", "", 0  # state: what may come next
    while True:
        m = _TOKEN.match(text, at)
        if m is None or m.end() == at:
            return found
        at = m.end()
        kind = m.lastgroup or ""
        start, end = m.span(kind)
        token = text[start]
        if state == "key" and kind == "str":
            raw = text[start + 1 : end - 1]
            key = json.loads(text[start:end]) if "\\" in raw else raw
            parent = stack[-1][0]
            path = f"{parent}.{key}" if parent else key
            found.keys[path] = (start, end)
            state = "colon"
        elif state == "colon" and token == ":":
            state = "value"
        elif state == "value" and token in "{[":
            if len(stack) >= MAX_DEPTH:
                return found
            stack.append([path, start, token, 0])
            state, path = ("key", path) if token == "{" else ("value", f"{path}[0]")
        elif state == "value" and kind in ("str", "lit"):
            found.values[path] = (start, end)
            state = "after"
        elif state == "after" and token == "," and stack:
            top = stack[-1]
            if top[2] == "{":
                state = "key"
            else:
                top[3] += 1
                state, path = "value", f"{top[0]}[{top[3]}]"
        elif token in "}]" and stack and _closes(stack[-1], token, state):
            parent, opened = stack.pop()[:2]
            found.values[parent] = (opened, end)
            state = "after"
        else:
            return found  # not JSON from here on: keep what was found


def _closes(top: list[Any], token: str, state: str) -> bool:
    """Whether ``token`` closes the open container ``top`` here (after a value, or at once:
    ``{}``, ``[]``)."""
    if top[2] == "{":
        return token == "}" and state in ("after", "key")
    empty = state == "value" and top[3] == 0
    return token == "]" and (state == "after" or empty)
