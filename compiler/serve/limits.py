"""The service's configuration: where it listens, what it may read, and its bounds.

Internal: set by ``apc serve``'s options (docs: "apc serve").
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from compiler.profile import PROFILES_DIR

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body (``serve.body_too_large``, 413, above it)."""
MAX_CONTEXT_BYTES = 24 * 1024 * 1024
"""The largest inline run context, as compact JSON (``serve.context_too_large``, 413)."""
COMPILE_TIMEOUT = 10.0
"""Seconds a request may wait for and run its compile (``serve.compile_timeout``, 503)."""
MAX_SESSIONS = 64
"""Compile sessions kept (least recently used dropped first)."""
WORKERS = 4
"""Threads that compile; requests beyond them wait their turn (within the timeout)."""
MAX_PENDING = 256
"""Requests compiling or waiting at once; beyond it ``serve.busy`` (503) at once."""
MAX_SESSION_BYTES = 1024 * 1024 * 1024
"""The memory the sessions kept may take together, by :func:`session_bytes` (an upper
bound): the least recently used are dropped first; a session over it alone is not kept."""
SOURCE_BYTES_PER_CHAR = 192
"""Bytes a parsed source is counted per character of its text: it keeps at most 73 (a
template of nothing but ``<<agent.file "">>``; 14 to 28 for presets, 1 to 2 for text), but
parsing it peaks at 126 and the process's RSS keeps 131 after it."""
CONTEXT_BYTES_PER_BYTE = 32
"""Bytes a session's memo of its last turn (the chat it checked, kept to make the next turn
warm) and that turn's caches are counted per byte of the body it came in: measured at most
18 (a chat of one-character messages; 1 to 2 for ordinary chats)."""
COUNTED_BYTES_PER_CHAR = 4
COUNTED_BYTES_PER_TEXT = 160
"""Bytes a token counter's cache is counted per character and per text it remembers (a
text's string, at most 4 bytes a character, and its dictionary entry)."""
SESSION_BYTES = 256 * 1024
"""Bytes every session is counted beside its source and caches (its options, its objects)."""
SESSION_IDLE_SECONDS = 1800.0
"""Seconds a session may go unused before it is dropped (its next turn is then a 404)."""
HELD_BYTES_PER_MESSAGE = 512
HELD_BYTES_PER_BYTE = 4
"""Bytes a turn session's chat is counted per message and per byte of the message as
compact JSON: its copy of each message (a dict: ~200 bytes), the digest of each prefix (~75)
and the session's memo of it, and its texts (at most 4 bytes a character, and a character
is at least one byte of JSON). Measured: 326 bytes a message for a chat of one-character
messages, 2.6 bytes a JSON byte (563 a message) for ordinary ones."""


def session_bytes(source_chars: int, context_bytes: int, cached: tuple[int, int]) -> int:
    """An upper bound of the memory a session keeps: its parsed source of ``source_chars``
    characters, the last turn's run context of ``context_bytes`` bytes of request body, and
    its token counters' caches of ``cached`` (texts, characters)."""
    return (
        SESSION_BYTES
        + SOURCE_BYTES_PER_CHAR * source_chars
        + CONTEXT_BYTES_PER_BYTE * context_bytes
        + COUNTED_BYTES_PER_TEXT * cached[0]
        + COUNTED_BYTES_PER_CHAR * cached[1]
    )


def turn_session_bytes(
    source_chars: int, messages: int, chat_bytes: int, rest_bytes: int, cached: tuple[int, int]
) -> int:
    """An upper bound of the memory a turn session keeps: :func:`session_bytes` of its source,
    its run context without the chat (``rest_bytes`` of compact JSON, weighed as a body) and
    its caches, and its chat of ``messages`` messages, ``chat_bytes`` of compact JSON."""
    return (
        session_bytes(source_chars, rest_bytes, cached)
        + HELD_BYTES_PER_MESSAGE * messages
        + HELD_BYTES_PER_BYTE * chat_bytes
    )


