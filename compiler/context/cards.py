"""Character cards: JSON V1/V2/V3, PNG (``ccv3``/``chara`` text chunks) and ``.charx``.

- V1 is flat ``{name, description, personality, scenario, first_mes, mes_example}``;
  SillyTavern's ``creatorcomment`` becomes ``creator_notes``; other top-level keys
  (``avatar``, ``chat``, ``create_date``, ...) are kept in ``extra``.
- V2 (``spec: "chara_card_v2"``) and V3 (``"chara_card_v3"``) read ``data``; unknown
  ``data`` keys (V3 ``assets``, ``source``, dates, ...) are kept in ``extra`` and
  ``extensions`` is kept as it is. Any other ``spec`` is an error.
- A PNG is walked chunk by chunk with the standard library (signature checked, CRCs not):
  ``tEXt``, ``zTXt`` and ``iTXt`` chunks named ``ccv3`` or ``chara`` hold base64 JSON;
  ``ccv3`` wins when both are present, as in SillyTavern.
- A ``.charx`` is a zip archive with ``card.json`` at its root (assets are not read).

A JSON ``null`` in a card field means "not set". Errors name the file (for a PNG,
``card.png#ccv3``) and the JSON path (``data.character_book.entries[3].keys``).
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from compiler.context._load import (
    INLINE,
    PathLike,
    decode_text,
    expect_object,
    join_path,
    parse_json,
    read_bytes,
    validate,
)
from compiler.context.world import Lorebook, parse_lorebook
from compiler.errors import ContextError

SPECS: dict[str, Literal[2, 3]] = {"chara_card_v2": 2, "chara_card_v3": 3}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CODE = "context.invalid_card"


class CharacterCard(BaseModel):
    """A character card, the same shape whatever version or container it came from."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    alternate_greetings: list[str] = Field(default_factory=list)
    group_only_greetings: list[str] = Field(default_factory=list)
    character_book: Lorebook | None = None
    tags: list[str] = Field(default_factory=list)
    creator: str = ""
    character_version: str = ""
    nickname: str | None = None
    extensions: dict[str, Any] = Field(default_factory=dict)
    spec: str | None = None
    spec_version: str | None = None
    card_version: Literal[1, 2, 3] = 1
    origin: str = INLINE
    extra: dict[str, Any] = Field(default_factory=dict)


class _CardData(BaseModel):
    """The card fields as the specs name them (V2/V3 ``data``, or a flat V1 card)."""

    model_config = ConfigDict(extra="allow")

    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    alternate_greetings: list[str] = Field(default_factory=list)
    group_only_greetings: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    creator: str = ""
    character_version: str = ""
    nickname: str | None = None
    extensions: dict[str, Any] = Field(default_factory=dict)


def parse_card(data: Any, *, file: str, path: str = "") -> CharacterCard:
    """A card from parsed JSON; ``file``/``path`` say where it came from, for errors."""
    obj = expect_object(data, code=_CODE, file=file, path=path, what="a character card")
    spec = obj.get("spec")
    if spec is None:
        return _build(obj, version=1, file=file, prefix=path, spec=None, spec_version=None)
    if not isinstance(spec, str) or spec not in SPECS:
        raise ContextError(
            code=_CODE,
            message=f"unknown card spec {spec!r}; expected one of {', '.join(SPECS)} "
            "(or no spec for a V1 card)",
            file=file,
            path=join_path(path, "spec"),
        )
    inner_path = join_path(path, "data")
    inner = expect_object(
        obj.get("data"), code=_CODE, file=file, path=inner_path, what=f"'data' of a {spec} card"
    )
    spec_version = obj.get("spec_version")
    return _build(
        inner,
        version=SPECS[spec],
        file=file,
        prefix=inner_path,
        spec=spec,
        spec_version=None if spec_version is None else str(spec_version),
    )


def _build(
    fields: dict[str, Any],
    *,
    version: Literal[1, 2, 3],
    file: str,
    prefix: str,
    spec: str | None,
    spec_version: str | None,
) -> CharacterCard:
    fields = {k: v for k, v in fields.items() if v is not None}
    book_raw = fields.pop("character_book", None)
    if version == 1 and "creator_notes" not in fields and "creatorcomment" in fields:
        fields["creator_notes"] = fields.pop("creatorcomment")
    raw = validate(_CardData, fields, code=_CODE, file=file, prefix=prefix, what="card")
    book = None
    if book_raw is not None:
        book = parse_lorebook(
            book_raw, file=file, path=join_path(prefix, "character_book"), code=_CODE
        )
    return CharacterCard(
        **raw.model_dump(exclude=set(raw.model_extra or {})),
        character_book=book,
        spec=spec,
        spec_version=spec_version,
        card_version=version,
        origin=file,
        extra=dict(raw.model_extra or {}),
    )


