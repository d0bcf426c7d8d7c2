"""Tokens per script: Claude's tokenizer (and cl100k_base) against o200k_base, and the
script factors of the Anthropic and Gemini estimate derived from them.

For every sample of benchmarks/script_samples.py, whole and sentence by sentence, it counts
the text with o200k_base (what the estimate encodes with), with the Claude tokenizer the
``anthropic`` SDK shipped up to version 0.34 (``anthropic/tokenizer.json``, loaded with the
``tokenizers`` package) and with cl100k_base, and prints each sample's counts and ratios.
It then fits the factors of the estimate (:class:`compiler._base.tokens.ScriptScale`): the share
``ascii`` by which every o200k token is multiplied, and a surcharge per character of each
non-ASCII class, so that the estimate of every measured text (whole samples, and their
sentences of at least MIN_TOKENS o200k tokens) is at least MARGIN above the larger of the
two other tokenizers' counts. It prints them as the Python literal compiler/_base/tokens.py holds,
and checks the factors compiler/_base/tokens.py has against the same texts.

Usage (from the repository root)::

    pip install tokenizers            # the benchmark's only extra
    python benchmarks/script_factors.py [--claude-tokenizer PATH]

Without ``--claude-tokenizer`` (or ``APC_CLAUDE_TOKENIZER``) it uses
benchmarks/.cache/claude-tokenizer.json, and when that is missing it runs
``pip download --no-deps anthropic==0.34.2`` into a temporary directory and copies the
wheel's ``anthropic/tokenizer.json`` there (the one network step; tests never take it: they
use the cached file when it exists and skip otherwise).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from script_samples import SAMPLES

from compiler._base.tokens import (
    SCRIPT_CLASSES,
    SCRIPT_SCALE,
    ScriptScale,
    get_encoding,
    script_chars,
)

CACHE = Path(__file__).resolve().parent / ".cache" / "claude-tokenizer.json"
ANTHROPIC_WHEEL = "anthropic==0.34.2"
MARGIN = 0.10  # each whole sample's estimate is at least this much above its worst count
MIN_TOKENS = 10  # sentences shorter than this (in o200k tokens) are not fitted to
PER_TEXT = 2  # tokens added to every text's estimate (ScriptScale.per_text)
SENTENCE = re.compile(r"(?<=[.!?;。！？।؟])\s+|(?<=[。！？])|\n+")


def claude_tokenizer_path(given: str | None) -> Path:
    """The Claude tokenizer.json: the one given, the cached one, or the 0.34 wheel's."""
    path = given or os.environ.get("APC_CLAUDE_TOKENIZER")
    if path:
        return Path(path)
    if CACHE.is_file():
        return CACHE
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "-q",
                "-d",
                tmp,
                ANTHROPIC_WHEEL,
            ],
            check=True,
        )
        (wheel,) = Path(tmp).glob("anthropic-*.whl")
        with zipfile.ZipFile(wheel) as z:
            data = z.read("anthropic/tokenizer.json")
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_bytes(data)
    return CACHE


def texts() -> list[tuple[str, str]]:
    """(sample name, text): each sample whole, then each of its sentences."""
    out = []
    for name, text in SAMPLES.items():
        out.append((name, text))
        out += [(f"{name}/s", s.strip()) for s in SENTENCE.split(text) if s.strip()]
    return out


