"""Which prefixes of a chat a replay compiles, the per-turn compile, and prefix stability.

Internal: the API is :func:`compiler.bench`.

A turn is a request a runtime would send: the first ``k`` messages of the chat, when the
model is to speak next. So a prefix whose last message is an assistant message is not a
turn (the reply is already there; SillyTavern's "continue" is not replayed), and neither is
a prefix that ends inside a run of tool results (the call is not fully answered yet).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compiler._driver.api import CompileResult
from compiler._driver.options import CompileOptions
from compiler._driver.session import Session
from compiler.errors import ContextError
from compiler.inputs.read import is_file
from compiler.inputs.run import ChatMessageIn, RunContext

TurnCompiler = Callable[[RunContext], CompileResult]
"""One turn's compile: the run context holding the turn's messages -> the result."""
CompilerFactory = Callable[[CompileOptions], TurnCompiler]
"""Makes the per-turn compile of one replay (one set of options), e.g. a compile session's
``compile`` method; :func:`sessions` is the default."""

#: The request keys that hold the conversation, serialized last (see :func:`request_bytes`).
CONVERSATION = ("messages", "input", "contents")


def request_turns(messages: Sequence[ChatMessageIn]) -> list[int]:
    """The turns of a chat, each as its number of messages (see the module docstring)."""
    n = len(messages)
    return [
        k
        for k in range(1, n + 1)
        if messages[k - 1].role != "assistant" and (k == n or messages[k].role != "tool")
    ]


def thin(turns: list[int], every: int = 1, last: int | None = None) -> list[int]:
    """Every ``every``-th turn counted back from the last one (which is always kept), then
    only the last ``last`` of those."""
    picked = turns[::-1][::every][::-1]
    return picked[-last:] if last is not None else picked


def sessions(source: str | os.PathLike[str]) -> CompilerFactory:
    """The per-turn compile of a runtime: one :class:`compiler.Session` per run over the
    file ``source`` (``.json``: a preset), compiling turn after turn with its caches."""
    path = Path(source)
    if not is_file(path):
        raise ContextError(
            code="context.file_not_found",
            message=f"no template or preset file: {str(source)[:200]!r}",
        )

    def make(options: CompileOptions) -> TurnCompiler:
        return Session(path, options=options).compile

    return make


def request_bytes(request: Mapping[str, Any]) -> bytes:
    """The request as compact JSON (UTF-8), its conversation last: the order providers build
    their cached prefix in (tools and system first, then the messages), so the measure does
    not depend on where a dialect happens to put ``tools`` in the body."""
    head = {k: v for k, v in request.items() if k not in CONVERSATION}
    tail = {k: request[k] for k in CONVERSATION if k in request}
    text = json.dumps({**head, **tail}, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (a binary search over
    slice comparisons: C speed, no byte-by-byte Python loop)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def prefix_shares(previous: bytes | None, current: bytes) -> tuple[float, float] | None:
    """How much of a request the next one keeps byte for byte from the start: the share of
    ``previous`` it keeps (the prefix stability: 1.0 when the new request only appends), and
    the share of ``current`` that is that prefix (what a provider's prompt cache can serve).
    None without a previous request."""
    if previous is None or not previous or not current:
        return None
    common = common_prefix(previous, current)
    return common / len(previous), common / len(current)
