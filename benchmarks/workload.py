"""The shared workload of the side-by-side benchmarks, and an offline tiktoken cache for peers.

A system prompt, a character card and a seeded chat of N messages (8 to 60 words each),
fitted into a token budget and produced as OpenAI Chat messages. Plain data only, so that
a peer in another virtual environment (prompt-poet) builds exactly the same input from it.
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

SYSTEM = (
    "You are the narrator of a slow, careful story. Stay in character, keep the voice of "
    "the earlier replies, and never speak for the user."
)
CARD: dict[str, Any] = {
    "name": "Mira",
    "description": "The lighthouse keeper's daughter, who counts lanterns at night. " * 6,
    "personality": "curious, stubborn, kind to strangers",
    "scenario": "A ferry crossing at night, on a grey river.",
    "first_mes": "The ferry is late again.",
    "mes_example": "",
}
TEXT = (
    "the ferry creaked across the grey river while Mira counted lanterns on the far bank "
    "and Sam said nothing for a long time because the night had its own weight"
)
WORDS = TEXT.split()


def make_chat(n: int, seed: int = 7) -> list[dict[str, str]]:
    """``n`` messages, user first, alternating; the same for every ``seed``."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = rng.choices(WORDS, k=rng.randint(8, 60))
        out.append({"role": "user" if i % 2 == 0 else "assistant", "content": " ".join(words)})
    return out


def card_text() -> str:
    """The card as the peers get it: one block of text after the system prompt."""
    return "\n".join(f"{k}: {v}" for k, v in CARD.items() if v and k != "first_mes")


def floor(chat: list[dict[str, str]], budget: int, encode: Callable[[str], list[int]]) -> int:
    """The floor every tool must reach: count the system text, then only the newest messages
    until the budget is full (OpenAI's cookbook costs); how many messages fit. ``encode`` is
    a tiktoken encoding's ``encode_ordinary`` (each venv brings its own tiktoken)."""
    room = budget - 3 - 4 - len(encode(f"{SYSTEM}\n{card_text()}"))
    kept = 0
    for message in reversed(chat):
        cost = 4 + len(encode(message["content"]))
        if cost > room:
            break
        room -= cost
        kept += 1
    return kept


def offline_tiktoken_cache() -> str:
    """A TIKTOKEN_CACHE_DIR holding the official rank files this package ships, so that
    tiktoken.get_encoding() in a peer never downloads (the machine may be offline)."""
    from compiler._base.ranks import rank_file

    directory = Path(tempfile.gettempdir()) / "apc-bench-tiktoken"
    directory.mkdir(exist_ok=True)
    for name in ("o200k_base", "cl100k_base"):
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        target = directory / hashlib.sha1(url.encode()).hexdigest()
        if not target.exists():
            target.write_bytes(rank_file(f"{name}.tiktoken"))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
    return str(directory)
