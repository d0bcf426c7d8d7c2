"""What is compiled or checked: a template or a SillyTavern preset, and the one dispatch that
reads a source file as one or the other (``.json``: a preset).

Internal: :func:`compiler.compile`, :func:`compiler.check`, :class:`compiler.Session` and the
front-ends read a source file through :func:`read_source`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from compiler._records import record
from compiler.inputs.read import decode_text, read_bytes
from compiler.syntax.parser import MAX_TEMPLATE_CHARS

MAX_TEMPLATE_FILE_BYTES = 4 * MAX_TEMPLATE_CHARS
"""The largest template file read (UTF-8 takes at most 4 bytes a character)."""

SourceKind = Literal["template", "preset"]

UNREADABLE = "template.unreadable"


@record(frozen=True)
class SourceText:
    """A source as text: its kind, its text and what diagnostics call it."""

    kind: SourceKind
    text: str
    name: str


def kind_of(path: str | os.PathLike[str]) -> SourceKind:
    """A ``.json`` file is a SillyTavern preset; anything else is a template."""
    return "preset" if Path(path).suffix.lower() == ".json" else "template"


def read_source(path: str | os.PathLike[str], name: str | None = None) -> SourceText:
    """The source file at ``path``, read once (only a regular file, within its kind's size
    limit) and decoded (a UTF-8 BOM dropped, CRLF kept); ``name`` is what diagnostics call
    it (default: the path)."""
    file = Path(path)
    label = name if name is not None else str(file)
    if kind_of(file) == "preset":
        data = read_bytes(file, what="preset")
        return SourceText("preset", decode_text(data, label), label)
    data = read_bytes(file, limit=MAX_TEMPLATE_FILE_BYTES, what="template")
    return SourceText("template", decode_text(data, label, code=UNREADABLE), label)
