"""Offline tokenizer: official rank files, tiktoken's own hashes, no network."""

from __future__ import annotations

import inspect
import re
import socket
import tracemalloc

import pytest
import tiktoken_ext.openai_public as public
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import check_hash

from compiler._base import tokens
from compiler._base.tokens import TokenCounter, encoding_name_for_model, get_encoding
from compiler.errors import TokenizerError


def test_sockets_are_blocked_in_tests() -> None:
    with pytest.raises(Exception, match=r"(?i)socket"):
        socket.create_connection(("127.0.0.1", 9))


@pytest.mark.parametrize(
    ("name", "text", "tokens"),
    [
        ("o200k_base", "hello world", [24912, 2375]),
        ("cl100k_base", "hello world", [15339, 1917]),
        ("o200k_harmony", "hello world", [24912, 2375]),
    ],
)
def test_encodings_load_offline(name: str, text: str, tokens: list[int]) -> None:
    assert get_encoding(name).encode_ordinary(text) == tokens


def test_rank_files_are_checked_against_tiktokens_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    from tiktoken import load

    from compiler._base import ranks

    seen: list[str] = []

    def spy(data: bytes, expected: str) -> bool:
        seen.append(expected)
        return check_hash(data, expected)

    monkeypatch.setattr(load, "check_hash", spy)
    monkeypatch.setenv(ranks.CACHE_VARIABLE, "")  # no rank cache: the files are read
    monkeypatch.setattr(tokens, "_ENCODINGS", {})
    assert get_encoding("cl100k_base").n_vocab == 100277
    assert get_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]
    # the hashes tiktoken's own constructors pass, i.e. the official files
    source = inspect.getsource(public)
    official = set(re.findall(r'expected_hash="([0-9a-f]{64})"', source))
    assert seen == [
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ]
    assert set(seen) <= official


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_rank_files_parse_as_tiktoken_parses_them(name: str) -> None:
    """The offline ranks are what tiktoken's load_tiktoken_bpe makes of the same file (its
    line loop, copied here as the reference), entry for entry and in order; so are the
    cached ones."""
    import base64

    from compiler._base import ranks

    spec = tokens.OFFLINE_ENCODINGS[name]
    contents = ranks.rank_file(spec.rank_file.rsplit("/", 1)[-1])
    reference = {}
    for line in contents.splitlines():
        if line:
            token, rank = line.split()
            reference[base64.b64decode(token)] = int(rank)
    got = ranks.parse_rank_file(spec.rank_file, spec.expected_hash)
    assert list(got.items()) == list(reference.items())
    cached = ranks.load_ranks(spec.rank_file, spec.expected_hash)
    assert list(cached.items()) == list(reference.items())


def test_tampered_rank_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler._base import ranks

    monkeypatch.setattr(ranks, "rank_file", lambda name: b"dGVzdA== 0\n")
    with pytest.raises(TokenizerError) as info:
        ranks.parse_rank_file("x/cl100k_base.tiktoken", "0" * 64)
    assert info.value.code == "tokenizer.rank_file_hash"


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-oss-120b", "o200k_harmony"),
    ],
)
def test_model_to_encoding(model: str, encoding: str) -> None:
    assert encoding_name_for_model(model) == encoding


def test_unknown_model_is_a_clear_error() -> None:
    with pytest.raises(TokenizerError) as info:
        encoding_name_for_model("claude-sonnet-4")
    assert info.value.code == "tokenizer.unknown_model"
    assert info.value.hint and "--encoding" in info.value.hint


def test_unknown_encoding_has_did_you_mean() -> None:
    with pytest.raises(TokenizerError) as info:
        TokenCounter("o200k_bse")
    assert info.value.hint == "did you mean 'o200k_base'?"


