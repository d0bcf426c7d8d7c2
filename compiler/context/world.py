"""World info (lorebooks): reading SillyTavern world files and character books.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.

Two input forms are read into one :class:`Lorebook`:

- a SillyTavern world file ``{"entries": {"<uid>": {key, keysecondary, order, position,
  disable, ...}}}``; entries are taken in JavaScript object order (integer-like keys
  ascending, then the others as written), which is the order SillyTavern scans them in;
- a V2/V3 ``character_book`` ``{"entries": [{keys, secondary_keys, insertion_order,
  enabled, position: "before_char"|"after_char", extensions: {...}}]}``, converted as
  SillyTavern's importer does (``extensions.position``/``depth``/``selectiveLogic``/... win
  over the spec fields).

Which entries a chat activates is :func:`compiler.context.world_activation.activate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compiler.context.inputs import (
    INLINE,
    PathLike,
    expect_object,
    join_path,
    load_json_file,
    type_name,
    validate,
)
from compiler.errors import ContextError
from compiler.frame import PromptRole

Position = Literal[
    "before", "after", "an_top", "an_bottom", "at_depth", "em_top", "em_bottom", "outlet", "other"
]

POSITIONS: dict[int, Position] = {
    0: "before",
    1: "after",
    2: "an_top",
    3: "an_bottom",
    4: "at_depth",
    5: "em_top",
    6: "em_bottom",
    7: "outlet",
}
"""SillyTavern's numeric ``position`` values and their names here."""

_ROLES: dict[int, PromptRole] = {0: "system", 1: "user", 2: "assistant"}


class SelectiveLogic(IntEnum):
    """How secondary keys combine with a primary match (SillyTavern's ``world_info_logic``)."""

    AND_ANY = 0
    NOT_ALL = 1
    NOT_ANY = 2
    AND_ALL = 3


class WorldEntry(BaseModel):
    """One lorebook entry, normalised from either input form (camelCase on the wire)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    uid: int | str
    keys: list[str] = Field(default_factory=list)
    secondary_keys: list[str] = Field(default_factory=list)
    comment: str = ""
    content: str = ""
    constant: bool = False
    selective: bool = True
    selective_logic: SelectiveLogic = SelectiveLogic.AND_ANY
    order: int = 100
    position: Position = "before"
    position_raw: int | str | None = None
    disabled: bool = False
    depth: int = 4
    role: PromptRole | None = None
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None
    scan_depth: int | None = Field(default=None, ge=0)
    exclude_recursion: bool = False
    prevent_recursion: bool = False
    delay_until_recursion: bool = False
    probability: float = 100
    use_probability: bool = False
    group: str = ""
    extensions: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)


class Lorebook(BaseModel):
    """A set of world info entries, in scan order, with the book's own settings."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    name: str = ""
    description: str = ""
    scan_depth: int | None = Field(default=None, ge=0)
    token_budget: int | None = Field(default=None, ge=0)
    recursive_scanning: bool | None = None
    entries: list[WorldEntry] = Field(default_factory=list)
    extensions: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)


# --- reading ------------------------------------------------------------------------------

_Pos = int | str


class _FileEntry(BaseModel):
    """An entry of a SillyTavern world file, with its own key names."""

    model_config = ConfigDict(extra="allow")

    uid: int | str | None = None
    key: list[str] = Field(default_factory=list)
    keysecondary: list[str] = Field(default_factory=list)
    comment: str = ""
    content: str = ""
    constant: bool = False
    selective: bool = True
    selectiveLogic: SelectiveLogic = SelectiveLogic.AND_ANY
    order: int = 100
    position: _Pos = 0
    disable: bool = False
    depth: int = 4
    role: int | str | None = None
    caseSensitive: bool | None = None
    matchWholeWords: bool | None = None
    scanDepth: int | None = Field(default=None, ge=0)
    excludeRecursion: bool = False
    preventRecursion: bool = False
    delayUntilRecursion: bool = False
    probability: float = 100
    useProbability: bool = False
    group: str = ""


