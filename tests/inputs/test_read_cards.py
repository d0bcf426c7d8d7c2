"""Character cards: the corpus PNGs, JSON V1/V2/V3, CHARX, and broken inputs."""

from __future__ import annotations

import base64
import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from compiler.errors import ContextError
from compiler.inputs.cards import PNG_SIGNATURE, read_card

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(
    not (CORPUS / "cards").is_dir(), reason="../shared/corpus is absent (real cards not available)"
)


def chunk(ctype: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", zlib.crc32(ctype + body))


def png(*chunks: bytes) -> bytes:
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    return PNG_SIGNATURE + ihdr + b"".join(chunks) + chunk(b"IEND", b"")


def b64json(obj: Any) -> bytes:
    return base64.b64encode(json.dumps(obj).encode())


def text_chunk(keyword: str, obj: Any) -> bytes:
    return chunk(b"tEXt", keyword.encode() + b"\0" + b64json(obj))


V2 = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Mira",
        "description": "A cartographer.",
        "personality": "curious",
        "scenario": "A harbour town.",
        "first_mes": "Hello!",
        "mes_example": "<START>",
        "creator_notes": "notes",
        "system_prompt": "Be Mira. {{original}}",
        "post_history_instructions": "Stay in character.",
        "alternate_greetings": ["Hi.", "Ahoy."],
        "tags": ["maps"],
        "creator": "me",
        "character_version": "1.2",
        "extensions": {"talkativeness": "0.5", "someTool": {"nested": [1, 2]}},
        "assets_note": "unknown data key",
    },
}


# --- the corpus -------------------------------------------------------------------------


@needs_corpus
def test_aqua_png_is_a_v1_card() -> None:
    card = read_card(CORPUS / "cards" / "Aqua-v1.png")
    assert card.name == "Aqua"
    assert card.card_version == 1 and card.spec is None
    assert card.origin.endswith("Aqua-v1.png#chara")
    assert card.personality.startswith("high-spirited")
    assert card.first_mes and card.description and card.scenario
    assert "avatar" in card.extra and "create_date" in card.extra


@needs_corpus
def test_coding_sensei_png_is_a_v2_card_with_extensions_kept() -> None:
    card = read_card(CORPUS / "cards" / "CodingSensei-v2.png")
    assert (card.name, card.card_version, card.spec, card.spec_version) == (
        "Coding Sensei",
        2,
        "chara_card_v2",
        "2.0",
    )
    assert card.tags == ["coding", "utility", "assistant"]
    assert card.creator == "RossAscends"
    assert card.extensions["depth_prompt"] == {"prompt": "", "depth": 4, "role": "system"}
    assert card.character_book is None


@needs_corpus
def test_seraphina_ccv3_chunk_wins_over_chara() -> None:
    card = read_card(CORPUS / "cards" / "Seraphina-v2v3.png")
    assert card.name == "Seraphina"
    assert card.card_version == 3 and card.spec == "chara_card_v3" and card.spec_version == "3.0"
    assert card.origin.endswith("#ccv3")
    book = card.character_book
    assert book is not None and book.name == "Eldoria"
    assert [e.keys[0] for e in book.entries] == ["eldoria", "shadowfang", "glade", "power"]
    assert all(e.position == "before" and e.role == "system" for e in book.entries)


@needs_corpus
def test_seraphina_without_ccv3_falls_back_to_the_v2_chara_chunk(tmp_path: Path) -> None:
    data = (CORPUS / "cards" / "Seraphina-v2v3.png").read_bytes()
    out, pos = bytearray(data[:8]), 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        end = pos + 12 + length
        if data[pos + 8 : pos + 13] != b"ccv3\0":
            out += data[pos:end]
        pos = end
    path = tmp_path / "seraphina-v2.png"
    path.write_bytes(bytes(out))
    card = read_card(path)
    assert card.card_version == 2 and card.origin.endswith("#chara")
    assert card.name == "Seraphina"


@needs_corpus
def test_truncated_png_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.png"
    path.write_bytes((CORPUS / "cards" / "Seraphina-v2v3.png").read_bytes()[:5000])
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.invalid_card"
    assert "truncated" in info.value.message
    assert info.value.file == str(path)


# --- JSON forms ---------------------------------------------------------------------------