def fit(measured: list[tuple[str, int, int, float]]) -> ScriptScale:
    """The smallest factors (by a fixed greedy order) with every estimate >= its need.

    ``measured``: (text, o200k count, worst other count, margin) of each text fitted to; a
    text needs its worst count times 1 + margin, less :data:`PER_TEXT`. The ASCII share
    comes from the ASCII-only texts; then, as long as some text's estimate is short, its
    shortfall is added to the surcharge of the class with most of its characters. Classes no
    text is mostly made of get the largest surcharge found (no measurement: the most any
    measured class needed)."""
    need = {text: worst * (1 + margin) - PER_TEXT for text, _, worst, margin in measured}
    ascii_share = max(need[t] / raw for t, raw, _, _ in measured if t.isascii() and raw)
    ascii_share = max(ascii_share, 1.0)
    ascii_share = math.ceil(ascii_share * 100) / 100
    weights = [0.0] * len(SCRIPT_CLASSES)
    fitted = [False] * len(SCRIPT_CLASSES)
    for _ in range(100):
        short = False
        for text, raw, _, _ in measured:
            chars = script_chars(text)
            have = ascii_share * raw + sum(w * n for w, n in zip(weights, chars, strict=True))
            top = max(range(len(chars)), key=chars.__getitem__)
            if chars[top]:
                fitted[top] = True
            if need[text] > have + 1e-9 and chars[top]:
                weights[top] += (need[text] - have) / chars[top]
                short = True
        if not short:
            break
    most = max(weights)
    weights = [w if done else most for w, done in zip(weights, fitted, strict=True)]
    weights = [math.ceil(w * 100) / 100 for w in weights]
    return ScriptScale(
        ascii=round(ascii_share * 1000),
        surcharges=tuple(round(w * 1000) for w in weights),
        per_text=PER_TEXT,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claude-tokenizer", help="path of Claude's tokenizer.json")
    args = ap.parse_args(argv)
    from tokenizers import Tokenizer  # the benchmark's extra (pip install tokenizers)

    claude = Tokenizer.from_file(str(claude_tokenizer_path(args.claude_tokenizer)))
    o200k, cl100k = get_encoding("o200k_base"), get_encoding("cl100k_base")
    counts: dict[str, Callable[[str], int]] = {
        "o200k": lambda t: len(o200k.encode_ordinary(t)),
        "claude": lambda t: len(claude.encode(t, add_special_tokens=False).ids),
        "cl100k": lambda t: len(cl100k.encode_ordinary(t)),
    }
    measured, short = [], []
    for name, text in texts():
        raw = counts["o200k"](text)
        worst = max(counts["claude"](text), counts["cl100k"](text))
        if "/" not in name:
            measured.append((text, raw, worst, MARGIN))  # a whole sample: with the margin
        elif raw >= MIN_TOKENS:
            measured.append((text, raw, worst, 0.0))  # a sentence: at least its count
        else:
            short.append((text, raw, worst, 0.0))
    derived = fit(measured)

    print("| sample | chars | o200k | Claude | cl100k | Claude/o200k | cl100k/o200k | ", end="")
    print("worst sentence Claude/o200k | estimate | estimate/worst |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, text in SAMPLES.items():
        raw, cl, c1 = (counts[k](text) for k in ("o200k", "claude", "cl100k"))
        sentences = [s.strip() for s in SENTENCE.split(text) if s.strip()]
        worst_sentence = max(
            (counts["claude"](s) / counts["o200k"](s) for s in sentences if counts["o200k"](s)),
            default=0.0,
        )
        est = SCRIPT_SCALE.estimate(text, raw)
        print(
            f"| {name} | {len(text)} | {raw} | {cl} | {c1} | {cl / raw:.2f} | {c1 / raw:.2f} "
            f"| {worst_sentence:.2f} | {est} | {est / max(cl, c1):.2f} |"
        )
    print()
    print(f"factors fitted to {len(measured)} texts (margin {MARGIN:.0%}):")
    print(f"  ascii share of an o200k token: {derived.ascii / 1000:.2f}")
    print("| class | code points | surcharge per char (derived) | in compiler/_base/tokens.py |")
    print("|---|---|---:|---:|")
    for (cls, span), new, now in zip(
        SCRIPT_CLASSES, derived.surcharges, SCRIPT_SCALE.surcharges, strict=True
    ):
        print(f"| {cls} | {span} | {new / 1000:.2f} | {now / 1000:.2f} |")
    print(f"\nas the literal: {derived!r}")
    bad = [
        (t[:40], worst, SCRIPT_SCALE.estimate(t, raw))
        for t, raw, worst, margin in measured
        if SCRIPT_SCALE.estimate(t, raw) < worst * (1 + margin)
    ]
    under = [
        (t[:40], worst, SCRIPT_SCALE.estimate(t, raw))
        for t, raw, worst, _ in [*measured, *short]
        if SCRIPT_SCALE.estimate(t, raw) < worst
    ]
    print(f"texts fitted to that the factors in compiler/_base/tokens.py fall short of: {len(bad)}")
    for row in bad:
        print("  ", row)
    print(f"texts (short sentences too) they under-count: {len(under)}")
    for row in under:
        print("  ", row)
    return 1 if under else 0


if __name__ == "__main__":
    sys.exit(main())
