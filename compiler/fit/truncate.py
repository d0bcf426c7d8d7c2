"""Token-exact truncation of text: keep the head, the tail, or both around an elision marker.

Internal: the API is :mod:`compiler.fit`.

The result never counts more than the target (as the encoding counts it on its own) and, when
anything was cut, usually exactly the target: the text is encoded once, cut on token
boundaries, decoded (a split UTF-8 character at a cut is dropped), then re-counted and
shortened until it fits (re-encoding can merge differently at the seams).

``plain`` truncation (a roleplay prompt: a preset compile) never cuts inside a word and
marks the cut with a bare ``…``, never ``[... N tokens cut ...]``. :func:`fit_sentences`
keeps whole sentences (a summary is never a fragment cut mid-word).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from compiler._base.tokens import TokenCounter

#: How far back (in characters) a cut looks for a word boundary; a "word" longer than this
#: (a hash, base64) is cut where it is.
MAX_WORD = 200
ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"(?<=[.!?。！？…])\s+|\n+")


def _wordy(ch: str) -> bool:
    """A character inside a word: letters and digits, but not CJK ideographs or kana, which
    are words of their own (any cut between two of them is a word boundary)."""
    return ch.isalnum() and unicodedata.east_asian_width(ch) not in "WF"


def _boundary(text: str, p: int) -> bool:
    return p <= 0 or p >= len(text) or not (_wordy(text[p - 1]) and _wordy(text[p]))


def snap_back(text: str, p: int) -> int:
    """``p``, or the nearest word boundary before it (at most :data:`MAX_WORD` back)."""
    q = p
    while q > 0 and p - q < MAX_WORD and not _boundary(text, q):
        q -= 1
    return q if _boundary(text, q) else p


def snap_forward(text: str, p: int) -> int:
    """``p``, or the nearest word boundary after it (at most :data:`MAX_WORD` on)."""
    q = p
    while q < len(text) and q - p < MAX_WORD and not _boundary(text, q):
        q += 1
    return q if _boundary(text, q) else p


def fit_sentences(text: str, target: int, counter: TokenCounter) -> str:
    """The longest run of whole sentences (or lines) that ``text`` starts with, within
    ``target`` tokens; when not even the first fits, its longest head of whole words with
    ``…``; "" when not even a word fits. Never cut inside a word, never a token marker."""
    text = text.strip()
    if target <= 0 or not text:
        return ""
    if counter.count(text) <= target:
        return text
    ends = [m.start() for m in _SENTENCE_END.finditer(text)]
    lo, hi = 0, len(ends)  # the number of whole sentences kept: binary search
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.count(text[: ends[mid - 1]]) <= target:
            lo = mid
        else:
            hi = mid - 1
    if lo:
        return text[: ends[lo - 1]].rstrip()
    first = text[: ends[0]] if ends else text
    return _word_head(first, target, counter)


def _word_head(text: str, target: int, counter: TokenCounter) -> str:
    """The longest head of whole words of ``text`` with ``…`` within ``target`` ("": none)."""
    room = target - counter.count(ELLIPSIS)
    for step in range(64):  # a bound on the work: a retry is rare, and shrinks further
        if room <= 0:
            break
        cut = truncate_text(text, room, counter, "head", marked=False)
        end = snap_back(text, len(cut)) if len(cut) < len(text) else len(cut)
        head = text[:end].rstrip()
        if not head or not _boundary(text, end):
            return ""
        out = head + ELLIPSIS
        over = counter.count(out) - target
        if over <= 0:
            return out
        room -= max(over, step)
    return ""


Keep = Literal["head", "tail", "head_tail"]
"""What a truncation keeps: the head, the tail, or both around the elision marker."""


def marker(cut: int) -> str:
    """The elision marker that stands where ``cut`` tokens were removed."""
    return f"[... {cut} tokens cut ...]"


def _join(mode: Keep, head: str, tail: str, cut: int) -> str:
    if mode == "head":
        return f"{head}\n{marker(cut)}"
    if mode == "tail":
        return f"{marker(cut)}\n{tail}"
    return f"{head}\n{marker(cut)}\n{tail}"


def truncate_text(
    text: str,
    target: int,
    counter: TokenCounter,
    mode: Keep = "head",
    *,
    plain: bool = False,
    marked: bool = True,
) -> str:
    """``text`` cut to at most ``target`` tokens (unchanged when it fits; "" when target < 1).

    ``plain``: cut only between words and mark the cut with ``…`` (see the module
    docstring). ``marked=False``: the bare head or tail, with no marker at all.
    """
    if target <= 0:
        return ""
    if counter.count(text) <= target:
        return text
    if plain:
        return _plain(text, target, counter, mode)
    tokens = counter.encode(text)
    n = len(tokens)
    enc = counter.encoding
    overhead = counter.count(_join(mode, "", "", n)) + (1 if mode == "head_tail" else 0)
    body = target - overhead if marked else 0
    if body <= 0:  # no room for a marker (or none wanted): the bare head (or tail)
        keep = target
        while keep > 0:
            part = tokens[:keep] if mode != "tail" else tokens[n - keep :]
            out = enc.decode_bytes(part).decode("utf-8", errors="ignore")
            if counter.count(out) <= target:
                return out
            keep -= counter.count(out) - target
        return ""
    while body > 0:
        h = body if mode == "head" else 0 if mode == "tail" else (body + 1) // 2
        t = body - h
        head = enc.decode_bytes(tokens[:h]).decode("utf-8", errors="ignore") if h else ""
        tail = enc.decode_bytes(tokens[n - t :]).decode("utf-8", errors="ignore") if t else ""
        out = _join(mode, head, tail, n - h - t)
        over = counter.count(out) - target
        if over <= 0:
            return out
        body -= over
    return ""


def _plain(text: str, target: int, counter: TokenCounter, mode: Keep) -> str:
    """Head, tail or both, cut between words, the cut marked with a bare ``…``."""
    budget = target - counter.count(ELLIPSIS) - (2 if mode == "head_tail" else 1)
    for step in range(64):  # a bound on the work: a retry is rare, and shrinks further
        if budget <= 0:
            break
        h = budget if mode == "head" else 0 if mode == "tail" else (budget + 1) // 2
        head = tail = ""
        if h:
            cut = truncate_text(text, h, counter, "head", marked=False)
            head = text[: snap_back(text, len(cut))].rstrip()
        if budget - h:
            cut = truncate_text(text, budget - h, counter, "tail", marked=False)
            tail = text[snap_forward(text, len(text) - len(cut)) :].lstrip()
        if mode == "head":
            out = f"{head} {ELLIPSIS}" if head else ""
        elif mode == "tail":
            out = f"{ELLIPSIS} {tail}" if tail else ""
        else:
            out = f"{head}\n{ELLIPSIS}\n{tail}".strip("\n")
        over = counter.count(out) - target
        if over <= 0:  # fits; a bare ellipsis (no whole word fitted) is nothing
            return out if out.strip(ELLIPSIS + " \n") else ""
        budget -= max(over, step, 1)
    return ""