def test_v1_json_file(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    path.write_text(
        json.dumps({"name": "Old", "description": "d", "creatorcomment": "c", "chat": "x"}),
        encoding="utf-8",
    )
    card = read_card(path)
    assert (card.name, card.description, card.creator_notes) == ("Old", "d", "c")
    assert card.card_version == 1 and card.extra == {"chat": "x"}


def test_v2_dict_keeps_fields_extensions_and_unknown_keys() -> None:
    card = read_card(V2)
    assert card.card_version == 2
    assert card.system_prompt == "Be Mira. {{original}}"
    assert card.post_history_instructions == "Stay in character."
    assert card.alternate_greetings == ["Hi.", "Ahoy."]
    assert card.extensions == {"talkativeness": "0.5", "someTool": {"nested": [1, 2]}}
    assert card.extra == {"assets_note": "unknown data key"}


def test_v3_nickname_and_nulls_mean_unset() -> None:
    data = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {"name": "Mira", "nickname": "Mi", "description": None, "tags": None},
    }
    card = read_card(data)
    assert card.card_version == 3 and card.nickname == "Mi"
    assert card.description == "" and card.tags == []


def test_unknown_spec_is_rejected() -> None:
    with pytest.raises(ContextError) as info:
        read_card({"spec": "chara_card_v9", "data": {"name": "x"}}, origin="RUN.json")
    assert info.value.code == "context.invalid_card"
    assert info.value.path == "spec" and info.value.file == "RUN.json"


def test_v2_without_data_object() -> None:
    with pytest.raises(ContextError) as info:
        read_card({"spec": "chara_card_v2", "data": []})
    assert (info.value.code, info.value.path) == ("context.invalid_card", "data")


def test_missing_name_points_at_it() -> None:
    with pytest.raises(ContextError) as info:
        read_card({"spec": "chara_card_v2", "data": {"description": "d"}}, json_path="character")
    assert info.value.path == "character.data.name"


def test_bad_book_entry_points_into_the_book() -> None:
    data = json.loads(json.dumps(V2))
    data["data"]["character_book"] = {
        "entries": [{"keys": ["a"], "content": "x"}, {"keys": "not a list", "content": "y"}]
    }
    with pytest.raises(ContextError) as info:
        read_card(data, origin="card.json")
    assert info.value.code == "context.invalid_card"
    assert info.value.path == "data.character_book.entries[1].keys"
    assert info.value.file == "card.json"


def test_wrong_field_type() -> None:
    with pytest.raises(ContextError) as info:
        read_card({"name": "x", "description": 3})
    assert (info.value.code, info.value.path) == ("context.invalid_card", "description")


def test_broken_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "name": "x",\n  "description": oops\n}\n', encoding="utf-8")
    with pytest.raises(ContextError) as info:
        read_card(path)
    err = info.value
    assert err.code == "context.invalid_json" and err.file == str(path)
    assert "line 3, column 18" in err.message
    assert err.span is not None and (err.span.line, err.span.column) == (3, 18)


def test_missing_file() -> None:
    with pytest.raises(ContextError) as info:
        read_card("/nonexistent/card.png")
    assert info.value.code == "context.file_not_found"


# --- PNG and CHARX containers ---------------------------------------------------------------


def test_png_without_card_chunks(tmp_path: Path) -> None:
    path = tmp_path / "plain.png"
    path.write_bytes(png(chunk(b"tEXt", b"Comment\0hello")))
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.invalid_card"
    assert "no 'ccv3' or 'chara'" in info.value.message


def test_not_a_png(tmp_path: Path) -> None:
    path = tmp_path / "fake.png"
    path.write_bytes(b"GIF89a....")
    with pytest.raises(ContextError, match="not a PNG"):
        read_card(path)


def test_chunk_that_is_not_base64(tmp_path: Path) -> None:
    path = tmp_path / "bad.png"
    path.write_bytes(png(chunk(b"tEXt", b"chara\0{not base64!}")))
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.file == f"{path}#chara"


def test_chunk_with_broken_json_names_the_chunk(tmp_path: Path) -> None:
    path = tmp_path / "bad.png"
    path.write_bytes(png(chunk(b"tEXt", b"ccv3\0" + base64.b64encode(b'{"spec": '))))
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.invalid_json" and info.value.file == f"{path}#ccv3"


def test_compressed_itxt_and_ztxt_chunks(tmp_path: Path) -> None:
    v3 = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Zed"}}
    itxt = b"CCV3\0\x01\x00en\0\0" + zlib.compress(b64json(v3))
    ztxt = b"chara\0\x00" + zlib.compress(b64json({"name": "Old"}))
    path = tmp_path / "z.png"
    path.write_bytes(png(chunk(b"zTXt", ztxt), chunk(b"iTXt", itxt)))
    card = read_card(path)
    assert (card.name, card.card_version) == ("Zed", 3)


def test_charx_archive(tmp_path: Path) -> None:
    path = tmp_path / "mira.charx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("card.json", json.dumps(V2))
        archive.writestr("assets/icon.png", b"...")
    card = read_card(path)
    assert card.name == "Mira" and card.origin == f"{path}#card.json"


def test_charx_without_card_json(tmp_path: Path) -> None:
    path = tmp_path / "empty.charx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hi")
    with pytest.raises(ContextError, match=r"no card\.json"):
        read_card(path)
