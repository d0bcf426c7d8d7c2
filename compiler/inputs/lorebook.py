"""World info (lorebooks): reading SillyTavern world files and character books.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.

Two input forms are read into one :class:`Lorebook`:

- a SillyTavern world file ``{"entries": {"<uid>": {key, keysecondary, order, position,
  disable, ...}}}``; entries are taken in JavaScript object order (integer-like keys
  ascending, then the others as written), which is the order SillyTavern scans them in;
- a V2/V3 ``character_book`` ``{"entries": [{keys, secondary_keys, insertion_order,
  enabled, position: "before_char"|"after_char", extensions: {...}}]}``, converted as
  SillyTavern's "Import Card Lore" does (:mod:`compiler.inputs.character_book`).

Content that starts with ``@@activate`` / ``@@dont_activate`` lines has them cut into
:attr:`WorldEntry.decorators`, as SillyTavern does before scanning. Which entries a chat
activates is :mod:`compiler.st.world.scan`; where the lorebooks come from is
:mod:`compiler.inputs.lorebooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compiler._base.frame import PromptRole
from compiler.errors import ContextError
from compiler.inputs.character_book import (
    CARD_MAGIC,
    MAX_BOOK_ENTRIES,
    card_not_lorebook,
    convert_character_book,
    js_key_order,
    looks_like_card,
)
from compiler.inputs.read import (
    INLINE,
    PathLike,
    decode_text,
    expect_object,
    join_path,
    parse_json,
    read_bytes,
    type_name,
    validate,
)

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


class CharacterFilter(BaseModel):
    """SillyTavern's ``characterFilter``: the entry is only for (or, with ``isExclude``, not
    for) these character file names and tags."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="allow"
    )

    names: list[str] = []
    tags: list[str] = []
    is_exclude: bool = False


class WorldEntry(BaseModel):
    """One lorebook entry, normalised from either input form (camelCase on the wire)."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    uid: int | str
    keys: list[str] = []
    secondary_keys: list[str] = []
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
    #: 0: no delay; N: the entry waits for recursion level N (``true`` in a file is 1)
    delay_until_recursion: int = Field(default=0, ge=0)
    probability: float = 100
    use_probability: bool = False
    group: str = ""
    group_override: bool = False
    group_weight: float = 100
    use_group_scoring: bool | None = None
    sticky: int | None = None
    cooldown: int | None = None
    delay: int | None = None
    character_filter: CharacterFilter | None = None
    #: the name of the lorebook the entry comes from (SillyTavern's ``world``)
    world: str = ""
    #: ``@@activate`` / ``@@dont_activate`` lines cut from the start of ``content``
    decorators: list[str] = []
    extensions: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)


class Lorebook(BaseModel):
    """A set of world info entries, in scan order, with the book's own settings."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    name: str = ""
    description: str = ""
    scan_depth: int | None = Field(default=None, ge=0)
    token_budget: int | None = Field(default=None, ge=0)
    recursive_scanning: bool | None = None
    entries: list[WorldEntry] = []
    extensions: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)


# --- reading ------------------------------------------------------------------------------

_Pos = int | str


