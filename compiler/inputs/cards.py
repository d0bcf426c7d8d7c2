"""Character cards: JSON V1/V2/V3, PNG (``ccv3``/``chara`` text chunks) and ``.charx``.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.

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

Size limits (a card is untrusted input: a small file must not cost much time or memory).
Over a limit is ``context.card_too_large``, found before the excess is read or inflated:

- a ``.json`` or ``.png`` card file is at most :data:`MAX_CARD_FILE_BYTES` (64 MiB, or a
  session's ``Limits.max_input_bytes`` when less); a ``.charx`` is not read whole (only
  its central directory, at most :data:`MAX_CHARX_DIRECTORY_BYTES` (1 MiB), and
  ``card.json``);
- the card text is at most :data:`MAX_CARD_TEXT_BYTES` (16 MiB, room for a card with a
  large embedded lorebook): a ``ccv3``/``chara`` chunk's text after inflating (so the
  base64-decoded JSON is at most 12 MiB), and ``card.json`` in a ``.charx`` (its declared
  size is checked first, and the read is bounded in case the declaration lies).

Other PNG chunks, including text chunks with other keywords, are skipped without being
inflated or decoded.

A JSON ``null`` in a card field means "not set". Errors name the file (for a PNG,
``card.png#ccv3``) and the JSON path (``data.character_book.entries[3].keys``).
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, Field

from compiler.errors import ContextError
from compiler.inputs.lorebook import Lorebook, parse_lorebook
from compiler.inputs.read import (
    INLINE,
    PathLike,
    decode_text,
    expect_object,
    join_path,
    limit_in_force,
    open_input,
    parse_json,
    size_text,
    validate,
)

SPECS: dict[str, Literal[2, 3]] = {"chara_card_v2": 2, "chara_card_v3": 3}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CODE = "context.invalid_card"
_TOO_LARGE = "context.card_too_large"
_CARD_KEYWORDS = ("chara", "ccv3")

MAX_CARD_FILE_BYTES = 64 * 1024 * 1024
"""The largest ``.json`` or ``.png`` card file read (a ``.charx`` is not read whole)."""
MAX_CARD_TEXT_BYTES = 16 * 1024 * 1024
"""The largest card text: a ``ccv3``/``chara`` chunk's (inflated) text, or ``card.json``."""
MAX_CHARX_DIRECTORY_BYTES = 1024 * 1024
"""The largest central directory of a ``.charx`` zip (about ten thousand entries)."""


class CharacterCard(BaseModel):
    """A character card, the same shape whatever version or container it came from."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    alternate_greetings: list[str] = []
    group_only_greetings: list[str] = []
    character_book: Lorebook | None = None
    tags: list[str] = []
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

    model_config = ConfigDict(defer_build=True, extra="allow")

    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    alternate_greetings: list[str] = []
    group_only_greetings: list[str] = []
    tags: list[str] = []
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


def _too_large(what: str, limit: int, name: str, file: str) -> ContextError:
    """``context.card_too_large``: ``what`` ("is larger than", ...) ``limit`` (the ``name``)."""
    return ContextError(
        code=_TOO_LARGE, message=f"{what} {size_text(limit)} (the {name} limit)", file=file
    )


def png_text_chunks(data: bytes, file: str) -> dict[str, str]:
    """The ``chara``/``ccv3`` text chunks of a PNG (keyword lower-cased -> text).

    Only the first chunk of each of those keywords is decoded; every other chunk is skipped
    unread. A chunk text over :data:`MAX_CARD_TEXT_BYTES` is ``context.card_too_large``.
    """
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
            start, body_end = pos + 8, end - 4
            # the keyword: 1-79 bytes, up to the first NUL (or the chunk's end)
            nul = data.find(b"\0", start, min(start + 80, body_end))
            key_end = nul if nul >= 0 else body_end
            keyword = data[start:key_end].decode("latin-1").lower() if key_end - start < 80 else ""
            if keyword in _CARD_KEYWORDS and keyword not in found:
                rest = data[key_end + 1 : body_end]
                found[keyword] = _text_chunk(ctype, keyword, rest, file, pos)
        pos = end


def _inflate(data: bytes, what: str, file: str) -> bytes:
    """``data`` inflated, at most :data:`MAX_CARD_TEXT_BYTES` of it (zlib.error if broken)."""
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, MAX_CARD_TEXT_BYTES + 1)
    if len(out) > MAX_CARD_TEXT_BYTES:
        raise _too_large(f"{what} inflates to more than", MAX_CARD_TEXT_BYTES, "card text", file)
    if not inflater.eof:  # all input consumed below the limit, and the stream did not end
        raise zlib.error("incomplete or truncated stream")
    return out


def _text_chunk(ctype: bytes, keyword: str, rest: bytes, file: str, at: int) -> str:
    """The text of a ``tEXt``/``zTXt``/``iTXt`` chunk; ``rest`` follows the keyword's NUL."""
    what = f"the {ctype.decode()} chunk '{keyword}' at byte {at}"
    try:
        if ctype == b"tEXt":
            text = rest
        elif ctype == b"zTXt":
            text = _inflate(rest[1:], what, file)
        else:
            compressed = rest[:1] == b"\x01"
            rest = rest[2:]
            _lang, _, rest = rest.partition(b"\0")
            _translated, _, text = rest.partition(b"\0")
            if compressed:
                text = _inflate(text, what, file)
        if len(text) > MAX_CARD_TEXT_BYTES:
            raise _too_large(f"{what} is larger than", MAX_CARD_TEXT_BYTES, "card text", file)
        return text.decode("utf-8" if ctype == b"iTXt" else "latin-1")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise ContextError(
            code=_CODE,
            message=f"unreadable {ctype.decode()} chunk '{keyword}' at byte {at}: {exc}",
            file=file,
        ) from None


