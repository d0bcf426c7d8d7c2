"""ASCII text counted without tiktoken's encoder: always tiktoken's counts (generated text
over every ASCII character class, the corpus, this repository's texts), and a counter that
switches to the encoder gives the same counts and the same compiles."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler._base import ascii_bpe, tokens

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["o200k_base", "cl100k_base", "o200k_harmony"]

# every class the patterns tell apart: letters of both cases (and the contraction letters),
# digits, each ASCII White_Space character, the separators Python but not tiktoken calls
# space (0x1c-0x1f), apostrophe, slash, other punctuation, control characters
CHARS = "aAbzZsStTdDmMlLvVrReE019 '\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f/-.,!?_#\"\x00\x7f"
ascii_text = st.text(alphabet=st.sampled_from(CHARS), max_size=60) | st.text(
    alphabet=st.characters(max_codepoint=127), max_size=60
)


def tiktokens(name: str, text: str) -> int:
    return len(tokens.get_encoding(name).encode_ordinary(text))


def ours(name: str, text: str) -> int | None:
    """The ASCII counter's count with long pieces merged too (it leaves those to tiktoken for
    speed, not for want of the right count: :data:`ascii_bpe.MAX_MERGED`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ascii_bpe, "MAX_MERGED", 1 << 30)
        return tokens.ascii_counter(name).count(text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300)
@given(text=ascii_text)
def test_ascii_counts_are_tiktokens(name: str, text: str) -> None:
    assert ours(name, text) == tiktokens(name, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "don't",
                "I'M",
                " WE'LL",
                "x'Ve",
                "'d",
                "  \n",
                "12345",
                "ab/cd",
                "\r\n",
                "HTTPServer",
                "camelCase",
                "   x",
            ]
        ),
        max_size=12,
    )
)
def test_ascii_counts_are_tiktokens_on_word_salad(name: str, words: list[str]) -> None:
    text = "".join(words)
    assert ours(name, text) == tiktokens(name, text)


def ascii_runs(paths: list[Path]) -> list[str]:
    """The ASCII text of each file (its other characters dropped), whole."""
    texts = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        texts.append("".join(c for c in text if c.isascii()))
    return [t for t in texts if t]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_ascii_counts_are_tiktokens_on_the_corpus(name: str, corpus: Path) -> None:
    texts = ascii_runs(sorted(p for p in corpus.rglob("*") if p.is_file()))
    assert texts
    assert [ours(name, t) for t in texts] == [tiktokens(name, t) for t in texts]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_ascii_counts_are_tiktokens_on_this_repository(name: str) -> None:
    files = [*ROOT.glob("compiler/**/*.py"), *ROOT.glob("docs/pages/**/*.md")]
    texts = ascii_runs(sorted([*files, *ROOT.glob("examples/**/*.*")]))
    assert len(texts) > 100
    assert [ours(name, t) for t in texts] == [tiktokens(name, t) for t in texts]


def test_merge_count_merges_as_tiktoken() -> None:
    """The least-ranked pair first, the leftmost of equal ones: 'aaa' with only 'aa' a
    token is 'aa' + 'a' (2), and a pair that is no token is never merged."""
    ranks = {b"a": 0, b"b": 1, b"aa": 2, b"ab": 3, b"aab": 4}
    assert ascii_bpe.merge_count(b"aaa", ranks) == 2
    assert ascii_bpe.merge_count(b"aab", ranks) == 1
    assert ascii_bpe.merge_count(b"ba", ranks) == 2
    assert ascii_bpe.merge_count(b"aaaa", ranks) == 2


def test_a_counter_uses_the_encoder_past_its_ascii_share(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["Mira left the village before dawn.", "The ferryman", "灯台へ", "again, once more"]
    want = [tiktokens("o200k_base", t) for t in texts]
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    monkeypatch.setattr(tokens, "ASCII_CHARS", 30)
    counter = tokens.TokenCounter("o200k_base")
    assert [counter.count(text) for text in texts] == want
    assert counter._encoding is not None  # loaded for the text past 30 characters


def test_a_counter_counts_ascii_without_the_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"message {i}: the ferry, the lantern." for i in range(50)]
    want = [tiktokens("o200k_base", t) for t in texts]
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    counter = tokens.TokenCounter("o200k_base")
    assert counter.counts(texts) == want
    assert counter.count("hello world") == 2
    assert counter._encoding is None


def test_a_piece_too_long_to_merge_is_counted_by_tiktoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A word of 250,000 letters (one pre-tokenizer piece) would take hours of merging in
    Python; the counter hands the text to tiktoken, which counts it as it always does."""
    long_word = "x" * 250_000
    texts = ["short and plain", f"a {long_word} b", "x" * ascii_bpe.MAX_MERGED]
    want = [tiktokens("o200k_base", t) for t in texts]
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    counter = tokens.TokenCounter("o200k_base")
    assert counter.count(texts[0]) == want[0] and counter._encoding is None
    assert ascii_bpe.AsciiCounter("o200k_base", {}).count(texts[1]) is None
    assert tokens.ascii_counter("o200k_base").count(texts[2]) == want[2]  # the longest merged
    assert [counter.count(t) for t in texts[1:]] == want[1:]


def test_compiles_are_the_same_with_and_without_the_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    example = ROOT / "examples" / "writer"
    run = {"template": example / "template.txt", "context": example / "run.json"}
    results = []
    for share in (0, tokens.ASCII_CHARS):
        monkeypatch.setattr(tokens, "ASCII_CHARS", share)
        monkeypatch.setattr(tokens, "_ENCODINGS", {})
        for budget in (None, 1500):
            result = compiler.compile(run["template"], context=run["context"], budget=budget)
            results.append((result.request, result.ledger.model_dump()))
    assert results[:2] == results[2:]
