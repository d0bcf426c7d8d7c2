"""Card decompression bombs: a small card file never costs much time or memory.

Non-card PNG chunks are never inflated; a card chunk, a ``.charx`` ``card.json`` or a card
file over its limit is ``context.card_too_large``, found before the excess is read.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.errors import ContextError
from compiler.inputs import cards
from compiler.inputs.cards import (
    MAX_CARD_FILE_BYTES,
    MAX_CARD_TEXT_BYTES,
    MAX_CHARX_DIRECTORY_BYTES,
    PNG_SIGNATURE,
    read_card,
)

MiB = 1 << 20
CARD = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Mira"}}

#: A bound on work that the unfixed code never finishes in (minutes to forever); not a
#: speed measurement (benchmarks/ measure speed), just proof the work is bounded.
HANG = 60.0  # a hang guard for bombs and catastrophic input, not a speed limit


def chunk(ctype: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", zlib.crc32(ctype + body))


def png(*chunks: bytes) -> bytes:
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    return PNG_SIGNATURE + ihdr + b"".join(chunks) + chunk(b"IEND", b"")


def card_text(obj: Any = CARD) -> bytes:
    return base64.b64encode(json.dumps(obj).encode())


def zlib_bomb(mib: int) -> bytes:
    """A valid zlib stream of ``mib`` MiB of zeros, about 1 KiB per MiB, built in
    milliseconds: after a full flush a deflate block does not depend on what came before,
    so one compressed MiB is repeated."""
    compressor = zlib.compressobj(9)
    block = compressor.compress(bytes(MiB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    header, body = block[:2], block[2:]
    adler = 1
    for _ in range(mib):
        adler = zlib.adler32(bytes(MiB), adler)
    # a final empty fixed-Huffman block, then the checksum of the whole output
    return header + body * mib + b"\x03\x00" + struct.pack(">I", adler)


def test_zlib_bomb_helper_is_what_it_says() -> None:
    out = zlib.decompress(zlib_bomb(3))
    assert out == bytes(3 * MiB)


@pytest.fixture
def no_inflate(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts inflates by the card reader (each records how much it may produce)."""
    calls: list[int] = []
    real = zlib.decompressobj

    class Spy:
        def __init__(self) -> None:
            self._d = real()

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            calls.append(max_length)
            return self._d.decompress(data, max_length)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._d, name)

    def one_shot(data: bytes, *args: Any) -> bytes:
        calls.append(-1)  # an unbounded inflate
        return real_decompress(data, *args)

    real_decompress = zlib.decompress
    monkeypatch.setattr(cards.zlib, "decompressobj", Spy)
    monkeypatch.setattr(cards.zlib, "decompress", one_shot)
    return calls


