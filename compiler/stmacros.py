"""SillyTavern ``{{macro}}`` substitution: pure string functions, importing nothing else of
the compiler, so that readers, the assemble stage and the preset importer can all use them.

Implemented, as SillyTavern's classic ``substituteParams`` does, in this order:

1. ``{{// comment}}`` is removed (up to the first ``}}``, across lines);
2. ``{{newline}}`` becomes ``\\n``; ``{{noop}}`` becomes nothing;
3. ``{{trim}}`` is removed together with the newlines (``\\r?\\n``, not other whitespace)
   directly before and after it;
4. ``{{name}}`` for each name in ``values`` (case-insensitive) becomes its value, in one pass:
   a substituted value is never scanned again, so data cannot smuggle macros in. As in
   SillyTavern, only the first ``{{original}}`` expands; later ones become empty.

Any other ``{{...}}`` (``{{agent.plan}}``, ``{{random}}``, a name missing from ``values``)
is left byte for byte. SillyTavern macro names cannot contain dots, so ``values`` keys must
be plain names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol

__all__ = [
    "STANDARD_MACROS",
    "CardNames",
    "card_values",
    "comment_spans",
    "inert",
    "substitute",
]

STANDARD_MACROS: tuple[str, ...] = (
    "char",
    "user",
    "persona",
    "description",
    "personality",
    "scenario",
    "original",
)
"""The macros the compiler fills from the run context."""

_NEWLINE = re.compile(r"\{\{newline\}\}", re.IGNORECASE)
_NOOP = re.compile(r"\{\{noop\}\}", re.IGNORECASE)
_TRIM = re.compile(r"\{\{trim\}\}", re.IGNORECASE)
_NAME = re.compile(r"\{\{([A-Za-z0-9_-]+)\}\}")
_VALID_NAME = re.compile(r"[A-Za-z0-9_-]+")


def comment_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` ranges of the ``{{// comments}}`` in ``text`` (removed first)."""
    if "{{//" not in text:
        return []
    spans: list[tuple[int, int]] = []
    at = text.find("{{//")
    while at >= 0:
        end = text.find("}}", at + 4)
        if end < 0:  # no later comment can close either: linear, not quadratic
            break
        spans.append((at, end + 2))
        at = text.find("{{//", end + 2)
    return spans


def _cut(text: str, spans: list[tuple[int, int]], filler: str = "") -> str:
    """``text`` with each span replaced by ``filler``."""
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], filler]
        last = end
    out.append(text[last:])
    return "".join(out)


def _trimmed(text: str) -> str:
    """``{{trim}}`` removed with the newlines (``\\r?\\n``) right before and after it, in one
    pass over the text (a regex with ``(?:\\r?\\n)*`` around it is quadratic)."""
    parts = _TRIM.split(text)
    for i in range(len(parts)):
        if i > 0:  # after a {{trim}}
            part = parts[i]
            while part.startswith(("\n", "\r\n")):
                part = part[1:] if part[0] == "\n" else part[2:]
            parts[i] = part
        if i < len(parts) - 1:  # before a {{trim}}
            part = parts[i]
            while part.endswith("\n"):
                part = part[:-2] if part.endswith("\r\n") else part[:-1]
            parts[i] = part
    return "".join(parts)


def inert(text: str) -> str:
    """``text`` with every structural macro (comments, ``{{noop}}``, ``{{trim}}``,
    ``{{newline}}``) replaced by U+FFFE instead of applied: what the text holds of its own,
    with nothing joined across a removed macro."""
    if "{{" not in text:
        return text
    text = _cut(text, comment_spans(text), "\ufffe")
    for pattern in (_NEWLINE, _NOOP, _TRIM):
        text = pattern.sub("\ufffe", text)
    return text


def substitute(text: str, values: Mapping[str, str]) -> str:
    """``text`` with SillyTavern macros replaced (see the module docstring)."""
    if "{{" not in text:
        return text
    table: dict[str, str] = {}
    for name, value in values.items():
        if not _VALID_NAME.fullmatch(name):
            raise ValueError(f"not a SillyTavern macro name: {name!r}")
        table[name.lower()] = value
    text = _cut(text, comment_spans(text))
    text = _NEWLINE.sub("\n", text)
    text = _NOOP.sub("", text)
    text = _trimmed(text)
    original_used = False

    def replace(match: re.Match[str]) -> str:
        nonlocal original_used
        key = match.group(1).lower()
        if key not in table:
            return match.group(0)
        if key == "original":
            if original_used:
                return ""
            original_used = True
        return table[key]

    return _NAME.sub(replace, text)


class CardNames(Protocol):
    """The character card fields the standard macros read (a ``CharacterCard`` has them)."""

    @property
    def name(self) -> str: ...
    @property
    def nickname(self) -> str | None: ...
    @property
    def description(self) -> str: ...
    @property
    def personality(self) -> str: ...
    @property
    def scenario(self) -> str: ...


def card_values(card: CardNames | None, *, user: str = "User", persona: str = "") -> dict[str, str]:
    """The standard macro values for a character and persona (without ``original``).

    ``{{char}}`` is the card's V3 ``nickname`` when set, else its name.
    """
    values = {"user": user, "persona": persona}
    if card is None:
        values.update(char="", description="", personality="", scenario="")
        return values
    values.update(
        char=card.nickname or card.name,
        description=card.description,
        personality=card.personality,
        scenario=card.scenario,
    )
    return values
