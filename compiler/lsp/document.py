"""One open document as the server reads it: a template (one region of template text, the
whole file) or a SillyTavern preset (a region per ``prompts[].content`` string, mapped back
into the JSON text), and the macros of a region.

Internal: the interface is ``apc lsp``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import compiler
from compiler.errors import APCError
from compiler.lsp.jsonmap import JsonMap, JsonString, scan
from compiler.lsp.text import LineIndex

PRESET_SUFFIXES = (".json",)
_CONTENT = re.compile(r"prompts\[(\d+)\]\.content")
_PROMPTS_KEY = re.compile(r'"prompts"\s*:')


def uri_path(uri: str) -> Path | None:
    """The file a ``file://`` URI names (None: another scheme)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


@dataclass
class Region:
    """Template text inside a document: the whole template, or one preset string."""

    path: str  # "" for a template; "prompts[3].content" in a preset
    name: str  # what diagnostics call it: the label, or "LABEL#prompts[3].content"
    text: str
    string: JsonString | None = None

    def to_doc(self, offset: int) -> int:
        """The document offset of the region's ``offset``."""
        return offset if self.string is None else self.string.to_text(offset)

    def from_doc(self, offset: int) -> int:
        """The region offset of the document's ``offset``."""
        return offset if self.string is None else self.string.from_text(offset)

    def holds(self, offset: int) -> bool:
        """Whether the document's ``offset`` is inside the region (its end included)."""
        if self.string is None:
            return True
        return self.string.start <= offset <= self.string.end


@dataclass
class MacroAt:
    """A macro of a region, as plain offsets into the region's text."""

    name: str
    start: int  # at "<<"
    end: int  # after ">>"
    args: list[tuple[str | None, str, int, int]] = field(default_factory=list)
    # (key, value as text, start, end) of each argument, from its first character


@dataclass
class Document:
    """A snapshot of an open document (one version of its text)."""

    uri: str
    text: str
    version: int | None = None
    encoding: str = "utf-16"
    kind: str = "template"  # "template", "preset", or "json" (JSON that is no preset)
    label: str = ""
    file: Path | None = None
    index: LineIndex = field(init=False)
    json: JsonMap | None = field(init=False, default=None)
    regions: list[Region] = field(init=False, default_factory=list)
    _by_path: dict[str, Region] = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.file = uri_path(self.uri)
        self.label = str(self.file) if self.file is not None else self.uri
        if self.file is not None and self.file.suffix.lower() in PRESET_SUFFIXES:
            # a preset has a "prompts" list; other JSON (a run context, a card) is left alone
            self.kind = "preset" if _PROMPTS_KEY.search(self.text) else "json"
        self.index = LineIndex(self.text, self.encoding)
        if self.kind == "template":
            self.regions = [Region("", self.label, self.text)]
            return
        self.json = scan(self.text)
        for path in self.json.values:
            if _CONTENT.fullmatch(path):
                region = self.region(path)
                if region is not None:
                    self.regions.append(region)

    def region(self, path: str) -> Region | None:
        """The template text at a JSON ``path`` of a preset (any string), or the template."""
        if self.json is None:
            return self.regions[0] if not path else None
        held = self._by_path.get(path)
        if held is not None:
            return held
        string = self.json.string(path)
        if string is None:
            return None
        self._by_path[path] = Region(path, f"{self.label}#{path}", string.value, string)
        return self._by_path[path]

    def region_at(self, offset: int) -> Region | None:
        """The region the document's ``offset`` is in."""
        for region in self.regions:
            if region.holds(offset):
                return region
        return None

    def position(self, offset: int) -> tuple[int, int]:
        return self.index.position(offset)

    def offset(self, line: int, character: int) -> int:
        return self.index.offset(line, character)


def macros(region: Region) -> list[MacroAt]:
    """The macros of a region's text (none when it does not parse)."""
    try:
        template = compiler.parse(region.text, region.name)
    except APCError:
        return []
    out: list[MacroAt] = []
    for macro in template.macros:
        found = MacroAt(macro.name, macro.span.start, macro.span.end)
        for arg in macro.args:
            value = region.text[arg.value_span.start : arg.value_span.end]
            found.args.append((arg.key, value, arg.span.start, arg.span.end))
        out.append(found)
    return out


def macro_at(region: Region, offset: int) -> MacroAt | None:
    """The macro whose text holds the region's ``offset``."""
    for macro in macros(region):
        if macro.start <= offset <= macro.end:
            return macro
    return None