def timed(fn: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    try:
        result: Any = fn(*args)
    except ContextError as exc:
        result = exc
    return result, time.perf_counter() - start


# --- PNG --------------------------------------------------------------------------------


def test_huge_non_card_ztxt_chunk_is_never_inflated(tmp_path: Path, no_inflate: list[int]) -> None:
    bomb = zlib_bomb(200)  # 200 MiB of zeros in ~200 KB
    assert len(bomb) < 300_000
    path = tmp_path / "card.png"
    path.write_bytes(
        png(
            chunk(b"zTXt", b"Comment\0\0" + bomb),
            chunk(b"iTXt", b"Description\0\x01\0en\0\0" + bomb),
            chunk(b"tEXt", b"chara\0" + card_text()),
        )
    )
    card, seconds = timed(read_card, path)
    assert card.name == "Mira"
    assert no_inflate == []
    assert seconds < HANG


def test_second_card_chunk_of_a_keyword_is_not_inflated(
    tmp_path: Path, no_inflate: list[int]
) -> None:
    path = tmp_path / "card.png"
    path.write_bytes(
        png(chunk(b"tEXt", b"chara\0" + card_text()), chunk(b"zTXt", b"chara\0\0" + zlib_bomb(50)))
    )
    assert read_card(path).name == "Mira"
    assert no_inflate == []


@pytest.mark.parametrize("ctype", ["zTXt", "iTXt"])
@pytest.mark.parametrize("keyword", ["chara", "ccv3"])
def test_card_chunk_inflating_over_the_limit_is_card_too_large(
    tmp_path: Path, no_inflate: list[int], ctype: str, keyword: str
) -> None:
    bomb = zlib_bomb(200)
    body = b"\0\0" + bomb if ctype == "zTXt" else b"\0\x01\0en\0\0" + bomb
    path = tmp_path / "bomb.png"
    path.write_bytes(png(chunk(ctype.encode(), keyword.encode() + body)))
    err, seconds = timed(read_card, path)
    assert isinstance(err, ContextError)
    assert err.code == "context.card_too_large"
    assert err.file == str(path)
    assert f"{ctype} chunk '{keyword}'" in err.message and "16 MiB" in err.message
    assert no_inflate == [MAX_CARD_TEXT_BYTES + 1]  # one inflate, bounded
    assert seconds < HANG


def test_card_chunk_just_under_the_limit_inflates(tmp_path: Path) -> None:
    # the bound is on output: a valid card whose chunk text is padded with whitespace to
    # exactly the limit is still read
    text = card_text()
    padded = text + b"\n" * (MAX_CARD_TEXT_BYTES - len(text))
    path = tmp_path / "big.png"
    path.write_bytes(png(chunk(b"zTXt", b"chara\0\0" + zlib.compress(padded, 1))))
    assert read_card(path).name == "Mira"
    path.write_bytes(png(chunk(b"zTXt", b"chara\0\0" + zlib.compress(padded + b"\n", 1))))
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.card_too_large"


def test_truncated_card_chunk_stream_is_still_invalid(tmp_path: Path) -> None:
    path = tmp_path / "cut.png"
    path.write_bytes(png(chunk(b"zTXt", b"chara\0\0" + zlib.compress(card_text())[:-6])))
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.invalid_card"
    assert "unreadable zTXt chunk 'chara'" in info.value.message


def test_uncompressed_card_chunk_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.png"
    path.write_bytes(png(chunk(b"tEXt", b"chara\0" + b"A" * (MAX_CARD_TEXT_BYTES + 4))))
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.card_too_large"


def test_card_file_over_the_limit_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.png"
    with path.open("wb") as fh:  # sparse: no disk spent on the zeros
        fh.write(png(chunk(b"tEXt", b"chara\0" + card_text())))
        fh.truncate(1 << 30)  # 1 GiB (think /dev/zero): only the limit + 1 byte is read
    assert MAX_CARD_FILE_BYTES < 1 << 30
    err, seconds = timed(read_card, path)
    assert isinstance(err, ContextError)
    assert (err.code, err.file) == ("context.card_too_large", str(path))
    assert "card file" in err.message and "64 MiB" in err.message
    assert seconds < HANG


@pytest.mark.parametrize("name", ["huge.json", "huge.png", "huge"])
def test_every_card_file_read_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setattr(cards, "MAX_CARD_FILE_BYTES", 1000)
    path = tmp_path / name
    path.write_bytes(json.dumps({**CARD, "pad": "x" * 1000}).encode())
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.card_too_large"
    with pytest.raises(ContextError) as info:
        cards.read_card_bytes(path)
    assert info.value.code == "context.card_too_large"
    path.write_bytes(json.dumps(CARD).encode())
    assert cards.read_card_bytes(path) == json.dumps(CARD).encode()


def test_missing_or_directory_card_file_keeps_its_codes(tmp_path: Path) -> None:
    with pytest.raises(ContextError) as info:
        read_card(tmp_path / "nope.png")
    assert info.value.code == "context.file_not_found"
    with pytest.raises(ContextError) as info:
        read_card(tmp_path)
    assert info.value.code == "context.file_unreadable"


# --- CHARX ------------------------------------------------------------------------------


def charx(path: Path, card_json: bytes, *, declared_size: int | None = None) -> None:
    """A .charx with ``card.json`` deflated; ``declared_size`` overwrites its uncompressed
    size in both the local header and the central directory (a lying header)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("card.json", card_json)
        archive.writestr("assets/icon.png", b"...")
    data = bytearray(buffer.getvalue())
    if declared_size is not None:
        struct.pack_into("<I", data, data.index(b"PK\x03\x04") + 22, declared_size)
        struct.pack_into("<I", data, data.index(b"PK\x01\x02") + 24, declared_size)
    path.write_bytes(bytes(data))


def charx_bomb(path: Path, mib: int, *, declared_size: int | None = None) -> None:
    """A .charx whose card.json inflates to ``mib`` MiB of zeros, from ~1 KiB per MiB of
    deflate data (the zlib bomb without its zlib header and checksum), never built whole."""
    deflate = zlib_bomb(mib)[2:-4]
    size = mib * MiB if declared_size is None else declared_size
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(bytes(MiB), crc)
    name = b"card.json"
    common = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0, crc, len(deflate), size)
    local = b"PK\x03\x04" + common + struct.pack("<HH", len(name), 0) + name
    central = (
        b"PK\x01\x02"
        + struct.pack("<H", 20)
        + common
        + struct.pack("<HHHHHII", len(name), 0, 0, 0, 0, 0, 0)
        + name
    )
    directory_at = len(local) + len(deflate)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), directory_at, 0)
    path.write_bytes(local + deflate + central + end)


def test_charx_bomb_helper_is_what_it_says(tmp_path: Path) -> None:
    charx_bomb(tmp_path / "b.charx", 3)
    with zipfile.ZipFile(tmp_path / "b.charx") as archive:
        assert archive.read("card.json") == bytes(3 * MiB)


def test_charx_card_json_over_the_limit_by_its_honest_header(tmp_path: Path) -> None:
    path = tmp_path / "bomb.charx"
    charx_bomb(path, 200)
    err, seconds = timed(read_card, path)
    assert isinstance(err, ContextError)
    assert err.code == "context.card_too_large"
    assert err.file == f"{path}#card.json"
    assert seconds < HANG


def test_charx_header_lying_small_stops_at_the_declared_size(tmp_path: Path) -> None:
    # zipfile inflates no more than the declared size, then the CRC check fails
    path = tmp_path / "liar.charx"
    charx_bomb(path, 200, declared_size=1000)
    err, seconds = timed(read_card, path)
    assert isinstance(err, ContextError)
    assert err.code == "context.invalid_card"
    assert "CRC" in err.message
    assert seconds < HANG


def test_charx_header_lying_large_is_card_too_large(tmp_path: Path) -> None:
    path = tmp_path / "liar.charx"
    charx(path, json.dumps(CARD).encode(), declared_size=MAX_CARD_TEXT_BYTES + 1)
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.card_too_large"


def test_charx_card_json_read_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # defence in depth beside the header check: card.json is never read with no size
    path = tmp_path / "mira.charx"
    charx(path, json.dumps(CARD).encode())
    calls: list[int | None] = []
    real_read = zipfile.ZipExtFile.read

    def read(self: zipfile.ZipExtFile, n: int | None = -1) -> bytes:
        calls.append(n)
        return real_read(self, n)

    monkeypatch.setattr(zipfile.ZipExtFile, "read", read)
    assert read_card(path).name == "Mira"
    assert calls == [MAX_CARD_TEXT_BYTES + 1]


def test_charx_with_a_huge_zip_directory(tmp_path: Path) -> None:
    # a central directory of many tiny entries costs ~8x its size in ZipInfo objects
    entries = bytearray()
    count = MAX_CHARX_DIRECTORY_BYTES // 50 + 1
    for i in range(count):
        name = b"%08x" % i
        entries += struct.pack(
            zipfile.structCentralDir,
            *(b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0),
        )
        entries += name
    end = struct.pack(
        zipfile.structEndArchive, b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, len(entries), 4, 0
    )
    path = tmp_path / "wide.charx"
    path.write_bytes(b"PK\x03\x04" + bytes(entries) + end)
    err, seconds = timed(read_card, path)
    assert isinstance(err, ContextError)
    assert (err.code, err.file) == ("context.card_too_large", str(path))
    assert seconds < HANG


def test_charx_with_unknown_compression_is_invalid_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "odd.charx"
    charx(path, json.dumps(CARD).encode())
    data = bytearray(path.read_bytes())
    for sig, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        struct.pack_into("<H", data, data.index(sig) + offset, 99)
    path.write_bytes(bytes(data))
    with pytest.raises(ContextError) as info:
        read_card(path)
    assert info.value.code == "context.invalid_card"


def test_charx_is_read_in_place_not_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a .charx may carry large assets: the file limit does not apply, assets are not read
    monkeypatch.setattr(cards, "MAX_CARD_FILE_BYTES", 1000)
    path = tmp_path / "assets.charx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("card.json", json.dumps(CARD))
        archive.writestr("assets/big.bin", bytes(100_000))
    assert read_card(path).name == "Mira"


# --- the CLI ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bomb.png", "bomb.charx"])
def test_cli_reports_card_too_large_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    card = tmp_path / name
    if name.endswith(".png"):
        card.write_bytes(png(chunk(b"zTXt", b"chara\0\0" + zlib_bomb(200))))
    else:
        charx_bomb(card, 200)
    (tmp_path / "run.json").write_text(
        json.dumps({"character": name, "chat": [{"role": "user", "content": "hi"}]})
    )
    (tmp_path / "t.txt").write_text("<<agent.character>>")
    out = tmp_path / "out.json"
    args = ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    start = time.perf_counter()
    assert main([*args, "-o", str(out)]) == 1
    assert time.perf_counter() - start < HANG
    err = capsys.readouterr().err
    assert "error[context.card_too_large]" in err
    assert str(card) in err
    assert "Traceback" not in err
    assert not out.exists()


def test_cli_reads_a_valid_charx_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the profile layer reads the card with the same bounded reader (it read a .charx as JSON)
    card = {**CARD, "data": {"name": "Mira", "description": "A cartographer."}}
    charx(tmp_path / "mira.charx", json.dumps(card).encode())
    (tmp_path / "run.json").write_text(json.dumps({"character": "mira.charx"}))
    (tmp_path / "t.txt").write_text("<<agent.character>>")
    args = ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    assert main(args) == 0
    assert "A cartographer." in capsys.readouterr().out
