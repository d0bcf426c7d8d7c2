"""Helpers for the profile tests: the seed's two JSON examples and a small PNG card builder."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
SEED_DOC = Path(__file__).resolve().parents[3] / "shared" / "seed" / "ProfilesAndPreset.md"


def seed_section2() -> dict[str, Any]:
    """Seed section 2's preset agent schema example, verbatim."""
    return json.loads((FIXTURES / "seed_section2_preset.json").read_text(encoding="utf-8"))


def seed_section12() -> dict[str, Any]:
    """Seed section 12's default-writer profile, verbatim."""
    return json.loads((FIXTURES / "seed_section12_default_writer.json").read_text(encoding="utf-8"))


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def make_png(text_chunks: dict[str, Any], *, compressed: set[str] | None = None) -> bytes:
    """A valid 1x1 PNG with ``key -> JSON`` text chunks (base64 JSON, as cards carry them).

    A ``bytes`` value is written as the chunk text unchanged.
    """
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00\x00")
    chunks = [_chunk(b"IHDR", ihdr)]
    for key, value in text_chunks.items():
        raw = value if isinstance(value, bytes) else json.dumps(value).encode("utf-8")
        payload = value if isinstance(value, bytes) else base64.b64encode(raw)
        if compressed and key in compressed:
            chunks.append(_chunk(b"zTXt", key.encode() + b"\0\0" + zlib.compress(payload)))
        else:
            chunks.append(_chunk(b"tEXt", key.encode() + b"\0" + payload))
    chunks += [_chunk(b"IDAT", idat), _chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)
