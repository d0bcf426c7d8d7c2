"""A V2/V3 ``character_book`` converted to SillyTavern's world-file entry shape, and cards
told apart from lorebooks.

Internal: :func:`compiler.inputs.lorebook.parse_lorebook` reads both lorebook forms.

The conversion is SillyTavern's ``convertCharacterBook`` (world-info.js), what "Import Card
Lore" (``importEmbeddedWorldInfo``) saves: the ``extensions`` SillyTavern wrote win over the
spec fields, ``position`` is ``extensions.position``, else 0 for ``before_char`` and 1 for
anything else, ``useProbability`` defaults to true and ``role`` to system, ``comment`` is
the entry's ``comment`` only, and the saved object is keyed by ``id`` (the array index when
there is none), so entries are scanned in JavaScript key order (ids ascending) and a
repeated id keeps the last entry at the first one's place.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from compiler.errors import ContextError
from compiler.inputs.read import expect_object, join_path, validate

MAX_BOOK_ENTRIES = 10_000
"""The most entries one lorebook may have (``context.invalid_world`` above it)."""

CARD_MAGIC = (b"\x89PNG\r\n\x1a\n", b"PK\x03\x04")
"""The first bytes of a PNG card and of a CHARX (zip) card."""

_CARD_SPECS = frozenset({"chara_card_v2", "chara_card_v3"})

_Pos = int | str


class _BookEntry(BaseModel):
    """An entry of a V2/V3 ``character_book``."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    id: int | str | None = None
    keys: list[str] = []
    secondary_keys: list[str] = []
    comment: str = ""
    content: str = ""
    constant: bool = False
    selective: bool = False
    insertion_order: int = 100
    enabled: bool = True
    position: _Pos | None = None
    extensions: dict[str, Any] = Field(default_factory=dict)


class _BookExtensions(BaseModel):
    """The SillyTavern fields it stores under a character book entry's ``extensions``."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    position: _Pos | None = None
    depth: int | None = None
    selectiveLogic: int | None = None
    role: int | str | None = None
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None
    scan_depth: int | None = Field(default=None, ge=0)
    exclude_recursion: bool | None = None
    prevent_recursion: bool | None = None
    delay_until_recursion: bool | int | None = None
    probability: float | None = None
    useProbability: bool | None = None
    group: str | None = None
    group_override: bool | None = None
    group_weight: float | None = None
    use_group_scoring: bool | None = None
    sticky: int | None = None
    cooldown: int | None = None
    delay: int | None = None


class _BookHeader(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow")

    name: str = ""
    description: str = ""
    scan_depth: int | None = Field(default=None, ge=0)
    token_budget: int | None = Field(default=None, ge=0)
    recursive_scanning: bool | None = None
    extensions: dict[str, Any] = Field(default_factory=dict)


def js_key_order(keys: list[str]) -> list[str]:
    """Object keys in the order JavaScript iterates them: array indices first, ascending."""
    index_like = sorted((k for k in keys if k.isdigit() and (k == "0" or k[0] != "0")), key=int)
    seen = set(index_like)
    return index_like + [k for k in keys if k not in seen]


def looks_like_card(obj: dict[str, Any]) -> bool:
    """Whether a JSON object is a character card (V1, V2 or V3) rather than a lorebook."""
    if obj.get("spec") in _CARD_SPECS:
        return True
    data = obj.get("data")
    inner = data if isinstance(data, dict) else obj
    return "first_mes" in inner or ("name" in inner and "description" in inner)


def card_not_lorebook(file: str) -> ContextError:
    """The error for a card given where a lorebook is expected."""
    return ContextError(
        code="context.lorebook_is_card",
        message="this is a character card, not a lorebook",
        file=file,
        hint="pass the card as 'character' (its embedded character_book is the "
        "character's lorebook), or export its lorebook as a world file",
    )


def _entry(raw: _BookEntry, ext: _BookExtensions, index: int) -> dict[str, Any]:
    """One entry in SillyTavern's world-file shape (``convertCharacterBook``)."""
    position = ext.position
    if position is None:
        position = 0 if raw.position == "before_char" else 1
    return {
        **(raw.model_extra or {}),
        "uid": raw.id if raw.id is not None else index,
        "key": raw.keys,
        "keysecondary": raw.secondary_keys,
        "comment": raw.comment,
        "content": raw.content,
        "constant": raw.constant,
        "selective": raw.selective,
        "order": raw.insertion_order,
        "position": position,
        "excludeRecursion": bool(ext.exclude_recursion),
        "preventRecursion": bool(ext.prevent_recursion),
        "delayUntilRecursion": ext.delay_until_recursion or False,
        "disable": not raw.enabled,
        "probability": 100 if ext.probability is None else ext.probability,
        "useProbability": True if ext.useProbability is None else ext.useProbability,
        "depth": 4 if ext.depth is None else ext.depth,
        "selectiveLogic": ext.selectiveLogic or 0,
        "group": ext.group or "",
        "groupOverride": bool(ext.group_override),
        "groupWeight": 100 if ext.group_weight is None else ext.group_weight,
        "scanDepth": ext.scan_depth,
        "caseSensitive": ext.case_sensitive,
        "matchWholeWords": ext.match_whole_words,
        "useGroupScoring": ext.use_group_scoring,
        "role": 0 if ext.role is None else ext.role,
        "sticky": ext.sticky,
        "cooldown": ext.cooldown,
        "delay": ext.delay,
        "extensions": raw.extensions,
    }


def convert_character_book(
    obj: dict[str, Any], *, file: str, path: str, code: str
) -> tuple[dict[str, Any], list[tuple[str, str, dict[str, Any]]]]:
    """A character book's header fields (for :class:`Lorebook`) and its entries as
    ``(uid key, JSON path, world-file entry)`` in the order SillyTavern scans them."""
    converted: dict[str, tuple[str, dict[str, Any]]] = {}
    for i, item in enumerate(obj["entries"]):
        where = join_path(path, "entries", i)
        item = expect_object(item, code=code, file=file, path=where, what="a lorebook entry")
        item = {k: v for k, v in item.items() if v is not None}
        raw = validate(_BookEntry, item, code=code, file=file, prefix=where, what="book entry")
        ext = validate(
            _BookExtensions,
            {k: v for k, v in raw.extensions.items() if v is not None},
            code=code,
            file=file,
            prefix=join_path(where, "extensions"),
            what="book entry extensions",
        )
        entry = _entry(raw, ext, i)
        key = str(entry["uid"])
        converted[key] = (where, entry)  # a repeated id: the last wins, at the first's place
    items = [(k, *converted[k]) for k in js_key_order(list(converted))]
    header_raw = {k: v for k, v in obj.items() if k != "entries" and v is not None}
    header = validate(
        _BookHeader, header_raw, code=code, file=file, prefix=path, what="character book"
    )
    fields = header.model_dump(exclude=set(header.model_extra or {}))
    return {**fields, "extra": dict(header.model_extra or {})}, items