class _FileEntry(BaseModel):
    """An entry of a SillyTavern world file, with its own key names."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    uid: int | str | None = None
    key: list[str] = []
    keysecondary: list[str] = []
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
    delayUntilRecursion: bool | int = False
    probability: float = 100
    useProbability: bool = False
    group: str = ""
    groupOverride: bool = False
    groupWeight: float = 100
    useGroupScoring: bool | None = None
    sticky: int | None = None
    cooldown: int | None = None
    delay: int | None = None
    characterFilter: CharacterFilter | None = None


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


_KNOWN_DECORATORS = ("@@activate", "@@dont_activate")


def parse_decorators(content: str) -> tuple[list[str], str]:
    """The known decorators on the first lines of ``content`` and the content without them,
    as SillyTavern's ``parseDecorators`` (world-info.js) cuts them: ``@@@x`` escapes an
    unknown decorator; content that is all decorator lines is kept as written."""
    if not content.startswith("@@"):
        return [], content
    lines = content.split("\n")
    decorators: list[str] = []
    fallbacked = False
    for i, line in enumerate(lines):
        if not line.startswith("@@"):
            return decorators, "\n".join(lines[i:])
        if line.startswith("@@@") and not fallbacked:
            continue
        name = line[1:] if line.startswith("@@@") else line
        if name.startswith(_KNOWN_DECORATORS):
            decorators.append(name)
            fallbacked = False
        else:
            fallbacked = True
    return decorators, content


def _timer(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None


def _from_file_entry(raw: _FileEntry, key: str) -> WorldEntry:
    decorators, content = parse_decorators(raw.content)
    delay_level = raw.delayUntilRecursion
    return WorldEntry(
        uid=raw.uid if raw.uid is not None else key,
        keys=raw.key,
        secondary_keys=raw.keysecondary,
        comment=raw.comment,
        content=content,
        decorators=decorators,
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
        delay_until_recursion=max(0, int(delay_level)),
        probability=raw.probability,
        use_probability=raw.useProbability,
        group=raw.group,
        group_override=raw.groupOverride,
        group_weight=raw.groupWeight,
        use_group_scoring=raw.useGroupScoring,
        sticky=_timer(raw.sticky),
        cooldown=_timer(raw.cooldown),
        delay=_timer(raw.delay),
        character_filter=raw.characterFilter,
        extra=dict(raw.model_extra or {}),
    )


def _file_entries(
    items: list[tuple[str, str, Any]], *, file: str, code: str, what: str
) -> list[WorldEntry]:
    """``(uid key, JSON path, raw entry)`` triples as entries (errors name the path)."""
    entries: list[WorldEntry] = []
    for key, where, item in items:
        item = expect_object(item, code=code, file=file, path=where, what=what)
        raw = validate(
            _FileEntry, _no_nulls(item), code=code, file=file, prefix=where, what="world entry"
        )
        entries.append(_from_file_entry(raw, key))
    return entries


def _check_count(n: int, *, file: str, path: str, code: str) -> None:
    if n > MAX_BOOK_ENTRIES:
        raise ContextError(
            code=code,
            message=f"a lorebook has {n} entries; at most {MAX_BOOK_ENTRIES} are read",
            file=file,
            path=join_path(path, "entries"),
            hint="split the lorebook, or remove entries it does not need",
        )


def parse_lorebook(
    data: Any, *, file: str, path: str = "", code: str = "context.invalid_world"
) -> Lorebook:
    """A lorebook from parsed JSON; errors carry ``code``, ``file`` and the JSON path.

    A character card (or a card file's JSON) is ``context.lorebook_is_card``."""
    obj = expect_object(data, code=code, file=file, path=path, what="a lorebook")
    if "entries" not in obj:
        if looks_like_card(obj):
            raise card_not_lorebook(file)
        raise ContextError(
            code=code,
            message="a lorebook needs 'entries' (an object keyed by uid, or an array)",
            file=file,
            path=path or None,
        )
    raw_entries = obj["entries"]
    if isinstance(raw_entries, dict):
        _check_count(len(raw_entries), file=file, path=path, code=code)
        items = [
            (k, join_path(path, "entries", k), raw_entries[k])
            for k in js_key_order(list(raw_entries))
        ]
        entries = _file_entries(items, file=file, code=code, what="a world info entry")
        rest = {k: v for k, v in obj.items() if k != "entries"}
        name = rest.pop("name", "")
        return Lorebook(name=name if isinstance(name, str) else "", entries=entries, extra=rest)
    if isinstance(raw_entries, list):
        _check_count(len(raw_entries), file=file, path=path, code=code)
        header, converted = convert_character_book(obj, file=file, path=path, code=code)
        entries = _file_entries(converted, file=file, code=code, what="a lorebook entry")
        return Lorebook(**header, entries=entries)
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

    ``origin`` and ``json_path`` say where inline data came from, for error messages. A
    card (PNG, CHARX or card JSON) is ``context.lorebook_is_card``.
    """
    if isinstance(source, Mapping):
        return parse_lorebook(dict(source), file=origin or INLINE, path=json_path)
    path = Path(source)
    data = read_bytes(path, what="lorebook")
    if data.startswith(CARD_MAGIC):
        raise card_not_lorebook(str(path))
    text = decode_text(data, str(path))
    return parse_lorebook(parse_json(text, str(path)), file=str(path), path=json_path)
