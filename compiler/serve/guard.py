"""The ASGI middleware in front of every route: bearer auth, then the body size limit.

Internal: used by :mod:`compiler.serve.app`.

With a token, every route but ``/healthz`` needs ``Authorization: Bearer TOKEN`` (compared
in constant time; ``serve.unauthorized``, 401). Without one (a loopback server), the
``Host`` header must name this machine as no DNS answer can (a loopback address,
``localhost`` or ``*.localhost``, with or without a final dot: :func:`local_name`; else
``serve.bad_host``, 400): a web page whose DNS name an attacker re-points at 127.0.0.1 (DNS
rebinding) would otherwise be same-origin with the server, and read what it compiles from
the roots. A single-label name (``myhost``) is refused too: a machine on the LAN that answers
single-label lookups (LLMNR, mDNS, a search domain) can re-point it the same way.

A body over the limit is refused with ``serve.body_too_large`` (413) as soon as its
``Content-Length`` says so, or once that many bytes have arrived: the body is read whole
(bounded) before a route sees it. The bodies of all requests in flight together are bounded
too (``serve.busy``, 503, past it), so many large requests at once cannot exhaust memory.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from compiler.errors import APCError
from compiler.serve.limits import is_loopback
from compiler.serve.replies import error_response

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz"})


def _unauthorized() -> APCError:
    return APCError(
        code="serve.unauthorized",
        message="this server needs a bearer token",
        hint="send 'Authorization: Bearer TOKEN' with the server's --token",
    )


def _bad_host(host: str) -> APCError:
    return APCError(
        code="serve.bad_host",
        message=f"this server answers only requests for this machine, not for {host[:100]!r}",
        hint="call it as http://127.0.0.1:PORT or http://localhost:PORT (a server with "
        "--token takes any Host; without one, not even this machine's own name)",
    )


def _host_name(host: str) -> str:
    """The name or address of a ``Host`` header, without its port."""
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def local_name(name: str) -> bool:
    """Whether a ``Host`` names this machine as no resolver answer can: a loopback address,
    ``localhost`` or ``*.localhost`` (RFC 6761: resolved to loopback, never asked of DNS),
    each with or without its final dot (the fully qualified form of the same name)."""
    name = name.lower()
    if name.endswith(".") and not name.endswith(".."):
        name = name[:-1]
    return is_loopback(name) or (name.endswith(".localhost") and not name.startswith("."))


def foreign_host(scope: Scope) -> str | None:
    """The ``Host`` header when it names another machine (:func:`local_name`), else None
    (none given: None)."""
    for name, value in scope.get("headers", ()):
        if name == b"host":
            host = value.decode("latin-1")
            return None if local_name(_host_name(host)) else host
    return None


def _too_large(limit: int) -> APCError:
    return APCError(
        code="serve.body_too_large",
        message=f"the request body is over the server's limit of {limit} bytes",
        hint="send less, or start the server with a larger --max-body-bytes",
    )


def _slow_body(seconds: float) -> APCError:
    return APCError(
        code="serve.slow_request",
        message=f"the request's body did not arrive within the server's {seconds:g} s",
        hint="send the whole request at once, or start the server with a larger --body-timeout",
    )


def _busy(limit: int) -> APCError:
    return APCError(
        code="serve.busy",
        message=f"the requests in flight already hold {limit} bytes of bodies",
        hint="retry shortly, or run more replicas",
    )


class Guard:
    """Auth, the body limit, and the bound on the bodies held at once, around ``app``."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        max_body_bytes: int,
        max_held_bytes: int,
        body_seconds: float | None = None,
    ) -> None:
        self.app = app
        self.token = token
        self.limit = max_body_bytes
        self.max_held = max_held_bytes
        self.body_seconds = body_seconds
        self.held = 0  # bytes of the bodies read and not yet answered (one event loop)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        foreign = foreign_host(scope) if self.token is None else None
        if foreign is not None:
            await error_response(_bad_host(foreign))(scope, receive, send)
            return
        if (
            self.token is not None
            and scope["path"] not in OPEN_PATHS
            and not self._authorized(scope)
        ):
            await error_response(_unauthorized(), {"WWW-Authenticate": "Bearer"})(
                scope, receive, send
            )
            return
        chunks: list[bytes] = []
        try:
            try:
                async with asyncio.timeout(self.body_seconds):
                    refused = await self._read(scope, receive, chunks)
            except TimeoutError:
                refused = _slow_body(self.body_seconds or 0)
            if refused is not None:  # the rest of the body is not read: the connection closes
                await error_response(refused, {"connection": "close"})(scope, receive, send)
                return
            body = b"".join(chunks)
            chunks[:] = [body]
            sent = False

            async def replay() -> Message:
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.app(scope, replay, send)
        finally:
            self.held -= sum(len(c) for c in chunks)

    def _authorized(self, scope: Scope) -> bool:
        assert self.token is not None
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, given = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer":
                    return hmac.compare_digest(given.strip().encode(), self.token.encode())
        return False

    async def _read(self, scope: Scope, receive: Receive, chunks: list[bytes]) -> APCError | None:
        """Read the whole body into ``chunks`` (counted as held); the error when it is over
        the limit, or when the bodies held at once would be (nothing more is read)."""
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    if int(value) > self.limit:
                        return _too_large(self.limit)
                except ValueError:
                    pass
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return _too_large(self.limit)
            if self.held + len(chunk) > self.max_held:
                return _busy(self.max_held)
            chunks.append(chunk)
            self.held += len(chunk)
            if not message.get("more_body", False):
                return None
