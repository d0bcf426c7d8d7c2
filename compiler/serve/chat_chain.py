"""The chat a turn session holds, with a running digest of every prefix of it.

Internal: :mod:`compiler.serve.turns` keeps one per session (docs: "apc serve", "Turns").

The digest of a chat is a chain over its messages: the digest of no messages is the SHA-256
of the empty string, and the digest of ``n + 1`` messages is the SHA-256 of the digest of
the first ``n`` (32 bytes) followed by the canonical JSON of message ``n`` (:func:`canonical`).
An append costs a hash of the new messages only; dropping the messages from index ``k`` on
goes back to the digest of the first ``k``, kept for every prefix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from compiler import ChatLog

EMPTY = hashlib.sha256(b"").digest()
"""The digest of a chat of no messages."""
PREFIX = "sha256:"

_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode
_FLAT = frozenset({str, type(None)})


def canonical(message: Any) -> bytes:
    """``message`` as canonical JSON, UTF-8: no whitespace, object keys sorted (by code
    point), non-ASCII characters as themselves, ``"`` ``\\`` and control characters escaped
    (``\\n``, ``\\t``, ... else ``\\u00XX``, lowercase hex); numbers as Python's ``json``
    writes them (for integers, and for messages of text, the same as RFC 8785)."""
    if type(message) is dict and _FLAT.issuperset(map(type, message.values())):
        try:  # text and nulls: orjson writes exactly what json does, 5 times faster
            return orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # a key that is not text, a lone surrogate: json's own answer
            pass
    return _ENCODE(message).encode("utf-8", "surrogatepass")


def digest_text(raw: bytes) -> str:
    """A digest as the protocol writes it: ``sha256:`` and 64 lowercase hex digits."""
    return PREFIX + raw.hex()


class ChatChain:
    """The messages of a session (a :class:`compiler.ChatLog`, so that each compile checks
    only those appended or changed since the last) with the digest of each prefix and the
    size of each message as compact JSON. One writer at a time (the session's lock)."""

    __slots__ = ("_digests", "_payload", "_sizes", "log")

    def __init__(self) -> None:
        self.log = ChatLog()
        #: the digest of the first ``i`` messages, for every ``i`` up to their count
        self._digests: list[bytes] = [EMPTY]
        self._sizes: list[int] = []
        self._payload = 0  # the sum of _sizes

    def __len__(self) -> int:
        return len(self._sizes)

    @property
    def digest(self) -> str:
        """The digest of the messages held."""
        return digest_text(self._digests[-1])

    @property
    def json_bytes(self) -> int:
        """The size of the messages as a compact JSON array."""
        n = len(self._sizes)
        return self._payload + max(0, n - 1) + 2

    def extend(self, messages: Sequence[Any]) -> None:
        """Append ``messages`` (all or nothing)."""
        last = self._digests[-1]
        digests: list[bytes] = []
        sizes: list[int] = []
        sha256 = hashlib.sha256
        for message in messages:
            text = canonical(message)
            last = sha256(last + text).digest()
            digests.append(last)
            sizes.append(len(text))
        self.log.extend(messages)
        self._digests += digests
        self._sizes += sizes
        self._payload += sum(sizes)

    def truncate(self, count: int) -> list[Any]:
        """Keep the first ``count`` messages; the ones dropped (copies)."""
        if count >= len(self._sizes):
            return []
        dropped = self.log[count:]
        del self.log[count:]
        self._payload -= sum(self._sizes[count:])
        del self._sizes[count:]
        del self._digests[count + 1 :]
        return dropped

    def apply(self, start: int, messages: Sequence[Any]) -> Callable[[], None]:
        """Drop the messages from index ``start`` on, then append ``messages``; what undoes
        it (the chat as it was, digests included)."""
        dropped = self.truncate(start)
        try:
            self.extend(messages)
        except BaseException:
            self.extend(dropped)
            raise

        def undo() -> None:
            self.truncate(start)
            self.extend(dropped)

        return undo
