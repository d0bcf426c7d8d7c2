"""Token-exact truncation of text: keep the head, the tail, or both around an elision marker.

Internal: the API is :mod:`compiler.fit`.

The result never counts more than the target (as the encoding counts it on its own) and, when
anything was cut, usually exactly the target: the text is encoded once, cut on token
boundaries, decoded (a split UTF-8 character at a cut is dropped), then re-counted and
shortened until it fits (re-encoding can merge differently at the seams).
"""

from __future__ import annotations

from typing import Literal

from compiler.tokens import TokenCounter

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


def truncate_text(text: str, target: int, counter: TokenCounter, mode: Keep = "head") -> str:
    """``text`` cut to at most ``target`` tokens (unchanged when it fits; "" when target < 1)."""
    if target <= 0:
        return ""
    if counter.count(text) <= target:
        return text
    tokens = counter.encode(text)
    n = len(tokens)
    enc = counter.encoding
    overhead = counter.count(_join(mode, "", "", n)) + (1 if mode == "head_tail" else 0)
    body = target - overhead
    if body <= 0:  # no room for a marker: the bare head (or tail)
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