QUICK_TURN_SECONDS = 0.005
"""A turn runs on the event loop, without the hand-off to a worker thread, when its
session's last compile (a failed one too) took at most this much CPU time and ran no
regular expression a message's text could make slow (world info keys, regex scripts), it
changes only the chat (new options are a cold compile, a new context may bring such work),
its body is at most :data:`QUICK_TURN_BYTES` and no compile is running or waiting in the
workers (which it would hold back): the loop is held about that long, as long as it takes
to parse a body of 64 KiB."""
QUICK_TURN_BYTES = 64 * 1024
"""The largest body of a turn that may run on the event loop (:data:`QUICK_TURN_SECONDS`)."""
MAX_HELD_BODIES = 16
"""The bodies of the requests in flight, together, are at most this many times the body
limit (``serve.busy``, 503, past it)."""
MAX_CONNECTIONS = 512
"""Connections admitted at once (``serve.busy``, 503, past it; ``/healthz`` still answered)."""
MAX_CLIENT_CONNECTIONS = 64
"""Connections admitted at once from one address (``serve.too_many_connections``, 429)."""
HEADER_SECONDS = 10.0
"""Seconds a request's line and headers may take to arrive (``serve.slow_request``, 408)."""
BODY_SECONDS = 60.0
"""Seconds a request's body may take to arrive once its headers have (``serve.slow_request``)."""
DRAIN_SECONDS = 5.0
"""On SIGTERM: seconds in-flight requests get to finish before the process exits."""


@dataclass(frozen=True)
class ServeConfig:
    """Everything ``apc serve`` was told. ``roots`` are the directories requests may name
    files under (none: inline inputs only); ``data_root`` holds the profile registry."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    roots: tuple[Path, ...] = ()
    data_root: Path | None = None
    token: str | None = field(default=None, repr=False)
    max_body_bytes: int = MAX_BODY_BYTES
    max_context_bytes: int = MAX_CONTEXT_BYTES
    compile_timeout: float = COMPILE_TIMEOUT
    max_sessions: int = MAX_SESSIONS
    max_session_bytes: int = MAX_SESSION_BYTES
    session_idle: float = SESSION_IDLE_SECONDS
    workers: int = WORKERS
    max_pending: int = MAX_PENDING
    max_connections: int = MAX_CONNECTIONS
    max_client_connections: int = MAX_CLIENT_CONNECTIONS
    header_seconds: float = HEADER_SECONDS
    body_seconds: float = BODY_SECONDS
    drain_seconds: float = DRAIN_SECONDS

    @property
    def max_held_bytes(self) -> int:
        """The bytes of bodies all requests in flight may hold together."""
        return MAX_HELD_BODIES * self.max_body_bytes

    @property
    def read_roots(self) -> tuple[Path, ...]:
        """The directories compiles may read under: the roots, and the profile registry's
        directory (not the whole data root, which holds the user's chats and secrets)."""
        registry = () if self.data_root is None else (self.data_root / PROFILES_DIR,)
        return self.roots + registry

    def problem(self) -> str | None:
        """Why this configuration is refused (a usage error), or None."""
        if not is_loopback(self.host) and not self.token:
            return f"--host {self.host} is not a loopback address: it requires --token"
        if self.token is not None and len(self.token) < 16:
            return "--token must be at least 16 characters"
        if self.token is not None and not _header_safe(self.token):
            return "--token must be printable ASCII without spaces at its ends (an HTTP header)"
        for name, value in (
            ("--max-body-bytes", self.max_body_bytes),
            ("--max-sessions", self.max_sessions),
            ("--max-session-bytes", self.max_session_bytes),
            ("--workers", self.workers),
            ("--max-connections", self.max_connections),
            ("--max-client-connections", self.max_client_connections),
        ):
            if value < 1:
                return f"{name} must be at least 1"
        for name, seconds in (
            ("--timeout", self.compile_timeout),
            ("--header-timeout", self.header_seconds),
            ("--body-timeout", self.body_seconds),
        ):
            if not 0 < seconds <= 3600:
                return f"{name} must be between 0 and 3600 seconds"
        if not 0 < self.session_idle <= 7 * 24 * 3600:
            return "--session-idle must be between 0 and 604800 seconds (a week)"
        if not 1 <= self.port <= 65535:
            return "--port must be between 1 and 65535"
        return None


def _header_safe(token: str) -> bool:
    """Whether ``token`` reaches the server intact in ``Authorization: Bearer TOKEN``."""
    return token.isascii() and token.isprintable() and token == token.strip()


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (``localhost``, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
