"""Ranks looked up where they lie in the rank cache: nothing is built to read them.

Internal: the ASCII part of a rank cache file (:mod:`compiler._base.ranks`) is written by
:func:`flatten` and read by :class:`FlatRanks`, for :mod:`compiler._base.ascii_bpe`.

Turning 128,000 cached tokens into a dict takes 30-40 ms, a third of a process that only
imports pydantic, lark and tiktoken, to count a text that looks up a few hundred of them.
So the ASCII ranks are stored as an open-addressing hash table of 32-bit integers: every
token's bytes one after another (``blob``), where each starts (``offsets``), its rank
(``ranks``), and a table of twice as many slots as tokens whose slot
``crc32(token) & (slots - 1)``, or the next free one after it, holds the token's index plus
one (0: empty). Reading it is casting the file's bytes; a lookup hashes the key once and
compares a slot's token or two.
"""

from __future__ import annotations

import sys
from array import array
from typing import Protocol
from zlib import crc32

#: what the table's layout depends on besides this module (checked before a cache is read)
LAYOUT = f"{sys.byteorder}-{array('I').itemsize}".encode()
_HEAD = 16  # four 32-bit integers: tokens, slots, blob bytes, 0


class RankLookup(Protocol):
    """What counting reads of ranks: a dict of them, or a :class:`FlatRanks`."""

    def get(self, key: bytes, default: int, /) -> int: ...

    def __contains__(self, key: object, /) -> bool: ...


def flatten(ranks: dict[bytes, int]) -> bytes:
    """``ranks`` as the table :class:`FlatRanks` reads (see the module docstring); the
    reader allows up to 3 bytes of padding after it."""
    tokens = list(ranks)
    slots = 1 << max(1, (2 * len(tokens) - 1).bit_length())
    mask = slots - 1
    table = array("I", bytes(4 * slots))
    for index, token in enumerate(tokens):
        slot = crc32(token) & mask
        while table[slot]:
            slot = (slot + 1) & mask
        table[slot] = index + 1
    offsets = array("I", [0])
    for token in tokens:
        offsets.append(offsets[-1] + len(token))
    blob = b"".join(tokens)
    head = array("I", [len(tokens), slots, len(blob), 0])
    values = array("I", ranks.values())
    return b"".join(x.tobytes() for x in (head, offsets, values, table)) + blob


class FlatRanks:
    """The ranks of a table :func:`flatten` wrote, looked up in place."""

    def __init__(self, data: memoryview) -> None:
        """``data``: what :func:`flatten` returned (its integrity checked by the caller).
        Raises ValueError when its sizes do not add up."""
        count, slots, size, _ = data[:_HEAD].cast("I")
        ends = [_HEAD + 4 * (count + 1)]
        ends += [ends[-1] + 4 * count, ends[-1] + 4 * count + 4 * slots]
        if slots & (slots - 1) or slots < 2 * count or len(data) - ends[2] - size not in range(4):
            raise ValueError("a rank table whose sizes do not add up")  # (after 0-3 bytes of pad)
        self._offsets = data[_HEAD : ends[0]].cast("I")
        self._ranks = data[ends[0] : ends[1]].cast("I")
        self._table = data[ends[1] : ends[2]].cast("I")
        self._blob = bytes(data[ends[2] : ends[2] + size])
        self._mask = slots - 1

    def _index(self, key: bytes) -> int:
        """The index of ``key`` among the tokens, or -1."""
        table, offsets, blob, mask = self._table, self._offsets, self._blob, self._mask
        slot = crc32(key) & mask
        while entry := table[slot]:
            index = entry - 1
            if blob[offsets[index] : offsets[index + 1]] == key:
                return index
            slot = (slot + 1) & mask
        return -1

    def get(self, key: bytes, default: int, /) -> int:
        index = self._index(key)
        return default if index < 0 else int(self._ranks[index])

    def __contains__(self, key: object, /) -> bool:
        return isinstance(key, bytes) and self._index(key) >= 0

    def __len__(self) -> int:
        return len(self._ranks)
