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
:mod:`compiler._base.ascii_bpe`), as a table read in place (:mod:`compiler._base.rank_table`),
and all the ranks.
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

from compiler._base.rank_table import LAYOUT, FlatRanks, RankLookup, flatten
from compiler.errors import APCError, TokenizerError

CACHE_VARIABLE = "APC_CACHE_DIR"
"""The environment variable naming the cache directory (empty: no cache)."""

_MAGIC = b"apc-ranks\n"
_FORMAT = b"2-" + LAYOUT  # the payload's layout (bump on any change), the machine's
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
    return directory / "ranks" / f"{stem}-{expected_hash[:16]}.v{_FORMAT[:1].decode()}"


def _parts(ranks: dict[bytes, int]) -> dict[str, bytes]:
    """The cached parts of ``ranks``: the ASCII tokens' table (:func:`flatten`, padded to
    4 bytes) and all the ranks, a marshalled pair of lists (tokens, ranks)."""
    table = flatten({token: rank for token, rank in ranks.items() if token.isascii()})
    return {
        "ascii": table + bytes(-len(table) % 4),
        "full": marshal.dumps((list(ranks), list(ranks.values()))),
    }


def _cached(path: Path, expected_hash: str, part: str) -> memoryview | None:
    """The part ``part`` of the cache file at ``path``, or None when the file is absent or
    not exactly what this module wrote for the rank file of ``expected_hash`` (see the module
    docstring). Only that part is read and checked."""
    lead = _MAGIC + _FORMAT + bytes.fromhex(expected_hash)
    index = PARTS.index(part)
    try:
        with path.open("rb") as file:
            head = file.read(len(lead) + len(PARTS) * _ENTRY)
            if len(head) < len(lead) + len(PARTS) * _ENTRY or not head.startswith(lead):
                return None
            entries = [head[len(lead) + i * _ENTRY :][:_ENTRY] for i in range(len(PARTS))]
            sizes = [int.from_bytes(entry[_DIGEST:], "big") for entry in entries]
            file.seek(len(head) + sum(sizes[:index]))
            body = file.read(sizes[index])
    except OSError:
        return None
    if len(body) != sizes[index] or hashlib.sha256(body).digest() != entries[index][:_DIGEST]:
        return None
    return memoryview(body)


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


def _load(file: str, expected_hash: str, part: str) -> memoryview | dict[bytes, int]:
    """The cached part ``part``, or (no cache, or none valid) the parsed rank file, which
    is then cached."""
    directory = cache_dir()
    if directory is None:
        return parse_rank_file(file, expected_hash)
    path = _cache_path(directory, file, expected_hash)
    cached = _cached(path, expected_hash, part)
    if cached is not None:
        return cached
    ranks = parse_rank_file(file, expected_hash)
    _write_cache(path, expected_hash, ranks)
    return ranks


def load_ranks(file: str, expected_hash: str) -> dict[bytes, int]:
    """The ranks of the rank file ``file`` whose sha256 is ``expected_hash``: from the
    cache when a valid one is there, else parsed from the rank file (and cached)."""
    found = _load(file, expected_hash, "full")
    if isinstance(found, dict):
        return found
    try:
        tokens, ranks = marshal.loads(found)
        return dict(zip(tokens, ranks, strict=True))
    except (EOFError, ValueError, TypeError):  # under a digest that matched: not expected
        return parse_rank_file(file, expected_hash)


def load_ascii_ranks(file: str, expected_hash: str) -> RankLookup:
    """The ranks of the ASCII tokens of that rank file, as :func:`load_ranks` finds them:
    from the cache, read in place (:class:`FlatRanks`)."""
    found = _load(file, expected_hash, "ascii")
    if isinstance(found, dict):
        return {token: rank for token, rank in found.items() if token.isascii()}
    try:
        return FlatRanks(found)
    except ValueError:  # under a digest that matched: not expected
        ascii = parse_rank_file(file, expected_hash).items()
        return {token: rank for token, rank in ascii if token.isascii()}
