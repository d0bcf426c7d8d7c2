"""The official rank files, parsed, and a validated on-disk cache of the parse.

Internal: :mod:`compiler._base.tokens` loads its encodings through :func:`load_ranks`.

A rank file (``bpe-openai``'s data, gzipped) is read, checked against the sha256 tiktoken
expects of it (:func:`tiktoken.load.check_hash`) and parsed as
:func:`tiktoken.load.load_tiktoken_bpe` parses it; that takes a tenth of a second of every
process that counts. The parse is therefore kept in a cache file, one per rank file, in
the user's cache directory (``$XDG_CACHE_HOME/agent-prompt-compiler``, else
``~/.cache/agent-prompt-compiler``; the environment variable ``APC_CACHE_DIR`` names another
directory, and set to the empty string turns the cache off). A cache file is used only when
it names the expected hash of its rank file and its content matches the sha256 digest it
carries; anything else (missing, truncated, corrupt, of another format or rank file) is
ignored and rebuilt from the rank file, written atomically (:mod:`compiler._base.atomic`).
So the cache is never the source of a count the rank file would not give: at worst it is
rebuilt. A cache directory that cannot be written leaves counting as it is, uncached.

A cache file holds two parts, each with its own digest, read and checked alone: the ranks
of the ASCII tokens (all that ASCII text can contain, counted from that smaller table alone:
:mod:`compiler._base.ascii_bpe`) and all the ranks.
"""

from __future__ import annotations

import binascii
import contextlib
import gzip
import hashlib
import importlib.util
import marshal
import os
from pathlib import Path

from compiler.errors import APCError, TokenizerError

CACHE_VARIABLE = "APC_CACHE_DIR"
"""The environment variable naming the cache directory (empty: no cache)."""

_MAGIC = b"apc-ranks\n"
_FORMAT = b"1"  # the payload's layout: bump on any change
_DIGEST = 32  # bytes of a sha256
_ENTRY = _DIGEST + 8  # a part's digest and its size
PARTS = ("ascii", "full")
"""The parts of a cache file, in order: the ranks of the ASCII tokens, then all of them."""


def cache_dir() -> Path | None:
    """The directory of the rank cache, or None when ``APC_CACHE_DIR`` is set empty."""
    named = os.environ.get(CACHE_VARIABLE)
    if named is not None:
        return Path(named).expanduser() if named else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agent-prompt-compiler"


def rank_file(name: str) -> bytes:
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


def parse_rank_file(file: str, expected_hash: str) -> dict[bytes, int]:
    """The entries of the rank file ``file`` (a name, or a path or URL ending in it), from
    the local copy, checked against ``expected_hash`` and parsed as ``load_tiktoken_bpe``
    parses them."""
    from tiktoken.load import check_hash

    name = file.rsplit("/", 1)[-1]
    contents = rank_file(name)
    if not check_hash(contents, expected_hash):
        raise TokenizerError(
            code="tokenizer.rank_file_hash",
            message=f"the offline rank file {name} does not match tiktoken's expected hash",
        )
    # the lines "<base64 token> <rank>" of a file whose hash was just checked, parsed as
    # load_tiktoken_bpe parses them, in C passes (about twice as fast as its loop)
    fields = contents.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def _cache_path(directory: Path, file: str, expected_hash: str) -> Path:
    stem = file.rsplit("/", 1)[-1].removesuffix(".tiktoken")
    return directory / "ranks" / f"{stem}-{expected_hash[:16]}.v{_FORMAT.decode()}"


def _parts(ranks: dict[bytes, int]) -> dict[str, bytes]:
    """The cached parts of ``ranks``: each a marshalled pair of lists (tokens, ranks)."""
    ascii = {token: rank for token, rank in ranks.items() if token.isascii()}
    return {
        part: marshal.dumps((list(table), list(table.values())))
        for part, table in (("ascii", ascii), ("full", ranks))
    }


def _read_cache(path: Path, expected_hash: str, part: str) -> dict[bytes, int] | None:
    """The part ``part`` of the table cached at ``path``, or None when it is absent or not
    exactly what this module wrote for the rank file of ``expected_hash`` (see the module
    docstring). Only that part is checked and read."""
    try:
        data = memoryview(path.read_bytes())
    except OSError:
        return None
    lead = _MAGIC + _FORMAT + bytes.fromhex(expected_hash)
    head = len(lead) + len(PARTS) * _ENTRY
    if len(data) < head or data[: len(lead)] != lead:
        return None
    entries = [
        data[len(lead) + i * _ENTRY : len(lead) + (i + 1) * _ENTRY] for i in range(len(PARTS))
    ]
    sizes = [int.from_bytes(entry[_DIGEST:], "big") for entry in entries]
    index = PARTS.index(part)
    start = head + sum(sizes[:index])
    body = data[start : start + sizes[index]]
    if len(body) != sizes[index] or hashlib.sha256(body).digest() != entries[index][:_DIGEST]:
        return None
    try:
        tokens, ranks = marshal.loads(body)
        return dict(zip(tokens, ranks, strict=True))
    except (EOFError, ValueError, TypeError):  # a digest that matches: not expected
        return None


def _write_cache(path: Path, expected_hash: str, ranks: dict[bytes, int]) -> None:
    """Keep ``ranks`` at ``path`` (atomically); a directory that cannot be written is no
    error (counting goes on uncached)."""
    from compiler._base.atomic import atomic_write_bytes

    parts = _parts(ranks)
    head = _MAGIC + _FORMAT + bytes.fromhex(expected_hash)
    for part in PARTS:
        head += hashlib.sha256(parts[part]).digest() + len(parts[part]).to_bytes(8, "big")
    with contextlib.suppress(APCError, OSError):
        atomic_write_bytes(path, head + b"".join(parts[part] for part in PARTS))


def load_ranks(file: str, expected_hash: str, part: str = "full") -> dict[bytes, int]:
    """The ranks of the rank file ``file`` whose sha256 is ``expected_hash`` (``part``
    ``"ascii"``: only its ASCII tokens): from the cache when a valid one is there, else
    parsed from the rank file (and cached)."""
    directory = cache_dir()
    if directory is None:
        ranks = parse_rank_file(file, expected_hash)
    else:
        path = _cache_path(directory, file, expected_hash)
        cached = _read_cache(path, expected_hash, part)
        if cached is not None:
            return cached
        ranks = parse_rank_file(file, expected_hash)
        _write_cache(path, expected_hash, ranks)
    if part == "ascii":
        return {token: rank for token, rank in ranks.items() if token.isascii()}
    return ranks
