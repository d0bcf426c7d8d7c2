"""The on-disk cache of parsed rank files: used only when valid, rebuilt when missing or
corrupt, never a source of other counts; off with APC_CACHE_DIR set empty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler._base import ranks, tokens
from compiler._base.rank_table import FlatRanks

ROOT = Path(__file__).resolve().parents[1]
O200K = tokens.OFFLINE_ENCODINGS["o200k_base"]
CL100K = tokens.OFFLINE_ENCODINGS["cl100k_base"]
TEXTS = ["hello world", "Mira left the village before dawn.", "灯台へ向かう — ferry", " \n\n-x"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache dir of this test; the parses of the rank file counted in ``.parsed``."""
    monkeypatch.setenv(ranks.CACHE_VARIABLE, str(tmp_path))
    return tmp_path


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = ranks.parse_rank_file

    def spy(file: str, expected_hash: str) -> dict[bytes, int]:
        seen.append(file)
        return original(file, expected_hash)

    monkeypatch.setattr(ranks, "parse_rank_file", spy)
    return seen


def reference(spec: tokens.OfflineEncoding) -> dict[bytes, int]:
    return ranks.parse_rank_file(spec.rank_file, spec.expected_hash)


def cache_file(cache: Path) -> Path:
    (path,) = (cache / "ranks").iterdir()
    return path


def test_the_parse_is_cached_and_read_back_as_the_rank_file_gives_it(
    cache: Path, parses: list[str]
) -> None:
    first = ranks.load_ranks(CL100K.rank_file, CL100K.expected_hash)
    assert parses == [CL100K.rank_file] and cache_file(cache).name.startswith("cl100k_base-")
    again = ranks.load_ranks(CL100K.rank_file, CL100K.expected_hash)
    ascii_part = ranks.load_ascii_ranks(CL100K.rank_file, CL100K.expected_hash)
    assert parses == [CL100K.rank_file]  # both parts read from the cache
    want = reference(CL100K)
    assert list(first.items()) == list(again.items()) == list(want.items())
    assert isinstance(ascii_part, FlatRanks)  # read in place
    ascii_want = {t: r for t, r in want.items() if t.isascii()}
    assert len(ascii_part) == len(ascii_want)
    assert all(ascii_part.get(t, -1) == r for t, r in ascii_want.items())
    others = [*[t for t in want if not t.isascii()][:2000], b"", b"zzqxzzqx", b"\x00" * 9]
    assert not any(t in ascii_part for t in others)
    assert all(ascii_part.get(t, -7) == -7 for t in others)


def damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        del data[len(data) // 2 :]
    elif how == "flipped byte in the ranks":
        data[-1000] ^= 0x40
    elif how == "flipped byte in the ascii part":
        data[200] ^= 0x01
    elif how == "another rank file's hash":
        data[len(ranks._MAGIC) + len(ranks._FORMAT)] ^= 0xFF
    elif how == "another format":
        data[len(ranks._MAGIC)] = ord("9")
    elif how == "empty":
        data = bytearray()
    elif how == "garbage":
        data = bytearray(os.urandom(4096))
    path.write_bytes(bytes(data))


HOW = [
    "truncated",
    "flipped byte in the ranks",
    "flipped byte in the ascii part",
    "another rank file's hash",
    "another format",
    "empty",
    "garbage",
]


@pytest.fixture(scope="module")
def expected() -> list[int]:
    """The counts of TEXTS by an encoder built from the rank file itself."""
    import tiktoken

    encoding = tiktoken.Encoding(
        "o200k_base",
        pat_str=O200K.pat_str,
        mergeable_ranks=reference(O200K),
        special_tokens=dict(O200K.special_tokens),
    )
    return [len(encoding.encode_ordinary(text)) for text in TEXTS]


def intact(path: Path) -> bool:
    return all(ranks._cached(path, O200K.expected_hash, part) for part in ranks.PARTS)


@pytest.mark.parametrize("how", HOW)
def test_a_corrupt_cache_never_changes_a_count_and_is_rebuilt(
    how: str, cache: Path, parses: list[str], expected: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    ranks.load_ranks(O200K.rank_file, O200K.expected_hash)
    path = cache_file(cache)
    for encoder in (False, True):  # counted without the encoder (ASCII), and with it
        damage(path, how)
        assert not intact(path)
        parses.clear()
        monkeypatch.setattr(tokens, "_ENCODINGS", {})  # a fresh process's encoders
        tokens.ascii_counter.cache_clear()
        counter = tokens.TokenCounter("o200k_base")
        if encoder:
            counter._encoding = tokens.get_encoding("o200k_base")
        assert [counter.count(text) for text in TEXTS] == expected
        ranks.load_ascii_ranks(O200K.rank_file, O200K.expected_hash)
        assert parses == ["o200k_base.tiktoken"]  # parsed once, then the cache rewritten
        assert intact(path)
    tokens.ascii_counter.cache_clear()


def test_a_damaged_part_is_refused_even_if_the_other_is_intact(
    cache: Path, parses: list[str]
) -> None:
    ranks.load_ranks(O200K.rank_file, O200K.expected_hash)
    damage(cache_file(cache), "flipped byte in the ranks")  # in the full part
    want = reference(O200K)
    parses.clear()
    assert b" the" in ranks.load_ascii_ranks(O200K.rank_file, O200K.expected_hash)
    assert parses == []  # the ASCII part is intact: read from the cache
    assert ranks.load_ranks(O200K.rank_file, O200K.expected_hash) == want
    assert parses == [O200K.rank_file]  # the full part is not: parsed again, and rewritten
    parses.clear()
    ranks.load_ranks(O200K.rank_file, O200K.expected_hash)
    assert parses == []


def test_an_empty_cache_variable_turns_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    monkeypatch.setenv(ranks.CACHE_VARIABLE, "")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ranks.cache_dir() is None
    want = reference(CL100K)
    parses.clear()
    for _ in range(2):
        assert ranks.load_ranks(CL100K.rank_file, CL100K.expected_hash) == want
    assert parses == [CL100K.rank_file] * 2
    assert list(tmp_path.iterdir()) == []  # nothing written anywhere


def test_the_default_cache_dir_is_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ranks.CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ranks.cache_dir() == tmp_path / "xdg" / "agent-prompt-compiler"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ranks.cache_dir() == tmp_path / ".cache" / "agent-prompt-compiler"


def test_a_cache_dir_that_cannot_be_written_leaves_counting_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(ranks.CACHE_VARIABLE, str(blocker / "cache"))
    assert ranks.load_ranks(CL100K.rank_file, CL100K.expected_hash) == reference(CL100K)


@pytest.mark.slow
def test_a_compile_process_fills_the_cache_and_the_next_reads_it(tmp_path: Path) -> None:
    """`apc compile` of the example: the first process writes the cache, the next gives the
    same request from it; with the cache off, the same again."""
    env = {**os.environ, ranks.CACHE_VARIABLE: str(tmp_path / "cache")}
    example = ROOT / "examples" / "writer"
    command = [sys.executable, "-m", "compiler", "compile", str(example / "template.txt")]
    command += ["--context", str(example / "run.json")]
    outs = []
    for extra in ({}, {}, {ranks.CACHE_VARIABLE: ""}):
        done = subprocess.run(
            command, capture_output=True, text=True, check=True, cwd=ROOT, env=env | extra
        )
        outs.append(json.loads(done.stdout))
        assert list((tmp_path / "cache" / "ranks").iterdir())
    assert outs[0] == outs[1] == outs[2]