class _BookEntry(BaseModel):
    """An entry of a V2/V3 ``character_book``."""

    model_config = ConfigDict(extra="allow")

    id: int | str | None = None
    keys: list[str] = Field(default_factory=list)
    secondary_keys: list[str] = Field(default_factory=list)
    comment: str = ""
    name: str = ""
    content: str = ""
    constant: bool = False
    selective: bool = False
    insertion_order: int = 100
    enabled: bool = True
    position: _Pos = "before_char"
    case_sensitive: bool | None = None
    priority: int | None = None
    extensions: dict[str, Any] = Field(default_factory=dict)


class _BookExtensions(BaseModel):
    """The SillyTavern fields it stores under a character book entry's ``extensions``."""

    model_config = ConfigDict(extra="allow")

    position: _Pos | None = None
    depth: int | None = None
    selectiveLogic: SelectiveLogic | None = None
    role: int | str | None = None
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None
    scan_depth: int | None = Field(default=None, ge=0)
    exclude_recursion: bool | None = None
    prevent_recursion: bool | None = None
    delay_until_recursion: bool | None = None
    probability: float | None = None
    useProbability: bool | None = None
    group: str | None = None


class _BookHeader(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = ""
    description: str = ""
    scan_depth: int | None = Field(default=None, ge=0)
    token_budget: int | None = Field(default=None, ge=0)
    recursive_scanning: bool | None = None
    extensions: dict[str, Any] = Field(default_factory=dict)


def _no_nulls(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON ``null`` means "not set": drop it so the field's default applies."""
    return {k: v for k, v in raw.items() if v is not None}


def _position(raw: _Pos) -> Position:
    if isinstance(raw, int):
        return POSITIONS.get(raw, "other")
    named: dict[str, Position] = {"before_char": "before", "after_char": "after"}
    return named.get(raw, "other")


def _role(raw: int | str | None) -> PromptRole | None:
    if raw is None:
        return None
    if isinstance(raw, int):
        return _ROLES.get(raw)
    low = raw.lower()
    return low if low in ("system", "user", "assistant") else None  # type: ignore[return-value]


def _js_key_order(keys: list[str]) -> list[str]:
    """Object keys in the order JavaScript iterates them: array indices first, ascending."""
    index_like = sorted((k for k in keys if k.isdigit() and (k == "0" or k[0] != "0")), key=int)
    seen = set(index_like)
    return index_like + [k for k in keys if k not in seen]


def _from_file_entry(raw: _FileEntry, key: str) -> WorldEntry:
    return WorldEntry(
        uid=raw.uid if raw.uid is not None else key,
        keys=raw.key,
        secondary_keys=raw.keysecondary,
        comment=raw.comment,
        content=raw.content,
        constant=raw.constant,
        selective=raw.selective,
        selective_logic=raw.selectiveLogic,
        order=raw.order,
        position=_position(raw.position),
        position_raw=raw.position,
        disabled=raw.disable,
        depth=raw.depth,
        role=_role(raw.role),
        case_sensitive=raw.caseSensitive,
        match_whole_words=raw.matchWholeWords,
        scan_depth=raw.scanDepth,
        exclude_recursion=raw.excludeRecursion,
        prevent_recursion=raw.preventRecursion,
        delay_until_recursion=raw.delayUntilRecursion,
        probability=raw.probability,
        use_probability=raw.useProbability,
        group=raw.group,
        extra=dict(raw.model_extra or {}),
    )


def _from_book_entry(raw: _BookEntry, ext: _BookExtensions, index: int) -> WorldEntry:
    pos: _Pos = ext.position if ext.position is not None else raw.position
    return WorldEntry(
        uid=raw.id if raw.id is not None else index,
        keys=raw.keys,
        secondary_keys=raw.secondary_keys,
        comment=raw.comment or raw.name,
        content=raw.content,
        constant=raw.constant,
        selective=raw.selective,
        selective_logic=ext.selectiveLogic or SelectiveLogic.AND_ANY,
        order=raw.insertion_order,
        position=_position(pos),
        position_raw=pos,
        disabled=not raw.enabled,
        depth=ext.depth if ext.depth is not None else 4,
        role=_role(ext.role),
        case_sensitive=(
            ext.case_sensitive if ext.case_sensitive is not None else raw.case_sensitive
        ),
        match_whole_words=ext.match_whole_words,
        scan_depth=ext.scan_depth,
        exclude_recursion=bool(ext.exclude_recursion),
        prevent_recursion=bool(ext.prevent_recursion),
        delay_until_recursion=bool(ext.delay_until_recursion),
        probability=ext.probability if ext.probability is not None else 100,
        use_probability=bool(ext.useProbability),
        group=ext.group or "",
        extensions=raw.extensions,
        extra=dict(raw.model_extra or {}),
    )


def parse_lorebook(
    data: Any, *, file: str, path: str = "", code: str = "context.invalid_world"
) -> Lorebook:
    """A lorebook from parsed JSON; errors carry ``code``, ``file`` and the JSON path."""
    obj = expect_object(data, code=code, file=file, path=path, what="a lorebook")
    if "entries" not in obj:
        raise ContextError(
            code=code,
            message="a lorebook needs 'entries' (an object keyed by uid, or an array)",
            file=file,
            path=path or None,
        )
    raw_entries = obj["entries"]
    entries: list[WorldEntry] = []
    if isinstance(raw_entries, dict):
        for key in _js_key_order(list(raw_entries)):
            where = join_path(path, "entries", key)
            item = expect_object(
                raw_entries[key], code=code, file=file, path=where, what="a world info entry"
            )
            raw = validate(
                _FileEntry, _no_nulls(item), code=code, file=file, prefix=where, what="world entry"
            )
            entries.append(_from_file_entry(raw, key))
        rest = {k: v for k, v in obj.items() if k != "entries"}
        name = rest.pop("name", "")
        return Lorebook(name=name if isinstance(name, str) else "", entries=entries, extra=rest)
    if isinstance(raw_entries, list):
        for i, item in enumerate(raw_entries):
            where = join_path(path, "entries", i)
            item = expect_object(item, code=code, file=file, path=where, what="a lorebook entry")
            raw_b = validate(
                _BookEntry, _no_nulls(item), code=code, file=file, prefix=where, what="book entry"
            )
            ext = validate(
                _BookExtensions,
                _no_nulls(raw_b.extensions),
                code=code,
                file=file,
                prefix=join_path(where, "extensions"),
                what="book entry extensions",
            )
            entries.append(_from_book_entry(raw_b, ext, i))
        header_raw = _no_nulls({k: v for k, v in obj.items() if k != "entries"})
        header = validate(
            _BookHeader, header_raw, code=code, file=file, prefix=path, what="character book"
        )
        return Lorebook(
            name=header.name,
            description=header.description,
            scan_depth=header.scan_depth,
            token_budget=header.token_budget,
            recursive_scanning=header.recursive_scanning,
            entries=entries,
            extensions=header.extensions,
            extra=dict(header.model_extra or {}),
        )
    raise ContextError(
        code=code,
        message=f"'entries' must be an object or an array, found {type_name(raw_entries)}",
        file=file,
        path=join_path(path, "entries"),
    )


def read_lorebook(
    source: PathLike | Mapping[str, Any],
    *,
    origin: str | None = None,
    json_path: str = "",
) -> Lorebook:
    """Read a SillyTavern world file or a character book (a path, or parsed JSON).

    ``origin`` and ``json_path`` say where inline data came from, for error messages.
    """
    if isinstance(source, Mapping):
        return parse_lorebook(dict(source), file=origin or INLINE, path=json_path)
    path = Path(source)
    return parse_lorebook(load_json_file(path), file=str(path), path=json_path)