def test_counter_caches_by_content() -> None:
    counter = TokenCounter("o200k_base")
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    assert counter._cache == {"hello world": 2}


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "o200k_harmony"])
def test_offline_encodings_are_tiktokens_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The split pattern, special tokens, rank file and hash are those of tiktoken's own
    constructor (run here with its loader stubbed: it would download)."""
    from compiler._base.tokens import OFFLINE_ENCODINGS

    asked: list[tuple[str, str | None]] = []

    def loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        asked.append((url.rsplit("/", 1)[-1], expected_hash))
        return {}

    monkeypatch.setattr(public, "load_tiktoken_bpe", loader)
    theirs = public.ENCODING_CONSTRUCTORS[name]()
    ours = OFFLINE_ENCODINGS[name]
    assert ours.pat_str == theirs["pat_str"]
    assert dict(ours.special_tokens) == theirs["special_tokens"]
    assert "explicit_n_vocab" not in theirs
    assert set(asked) == {(ours.rank_file, ours.expected_hash)}
    assert get_encoding(name).name == name


def test_a_callers_token_counter_counts_and_is_cached_per_content() -> None:
    """A runtime with network access passes its own counter (e.g. the provider's
    count-tokens endpoint): it is asked once per distinct text, and the request fits it."""
    import compiler

    asked: list[str] = []

    def remote(text: str) -> int:  # stands for an SDK call: one token per 3 characters
        asked.append(text)
        return len(text) // 3 + 1

    counter = TokenCounter("o200k_base", count_fn=remote)
    chat = [{"role": "user", "content": f"message {i} " * 8} for i in range(60)]
    first = compiler.compile_string(
        "S <<agent.chat.history>>", context={"chat": chat}, budget=400, token_counter=counter
    )
    assert first.ledger.total_tokens <= 400 and asked
    calls = len(asked)
    again = compiler.compile_string(
        "S <<agent.chat.history>>", context={"chat": chat}, budget=400, token_counter=counter
    )
    assert again.request == first.request and len(asked) == calls  # cached per content
    plain = compiler.compile_string("S <<agent.chat.history>>", context={"chat": chat}, budget=400)
    assert plain.request != first.request  # the counts really came from the caller


def test_a_counter_s_cache_is_bounded_in_characters_too() -> None:
    """A long-lived session's counter keeps no more text than its character bound, however
    few (and large) the texts: it starts over past it, and never keeps a text over it."""
    counter = TokenCounter("o200k_base", max_chars=10_000)
    for i in range(50):
        assert counter.count(f"{i} " + "word " * 500) == counter.count(f"{i} " + "word " * 500)
        assert counter.cached_chars <= 10_000
    assert counter.count("x " * 20_000) > 10_000 and counter.cached_chars <= 10_000
    from compiler._base.tokens import MAX_CACHED_CHARS

    assert TokenCounter("o200k_base")._max_chars == MAX_CACHED_CHARS  # a session's default


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(["", "a", "hello world", "灯台", "x" * 40, "the ferry."]), max_size=12
    ),
    st.integers(1, 5),
    st.integers(1, 60),
    st.booleans(),
)
def test_counts_are_count_s_and_kept_as_it_keeps_them(
    texts: list[str], max_entries: int, max_chars: int, own: bool
) -> None:
    """A batch count gives each text's count and keeps the cache within its bounds
    (entries and characters, then it starts over), each kept count the text's count."""
    encoding = get_encoding("o200k_base")
    fn = (lambda t: len(encoding.encode_ordinary(t)) + 1) if own else None
    batch = TokenCounter("o200k_base", max_entries, count_fn=fn, max_chars=max_chars)
    single = TokenCounter("o200k_base", max_entries, count_fn=fn, max_chars=max_chars)
    batch.count("hello world")
    single.count("hello world")
    assert batch.counts(texts) == [single.count(t) for t in texts]
    assert batch.cached_chars <= max_chars and len(batch._cache) <= max_entries
    assert batch.cached_chars == sum(map(len, batch._cache))  # the tally is the cache's
    assert all(single.count(t) == n for t, n in batch._cache.items())


def test_threads_sharing_a_counter_keep_its_tally_exact() -> None:
    """A server's threads share a session's counter: its character tally stays the sum of
    what its cache holds (a lost update would let the cache outgrow its character bound),
    and every count is exact."""
    from tests.threads import run_threads

    counter = TokenCounter("o200k_base", max_entries=10**9, max_chars=600_000)
    encoding = get_encoding("o200k_base")
    wrong: list[str] = []

    def work(k: int) -> None:
        for i in range(1500):
            text = f"text {k} {i} " + "x" * (i % 7)
            if counter.count(text) != len(encoding.encode_ordinary(text)):
                wrong.append(text)
            counter.counts([f"batch {k} {i} {j}" for j in range(3)])

    run_threads(work)
    assert not wrong
    assert counter.cached_chars == sum(map(len, counter._cache)) <= 600_000


def test_a_caller_s_count_fn_is_asked_exactly_as_counting_one_by_one_asks_it() -> None:
    """With a caller's ``count_fn`` (maybe a provider's endpoint, maybe answering differently
    twice) a batch asks the same texts in the same order as :meth:`count` one by one: a
    text the cache forgot midway (it starts over when full) is asked again."""
    encoding = get_encoding("o200k_base")

    def counters() -> tuple[TokenCounter, list[str]]:
        asked: list[str] = []

        def fn(text: str) -> int:
            asked.append(text)
            return len(encoding.encode_ordinary(text)) + len(asked)  # a different answer each time

        counter = TokenCounter("o200k_base", 1, count_fn=fn)
        counter.count("the ferry")
        return counter, asked

    batch, batch_asked = counters()
    single, single_asked = counters()
    texts = ["the ferry", "river", "the ferry", "", "river"]
    assert batch.counts(texts) == [single.count(t) for t in texts]
    assert batch_asked == single_asked == ["the ferry", "river", "the ferry", "river"]


