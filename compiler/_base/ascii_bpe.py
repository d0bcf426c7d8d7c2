"""Exact token counts of ASCII text without building tiktoken's encoder.

Internal: :class:`compiler._base.tokens.TokenCounter` counts ASCII text here until it has
counted enough to make tiktoken's encoder worth building.

Building tiktoken's encoder (its Rust ``CoreBPE``) from the 200,000 ranks of o200k_base takes
more than a tenth of a second, longer than the rest of a small compile. Text made only of
ASCII characters needs neither that encoder nor the ranks of any non-ASCII token: this
module splits it with each encoding's own pre-tokenizer pattern, written for ASCII
(:data:`ASCII_PATTERNS`: the same alternatives, in the same order, with each Unicode class
replaced by its ASCII members: ``\\p{L}`` by ``A-Za-z``, ``\\p{Lu}`` by ``A-Z``, ``\\p{Ll}`` by
``a-z``, ``\\p{N}`` by ``0-9``, ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}`` and ``\\p{M}`` by nothing,
``\\s`` by the six ASCII White_Space characters, ``$`` by ``\\Z``), and merges each piece as
tiktoken's ``byte_pair_merge`` does (:func:`merge_count`). The counts are tiktoken's, which
tests check on the corpus and on generated ASCII text over every character class; text with
any other character is tiktoken's to count.
"""

from __future__ import annotations

import re
import threading

from compiler._base.rank_table import RankLookup

_WS = "\\t\\n\\x0b\\x0c\\r "  # \s of tiktoken's (Rust) regex in ASCII: Unicode White_Space
_CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
_O200K = "|".join(
    [
        f"[^\\r\\nA-Za-z0-9]?[A-Z]*[a-z]+{_CONTRACTIONS}",
        f"[^\\r\\nA-Za-z0-9]?[A-Z]+[a-z]*{_CONTRACTIONS}",
        "[0-9]{1,3}",
        f" ?[^{_WS}A-Za-z0-9]+[\\r\\n/]*",
        f"[{_WS}]*[\\r\\n]+",
        f"[{_WS}]+(?![^{_WS}])",
        f"[{_WS}]+",
    ]
)
_CL100K = "|".join(
    [
        "'(?i:[sdmt]|ll|ve|re)",
        "[^\\r\\nA-Za-z0-9]?+[A-Za-z]++",
        "[0-9]{1,3}+",
        f" ?[^{_WS}A-Za-z0-9]++[\\r\\n]*+",
        f"[{_WS}]++\\Z",
        f"[{_WS}]*[\\r\\n]",
        f"[{_WS}]+(?![^{_WS}])",
        f"[{_WS}]",
    ]
)
ASCII_PATTERNS = {"o200k_base": _O200K, "o200k_harmony": _O200K, "cl100k_base": _CL100K}
"""Each encoding's pre-tokenizer pattern as it matches ASCII text (see the module docstring)."""

_NONE = 1 << 62  # the rank of a pair that is no token (tiktoken's Rank::MAX)
MAX_PIECES = 100_000  # distinct pieces a counter remembers, then it starts over
MAX_MERGED = 64
"""The longest piece merged here: each merge scans the piece's pairs, so a piece of n bytes
takes n² steps (2 us a byte at 64 bytes, 8.5 at 1,000; a 250,000-letter word, hours); a
text with a longer piece that is no token is tiktoken's."""


def merge_count(piece: bytes, ranks: RankLookup) -> int:
    """The tokens of ``piece`` (a pre-tokenizer piece that is no token itself), merged as
    tiktoken's ``byte_pair_merge`` merges it: the adjacent pair of least rank first (the
    leftmost of equal ones), until no adjacent pair is a token."""
    get = ranks.get
    starts = list(range(len(piece) + 1))
    pair = [get(piece[i : i + 2], _NONE) for i in range(len(piece) - 1)] + [_NONE, _NONE]
    while True:
        least = min(pair[:-1])
        if least == _NONE:
            return len(starts) - 1
        i = pair.index(least)
        # the pairs around the merged part, looked up before the part after it is dropped
        if i > 0:
            pair[i - 1] = get(piece[starts[i - 1] : starts[i + 2]], _NONE)
        pair[i] = get(piece[starts[i] : starts[i + 3]], _NONE) if i + 3 < len(starts) else _NONE
        del starts[i + 1], pair[i + 1]


class AsciiCounter:
    """Counts ASCII text for one encoding from its ASCII ranks (tiktoken's counts)."""

    def __init__(self, encoding: str, ranks: RankLookup) -> None:
        self._split = re.compile(ASCII_PATTERNS[encoding]).findall
        self._ranks = ranks
        self._pieces: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, text: str) -> int | None:
        """The tokens of ``text``, which must be ASCII (:meth:`str.isascii`); None when it
        has a piece longer than :data:`MAX_MERGED` that is no token (count it with tiktoken)."""
        pieces = self._pieces
        get = pieces.get
        total = 0
        for piece in self._split(text):
            n = get(piece)
            if n is None:
                if len(piece) > MAX_MERGED:
                    return None
                data = piece.encode("ascii")
                n = 1 if data in self._ranks else merge_count(data, self._ranks)
                with self._lock:
                    if len(pieces) >= MAX_PIECES:
                        pieces.clear()
                    pieces[piece] = n
            total += n
        return total