_WHITESPACE = re.compile(r"\s+")  # what str.split() splits on, without a list of pieces


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
        # the text is at most MAX_CARD_TEXT_BYTES, so the JSON is at most 3/4 of that
        decoded = base64.b64decode(_WHITESPACE.sub("", chunks[keyword]), validate=True)
    except (binascii.Error, ValueError):
        raise ContextError(
            code=_CODE, message=f"the '{keyword}' chunk is not base64", file=label
        ) from None
    return parse_json(decode_text(decoded, label), label), label


def _charx_directory_size(fh: IO[bytes]) -> int:
    """The central directory size a zip declares, as :mod:`zipfile` will read it (0 if the
    end record is missing: zipfile then rejects the archive itself)."""
    size = fh.seek(0, 2)
    # the end record (22 bytes, then a comment of <= 64 KiB), after a zip64 record and locator
    fh.seek(max(0, size - 76 - 22 - 0xFFFF))
    tail = fh.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return 0
    directory = int.from_bytes(tail[at + 12 : at + 16], "little")
    # zipfile takes the zip64 end record (56 bytes before a 20-byte locator) when present
    if at >= 76 and tail[at - 20 : at - 16] == b"PK\x06\x07":
        record = tail[at - 76 : at - 20]
        if record[:4] == b"PK\x06\x06":
            directory = int.from_bytes(record[40:48], "little")
    return directory


def _charx_card_json(fh: IO[bytes], file: str) -> tuple[Any, str]:
    """The ``card.json`` a CHARX carries, parsed, and its label ``FILE#card.json``."""
    label = f"{file}#card.json"
    if _charx_directory_size(fh) > MAX_CHARX_DIRECTORY_BYTES:
        raise _too_large(
            "the CHARX zip directory is larger than",
            MAX_CHARX_DIRECTORY_BYTES,
            "zip directory",
            file,
        )
    try:
        with zipfile.ZipFile(fh) as archive:
            info = archive.getinfo("card.json")
            if info.file_size > MAX_CARD_TEXT_BYTES:
                raise _too_large(
                    f"card.json ({info.file_size} bytes) is larger than",
                    MAX_CARD_TEXT_BYTES,
                    "card text",
                    label,
                )
            with archive.open(info) as member:  # bounded, should the declared size lie
                raw = member.read(MAX_CARD_TEXT_BYTES + 1)
            if len(raw) > MAX_CARD_TEXT_BYTES:
                raise _too_large(
                    "card.json is larger than", MAX_CARD_TEXT_BYTES, "card text", label
                )
    except KeyError:
        raise ContextError(
            code=_CODE, message="CHARX archive has no card.json at its root", file=file
        ) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, RuntimeError) as exc:
        raise ContextError(
            code=_CODE, message=f"not a readable CHARX archive: {exc}", file=file
        ) from None
    return parse_json(decode_text(raw, label), label), label


def _card_file(path: Path) -> BinaryIO:
    """``path`` open for reading, if it is a regular file (a pipe never blocks the read)."""
    return open_input(path)


def _read_bounded(fh: IO[bytes], head: bytes, file: str) -> bytes:
    """The card file's bytes, at most :data:`MAX_CARD_FILE_BYTES` or the input limit in
    force (a session's ``Limits.max_input_bytes``), whichever is less."""
    limit = min(MAX_CARD_FILE_BYTES, limit_in_force())
    rest = fh.read(limit + 1 - len(head))
    if len(head) + len(rest) > limit:
        raise _too_large("the card file is larger than", limit, "card file", file)
    return head + rest


def read_card_bytes(path: PathLike) -> bytes:
    """The bytes of a ``.json``/``.png`` card file, at most :data:`MAX_CARD_FILE_BYTES`
    (``context.card_too_large`` beyond; a missing file is ``context.file_not_found``)."""
    with _card_file(Path(path)) as fh:
        return _read_bounded(fh, b"", str(path))


def read_card(
    source: PathLike | Mapping[str, Any], *, origin: str | None = None, json_path: str = ""
) -> CharacterCard:
    """Read a card from a file (``.json``, ``.png``, ``.charx``) or from parsed JSON.

    Files are recognised by content (PNG signature, zip header), then by extension.
    ``origin``/``json_path`` say where inline data came from, for error messages.
    """
    if isinstance(source, Mapping):
        return parse_card(dict(source), file=origin or INLINE, path=json_path)
    raw, label = read_card_json(source)
    return parse_card(raw, file=label)


def read_card_json(path: PathLike) -> tuple[Any, str]:
    """The card JSON a file carries (``.json``, ``.png``, ``.charx``), parsed but not
    validated, and its label for errors (``FILE``, ``FILE#ccv3``, ``FILE#card.json``).

    Files are recognised by content (PNG signature, zip header), then by extension; the
    size limits of the module docstring apply (``context.card_too_large``).
    """
    path = Path(path)
    file = str(path)
    suffix = path.suffix.lower()
    with _card_file(path) as fh:
        head = fh.read(len(PNG_SIGNATURE))
        png = head.startswith(PNG_SIGNATURE) or suffix == ".png"
        if not png and (head.startswith(b"PK\x03\x04") or suffix == ".charx"):
            return _charx_card_json(fh, file)  # read in place: only card.json is inflated
        data = _read_bounded(fh, head, file)
    if png:
        return png_card_json(data, file)
    return parse_json(decode_text(data, file), file), file
