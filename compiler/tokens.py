"""Token counting: offline tiktoken encodings, model -> encoding, and a counting cache.

Internal: counting happens inside the fit stage.

tiktoken downloads its rank files on first use. This module never lets it: the official
rank files come from the ``bpe-openai`` package's data (gzipped), are checked against the
sha256 that tiktoken itself expects for them, and are handed to tiktoken's own encoding
constructors (which supply the split pattern and special tokens). Nothing touches the
network. Encodings load lazily, once per process (o200k_base takes about half a second).
"""

from __future__ import annotations

import base64
import functools
import gzip
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tiktoken
import tiktoken.model
from tiktoken.load import check_hash

from compiler.errors import TokenizerError, did_you_mean

#: Encodings this package can load offline.
ENCODINGS = ("o200k_base", "cl100k_base", "o200k_harmony")

_lock = threading.Lock()


def encoding_name_for_model(model: str) -> str:
    """The tiktoken encoding a model uses (tiktoken's own table). Unknown: a clear error."""
    try:
        name = tiktoken.model.encoding_name_for_model(model.split("/")[-1])
    except KeyError:
        raise TokenizerError(
            code="tokenizer.unknown_model",
            message=f"no known tokenizer for model '{model}'",
            hint="pass --encoding o200k_base (or cl100k_base) to count with that encoding",
        ) from None
    if name not in ENCODINGS:
        raise TokenizerError(
            code="tokenizer.unknown_model",
            message=f"model '{model}' uses {name}, which is not available offline",
            hint=f"pass --encoding with one of {', '.join(ENCODINGS)}",
        )
    return name


def _rank_file(name: str) -> bytes:
    """The uncompressed official rank file ``name`` (e.g. ``o200k_base.tiktoken``).

    The file is located through the import system without importing ``bpe_openai`` (whose
    import loads a large native library we do not use).
    """
    spec = importlib.util.find_spec("bpe_openai")
    origin = spec.origin if spec is not None else None
    path = Path(origin).parent / "data" / f"{name}.gz" if origin else None
    if path is None or not path.is_file():
        raise TokenizerError(
            code="tokenizer.rank_file_missing",
            message=f"the offline rank file {name} is not installed",
            hint="reinstall agent-prompt-compiler (it depends on bpe-openai for the rank files)",
        )
    return gzip.decompress(path.read_bytes())


def _offline_load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """Stands in for tiktoken's ``load_tiktoken_bpe``: same result, from the local copy."""
    name = url.rsplit("/", 1)[-1]
    contents = _rank_file(name)
    if expected_hash is None or not check_hash(contents, expected_hash):
        raise TokenizerError(
            code="tokenizer.rank_file_hash",
            message=f"the offline rank file {name} does not match tiktoken's expected hash",
        )
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in contents.splitlines() if line)
    }


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """Load a tiktoken encoding offline (cached for the process)."""
    if name not in ENCODINGS:
        raise TokenizerError(
            code="tokenizer.unknown_encoding",
            message=f"unknown encoding '{name}'",
            hint=did_you_mean(name, ENCODINGS) or f"known: {', '.join(ENCODINGS)}",
        )
    import tiktoken_ext.openai_public as public

    constructor: Callable[[], dict[str, Any]] = public.ENCODING_CONSTRUCTORS[name]
    with _lock:  # tiktoken's constructors call the module-level loader; point it home
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = _offline_load
        try:
            kwargs = constructor()
        finally:
            public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**kwargs)


class TokenCounter:
    """Counts tokens of text for one encoding, caching by content across compiles."""

    def __init__(self, encoding: str, max_entries: int = 200_000) -> None:
        self.encoding_name = encoding
        self._encoding: tiktoken.Encoding | None = None
        self._cache: dict[str, int] = {}
        self._max = max_entries
        if encoding not in ENCODINGS:
            get_encoding(encoding)  # raises the friendly error now, not mid-fit

    @property
    def encoding(self) -> tiktoken.Encoding:
        if self._encoding is None:
            self._encoding = get_encoding(self.encoding_name)
        return self._encoding

    def count(self, text: str) -> int:
        """Tokens of ``text`` as ordinary text (special-token strings count as text)."""
        if not text:
            return 0
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        n = len(self.encoding.encode_ordinary(text))
        if len(self._cache) >= self._max:
            self._cache.clear()
        self._cache[text] = n
        return n

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode_ordinary(text)


@functools.cache
def counter_for(encoding: str) -> TokenCounter:
    """The process-wide counter of an encoding (its cache outlives one compile)."""
    return TokenCounter(encoding)
