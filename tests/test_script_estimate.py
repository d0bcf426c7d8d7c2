"""The Anthropic and Gemini estimate: script classes, an upper bound of Claude's tokenizer on
every sample script, at least the o200k_base count, rising wherever that count rises."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler._base.tokens import SCRIPT_CLASSES, SCRIPT_SCALE, counter_for, script_chars
from compiler.providers.anthropic import DIALECT as ANTHROPIC
from compiler.providers.gemini import DIALECT as GEMINI

ROOT = Path(__file__).resolve().parent.parent
O200K = counter_for("o200k_base")


def _samples() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "script_samples", ROOT / "benchmarks" / "script_samples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLES: dict[str, str] = _samples().SAMPLES


def _claude_count() -> object:
    """Claude's tokenizer.json (APC_CLAUDE_TOKENIZER, or the copy benchmarks/script_factors.py
    keeps), never downloaded here: the tests that need it skip without it."""
    tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers package is absent")
    path = Path(
        os.environ.get("APC_CLAUDE_TOKENIZER")
        or ROOT / "benchmarks" / ".cache" / "claude-tokenizer.json"
    )
    if not path.is_file():
        pytest.skip(
            f"no Claude tokenizer.json at {path} (benchmarks/script_factors.py fetches it "
            "from the anthropic 0.34 wheel; or set APC_CLAUDE_TOKENIZER)"
        )
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def _class(name: str) -> int:
    return [n for n, _ in SCRIPT_CLASSES].index(name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain ASCII, code() and {json: 1}", {}),
        ("Grüße, café", {"latin-1": 3}),
        ("Łódź, şeker", {"latin-1": 1, "latin-ext": 3}),
        ("Καλημέρα", {"greek": 8}),
        ("Привет, мир", {"cyrillic": 9}),
        ("שלום", {"hebrew": 4}),
        ("مرحبا", {"arabic": 5}),
        ("नमस्ते", {"indic-thai": 6}),
        ("สวัสดี", {"indic-thai": 6}),
        ("Việt", {"u1000": 1}),
        ("— “x” →", {"symbols": 4}),
        ("ひらがな、カタカナ", {"cjk-kana": 9}),
        ("灯塔看守人", {"han": 5}),
        ("안녕하세요", {"hangul": 5}),
        ("ＡＢＣ！", {"forms": 4}),
        ("🙂🎉", {"astral": 2}),
        ("a 灯 б 🙂", {"han": 1, "cyrillic": 1, "astral": 1}),
    ],
)
def test_script_classes(text: str, expected: dict[str, int]) -> None:
    counts = script_chars(text)
    assert {SCRIPT_CLASSES[i][0]: n for i, n in enumerate(counts) if n} == expected
    assert sum(counts) == sum(1 for ch in text if not ch.isascii())


def test_both_dialects_count_with_the_script_estimate() -> None:
    assert ANTHROPIC.estimate_scale is SCRIPT_SCALE and GEMINI.estimate_scale is SCRIPT_SCALE
    counter = ANTHROPIC.estimating(O200K)
    assert counter is not O200K and counter is GEMINI.estimating(O200K)  # kept with O200K
    assert counter.scale is SCRIPT_SCALE
    text = SAMPLES["russian"]
    assert counter.count(text) == SCRIPT_SCALE.estimate(text, O200K.count(text))
    assert O200K.count(text) < counter.count(text)  # the plain counter's cache is its own
    assert ANTHROPIC.estimating(counter) is counter


def test_a_callers_count_function_is_not_scaled() -> None:
    from compiler._base.tokens import TokenCounter

    exact = TokenCounter("o200k_base", count_fn=len)
    assert ANTHROPIC.estimating(exact) is exact and exact.count("Привет") == 6


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_estimate_bounds_claudes_count_of_every_sample(name: str) -> None:
    claude = _claude_count()
    text = SAMPLES[name]
    counter = ANTHROPIC.estimating(counter_for("o200k_base"))
    assert counter.count(text) >= claude(text)  # type: ignore[operator]
    for line in filter(None, (s.strip() for s in text.splitlines())):
        assert counter.count(line) >= claude(line)  # type: ignore[operator]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.text(max_size=40))
def test_the_estimate_is_at_least_o200k_and_rises_where_it_rises(a: str, b: str) -> None:
    """At least the o200k_base count; appending text never lowers the estimate unless the
    o200k_base count itself falls (BPE can merge across the join: "owor" + "ld")."""
    estimate = lambda t: SCRIPT_SCALE.estimate(t, O200K.count(t))  # noqa: E731
    assert estimate(a) >= O200K.count(a)
    if O200K.count(a + b) >= O200K.count(a):
        assert estimate(a + b) >= estimate(a)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(sorted(SAMPLES)), min_size=1, max_size=4), st.text(max_size=30))
def test_appending_a_sample_never_lowers_the_estimate(names: list[str], tail: str) -> None:
    text = tail
    estimate = lambda t: SCRIPT_SCALE.estimate(t, O200K.count(t))  # noqa: E731
    for name in names:
        longer = f"{text}\n\n{SAMPLES[name]}"
        if O200K.count(longer) >= O200K.count(text):
            assert estimate(longer) >= estimate(text)
        text = longer
