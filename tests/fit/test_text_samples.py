"""The summary cache's memo of a text's extractive sample (TextSamples): it hands out exactly
what splitting the text again gives (any text: lone surrogates, empty, any picks), copies
a caller may change, and keeps its bounds and its character tally under threads."""

from __future__ import annotations

import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler._base.tokens import counter_for
from compiler.fit import SummaryRequest
from compiler.fit.summarize import ExtractiveSummarizer, FirstSentences, TextSamples
from tests.threads import run_threads

COUNTER = counter_for("o200k_base")
PIECES = st.sampled_from(["Word", "x", ". ", "! ", "。", "\n", "\n\n", "  ", "\ud800", "\udfff"])
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=60).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(TEXTS, min_size=1, max_size=4), picks=st.sampled_from([1, 2, 3, 48]))
def test_a_remembered_sample_is_the_sample(texts: list[str], picks: int) -> None:
    plain = ExtractiveSummarizer(COUNTER, picks=picks)
    samples = TextSamples()
    memo = ExtractiveSummarizer(COUNTER, picks=picks, sentences=FirstSentences(), samples=samples)
    other = ExtractiveSummarizer(COUNTER, picks=picks + 1, samples=samples)  # same memo
    for text in texts + texts:
        request = SummaryRequest("c", "ToolResult", 100, text=text)
        want = plain.lines(request)
        got = memo.lines(request)
        assert got == want and memo.key(request) == plain.key(request)
        got.append("a caller's change")  # a copy: the memo keeps its own
        assert memo.lines(request) == want
        wider = ExtractiveSummarizer(COUNTER, picks=picks + 1).lines(request)
        assert other.lines(request) == wider  # picks are part of the key


def test_text_samples_keep_their_bounds_and_tally_under_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(TextSamples, "ENTRIES", 16)
    monkeypatch.setattr(TextSamples, "CHARS", 4_000)
    memo = TextSamples()
    texts = [f"T{i}. " * (1 + i % 40) for i in range(64)]
    wrong: list[object] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(3_000):
            text, picks = rng.choice(texts), rng.choice([1, 48])
            got = memo.get(text, picks, lambda t=text, p=picks: [t, str(p)])
            if got != [text, str(picks)]:
                wrong.append(got)
            got.append("changed")

    run_threads(work)  # threads switch often: the same text stored twice at once
    assert not wrong
    assert len(memo._memo) <= TextSamples.ENTRIES and memo._chars <= TextSamples.CHARS
    assert memo._chars == sum(len(text) for _, text in memo._memo)


def test_a_text_stored_twice_at_once_is_counted_once() -> None:
    memo, text = TextSamples(), "One. Two. Three."
    both_made = threading.Barrier(2)

    def make() -> list[str]:
        both_made.wait(timeout=10)  # both threads missed and made it before either stores
        return ["One.", "Three."]

    threads = [threading.Thread(target=memo.get, args=(text, 48, make)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert list(memo._memo) == [(48, text)] and memo._chars == len(text)