# --- containers ---------------------------------------------------------------------------


def _truncated(file: str, at: int) -> ContextError:
    return ContextError(
        code=_CODE, message=f"truncated PNG: the chunk at byte {at} runs past the end", file=file
    )


def png_text_chunks(data: bytes, file: str) -> dict[str, str]:
    """The ``chara``/``ccv3`` text chunks of a PNG (keyword lower-cased -> text)."""
    if not data.startswith(PNG_SIGNATURE):
        raise ContextError(code=_CODE, message="not a PNG file (bad signature)", file=file)
    found: dict[str, str] = {}
    pos = len(PNG_SIGNATURE)
    while True:
        if pos + 8 > len(data):
            raise _truncated(file, pos)
        length, ctype = struct.unpack(">I4s", data[pos : pos + 8])
        end = pos + 12 + length
        if end > len(data):
            raise _truncated(file, pos)
        if ctype == b"IEND":
            return found
        if ctype in (b"tEXt", b"zTXt", b"iTXt"):
            keyword, text = _text_chunk(ctype, data[pos + 8 : pos + 8 + length], file, pos)
            if keyword in ("chara", "ccv3") and keyword not in found:
                found[keyword] = text
        pos = end


def _text_chunk(ctype: bytes, body: bytes, file: str, at: int) -> tuple[str, str]:
    raw_key, _, rest = body.partition(b"\0")
    keyword = raw_key.decode("latin-1").lower()
    try:
        if ctype == b"tEXt":
            return keyword, rest.decode("latin-1")
        if ctype == b"zTXt":
            return keyword, zlib.decompress(rest[1:]).decode("latin-1")
        compressed = rest[:1] == b"\x01"
        rest = rest[2:]
        _lang, _, rest = rest.partition(b"\0")
        _translated, _, text = rest.partition(b"\0")
        return keyword, (zlib.decompress(text) if compressed else text).decode("utf-8")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise ContextError(
            code=_CODE,
            message=f"unreadable {ctype.decode()} chunk '{keyword}' at byte {at}: {exc}",
            file=file,
        ) from None


def _card_from_png(data: bytes, file: str) -> CharacterCard:
    raw, label = png_card_json(data, file)
    return parse_card(raw, file=label)


def png_card_json(data: bytes, file: str) -> tuple[Any, str]:
    """The card JSON a PNG carries (``ccv3`` before ``chara``) and its label ``FILE#chunk``."""
    chunks = png_text_chunks(data, file)
    keyword = "ccv3" if "ccv3" in chunks else "chara" if "chara" in chunks else None
    if keyword is None:
        raise ContextError(
            code=_CODE,
            message="PNG has no character card: no 'ccv3' or 'chara' text chunk",
            file=file,
        )
    label = f"{file}#{keyword}"
    try:
        decoded = base64.b64decode("".join(chunks[keyword].split()), validate=True)
    except (binascii.Error, ValueError):
        raise ContextError(
            code=_CODE, message=f"the '{keyword}' chunk is not base64", file=label
        ) from None
    return parse_json(decode_text(decoded, label), label), label


def _card_from_charx(data: bytes, file: str) -> CharacterCard:
    label = f"{file}#card.json"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            raw = archive.read("card.json")
    except KeyError:
        raise ContextError(
            code=_CODE, message="CHARX archive has no card.json at its root", file=file
        ) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, RuntimeError) as exc:
        raise ContextError(
            code=_CODE, message=f"not a readable CHARX archive: {exc}", file=file
        ) from None
    return parse_card(parse_json(decode_text(raw, label), label), file=label)


def read_card(
    source: PathLike | Mapping[str, Any], *, origin: str | None = None, json_path: str = ""
) -> CharacterCard:
    """Read a card from a file (``.json``, ``.png``, ``.charx``) or from parsed JSON.

    Files are recognised by content (PNG signature, zip header), then by extension.
    ``origin``/``json_path`` say where inline data came from, for error messages.
    """
    if isinstance(source, Mapping):
        return parse_card(dict(source), file=origin or INLINE, path=json_path)
    path = Path(source)
    file = str(path)
    data = read_bytes(path)
    suffix = path.suffix.lower()
    if data.startswith(PNG_SIGNATURE) or suffix == ".png":
        return _card_from_png(data, file)
    if data.startswith(b"PK\x03\x04") or suffix == ".charx":
        return _card_from_charx(data, file)
    return parse_card(parse_json(decode_text(data, file), file), file=file)