# text around a seam: whitespace of every kind, "/" (o200k's punctuation runs take it after a
# newline), punctuation, digits, letters of several scripts, marks
_SEAM_TEXT = st.text(
    alphabet=st.sampled_from(
        list(" \t\r\n\x0b\x0c\u00a0\u3000/-.,!?'\")]}:;0123456789aZéß語ёǅ\u0301")
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["o200k_base", "cl100k_base"]),
    st.text(max_size=12) | _SEAM_TEXT,
    st.lists(_SEAM_TEXT, min_size=1, max_size=5),
    st.booleans(),
)
def test_a_list_counted_line_by_line_is_counted_exactly(
    name: str, head: str, lines: list[str], dashed: bool
) -> None:
    """A text whose lines start with ``-`` is counted as the sum of its pieces split before
    each such line (the pre-tokenizer always splits between a newline and a ``-``): exactly
    the whole text's encoding, whatever the lines hold; and so is any other text."""
    encoding = get_encoding(name)
    text = "\n".join([head, *[f"-{line}" if dashed else line for line in lines]])
    counter = TokenCounter(name)
    assert counter.count(text) == len(encoding.encode_ordinary(text))
    assert all(counter.count(t) == len(encoding.encode_ordinary(t)) for t in counter._cache)


def spied(name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[TokenCounter, list[str]]:
    """A counter of ``name`` and the texts it encodes, as it encodes them."""
    encoding = get_encoding(name)
    encoded: list[str] = []

    def spy(text: str) -> list[int]:
        encoded.append(text)
        return encoding.encode_ordinary(text)

    counter = TokenCounter(name)
    monkeypatch.setattr(
        counter, "_encoding", type("Spy", (), {"encode_ordinary": staticmethod(spy)})()
    )
    return counter, encoded


def test_a_list_under_a_new_note_encodes_only_the_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary of a history under a note that names a new count (the next turn): only
    the note's piece is encoded again; a list of more pieces than MAX_SEAMS is encoded whole."""
    encoding = get_encoding("o200k_base")
    counter, encoded = spied("o200k_base", monkeypatch)
    lines = "".join(f"\n- user: line {i} said this." for i in range(40))
    assert counter.count(f"[40 cut.]{lines}") == len(encoding.encode_ordinary(f"[40 cut.]{lines}"))
    encoded.clear()
    assert counter.count(f"[41 cut.]{lines}") == len(encoding.encode_ordinary(f"[41 cut.]{lines}"))
    assert encoded == ["[41 cut.]\n"]
    long = "".join(f"- {i}\n" for i in range(tokens.MAX_SEAMS + 1))
    encoded.clear()
    assert counter.count(f"x\n{long}") == len(encoding.encode_ordinary(f"x\n{long}"))
    assert encoded == [f"x\n{long}"]


def test_a_callers_count_fn_counts_a_list_whole() -> None:
    """With a caller's counter nothing is assumed of its tokenizer: the text is asked whole."""
    asked: list[str] = []
    counter = TokenCounter("o200k_base", count_fn=lambda t: asked.append(t) or len(t))
    assert counter.count("note\n- a\n- b") == len("note\n- a\n- b")
    assert asked == ["note\n- a\n- b"]


def test_a_list_of_too_many_pieces_is_encoded_whole_without_splitting_it_all() -> None:
    """A text of more than MAX_SEAMS pieces (hostile input: 100,000 list lines) is encoded
    whole without first being split into all its pieces: counting it holds no more memory
    than encoding it does, not a string per line besides its tokens."""
    encoding = get_encoding("o200k_base")
    text = "\n-ab" * 100_000
    tracemalloc.start()
    try:
        encoding.encode_ordinary(text)
        encode_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        n = TokenCounter("o200k_base").count(text)
        count_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == len(encoding.encode_ordinary(text))
    assert count_peak < 1.5 * encode_peak


@pytest.mark.parametrize(
    ("pieces", "split"), [(tokens.MAX_SEAMS, True), (tokens.MAX_SEAMS + 1, False)]
)
def test_a_list_is_split_up_to_max_seams_pieces(
    monkeypatch: pytest.MonkeyPatch, pieces: int, split: bool
) -> None:
    """MAX_SEAMS pieces are counted piece by piece, one more and the text is encoded whole."""
    encoding = get_encoding("cl100k_base")
    counter, encoded = spied("cl100k_base", monkeypatch)
    text = "head" + "".join(f"\n- {i}" for i in range(pieces - 1))
    assert counter.count(text) == len(encoding.encode_ordinary(text))
    assert (encoded == [text]) is not split
    assert len(encoded) == (pieces if split else 1)
