"""The bodies of the turn protocol (``/v1/sessions``): a session started whole, then turns that
send only what changed.

Internal: the interface is the HTTP API of ``apc serve`` (docs: "apc serve", "Turns").
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from compiler.serve.models import JSONObject, OptionsIn, SourceIn, _In, _Out

SESSION_ID = r"^[A-Za-z0-9._~-]{1,128}$"
"""A session id: URL-safe characters (a chat's id, a UUID), at most 128."""
DIGEST = r"^sha256:[0-9a-f]{64}$"
MAX_COUNT = 2**31


def _addressable(sid: str) -> str:
    """``.`` and ``..`` are path segments a URL resolves away: no turn could reach them."""
    if sid in {".", ".."}:
        raise ValueError("a session id is not '.' or '..' (no URL could name it)")
    return sid


SessionId = Annotated[
    str, Field(pattern=SESSION_ID, min_length=1, max_length=128), AfterValidator(_addressable)
]


class SessionIn(SourceIn):
    """``POST /v1/sessions``: a session started (or restarted) whole: the source, the options
    and the run context, its ``chat`` a list of messages (the messages the session holds from
    now on). ``session``: the id to keep it under (the client's: a chat's id, a UUID); none:
    the server issues one. A session already under that id is replaced."""

    session: SessionId | None = None
    context: JSONObject | None = None


class BaseIn(_In):
    """What the client believes the session holds: its message count and digest (as the last
    answer's ``apc-session-count`` and ``apc-session-digest`` headers said)."""

    count: int = Field(ge=0, le=MAX_COUNT)
    digest: str = Field(pattern=DIGEST)


class TurnIn(_In):
    """``POST /v1/sessions/{id}/turns``: one turn. ``base``: the state it applies to (else 409
    ``serve.turn_out_of_step``); ``replaceFrom``: the messages from this index on are
    dropped first (an edit, a deletion, a regenerated answer; at most ``base.count``);
    ``append``: the messages added at the end; ``context``: top-level fields of the run
    context replaced (a field null: removed; not ``chat``); ``options``: the options
    replaced whole (the next compile is cold)."""

    base: BaseIn
    replace_from: int | None = Field(default=None, ge=0, le=MAX_COUNT)
    append: list[Any] = Field(default=[])
    context: JSONObject | None = None
    options: OptionsIn | None = None


class SessionOut(_Out):
    """A session's state: its id, how many messages it holds and their digest."""

    session: str
    count: int
    digest: str
