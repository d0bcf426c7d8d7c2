"""The connections of ``apc serve``: how many, from whom, and how long a request's head may take.

Internal: :mod:`compiler.serve.runner` gives uvicorn the class :func:`protocol_class` makes.

uvicorn itself never times out a client that is still sending its request line and headers,
and past its concurrency limit it answers plain text. This is the one place where connections
are admitted, counted and timed (the body's time is :class:`compiler.serve.guard.Guard`'s):

- at most :attr:`ServeConfig.max_client_connections` connections at once from one address,
  and :attr:`ServeConfig.max_connections` in all; a connection past either is still read
  (within the same time) and answered ``serve.too_many_connections`` (429) or ``serve.busy``
  (503) as JSON, but ``/healthz``, which is answered as usual. Those refused connections
  count apart (up to ``max_connections`` of them; past that a connection is closed at once),
  so they never crowd out the admitted ones;
- a request's line and headers must arrive within :attr:`ServeConfig.header_seconds` of the
  connection (or of the first byte after a kept-alive answer): else ``serve.slow_request``
  (408, JSON) and the connection is closed. An idle kept-alive connection is closed by uvicorn
  after ``timeout_keep_alive``;
- a request that cannot be read (a head over :data:`MAX_HEAD_BYTES`, a malformed line) is
  ``serve.bad_request`` (400) as JSON.

Requests are parsed by uvicorn's httptools protocol (llhttp, in C: a tenth of the time of the
pure-Python h11 for a turn's request and answer).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from compiler.errors import APCError
from compiler.serve.guard import OPEN_PATHS, Receive, Scope, Send
from compiler.serve.limits import ServeConfig
from compiler.serve.replies import error_body, error_response

MAX_HEAD_BYTES = 16 * 1024
"""The most a request's line and headers may take (``serve.bad_request``, 400, past it)."""
HEAD, REQUEST, BETWEEN = "head", "request", "between"
"""A connection's state: its request's head awaited; the head in (the body and the answer
under way); a kept-alive connection between an answer and the next request's first byte."""


def slow_request(seconds: float, what: str) -> APCError:
    return APCError(
        code="serve.slow_request",
        message=f"the request's {what} did not arrive within the server's {seconds:g} s",
        hint="send the whole request at once; a proxy in front may buffer it",
    )


def _unreadable(why: str) -> APCError:
    return APCError(
        code="serve.bad_request",
        message=f"not a valid HTTP/1.1 request ({why.rstrip('.')})",
        hint="the request line and headers together may hold at most 16 KiB",
    )


def _too_many(limit: int) -> APCError:
    return APCError(
        code="serve.too_many_connections",
        message=f"this address already has {limit} connections open to the server",
        hint="reuse connections (keep-alive) or close idle ones",
    )


def _busy(limit: int) -> APCError:
    return APCError(
        code="serve.busy",
        message=f"the server already has {limit} connections open",
        hint="retry shortly, or run more replicas",
    )


class _Counts:
    """The connections of one server: admitted ones by address, and the refused."""

    def __init__(self) -> None:
        self.by_address: Counter[str] = Counter()
        self.admitted = 0
        self.refused = 0


class OneWrite:
    """The transport of one request's answer: the answer's head (its status line and
    headers) is held until its body's first bytes, so that both leave in one write: one
    system call and one wake-up of the client, not two each. (uvicorn writes a body for
    every answer, if empty, but to HEAD, whose answers are not held; closing writes what is
    held first.)"""

    def __init__(self, transport: asyncio.Transport, cycle: RequestResponseCycle) -> None:
        self.transport = transport
        self.cycle = cycle
        self.held: bytes | None = None
        self.head_sent = False

    def write(self, data: bytes) -> None:
        if not self.head_sent and self.cycle.response_started:
            self.head_sent = True  # the head: held (a 100 Continue, before it, is not)
            self.held = data
            return
        if self.held is not None:
            data, self.held = self.held + data, None
        self.transport.write(data)

    def close(self) -> None:
        if self.held is not None:
            data, self.held = self.held, None
            self.transport.write(data)
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol (httptools) with the bounds of :attr:`bounds`, its
    connections counted in :attr:`counts` (module docstring)."""

    bounds: ServeConfig
    counts: _Counts

    _timer: asyncio.TimerHandle | None = None
    _address = ""
    _admitted = False
    _refused = False
    _state = HEAD  # HEAD: a request's line and headers are awaited (and timed)
    _head = 0  # the bytes received of that head
    _parsed = 0  # the bytes of the request's line and headers parsed (however they arrived)
    _oversize = False  # a head over MAX_HEAD_BYTES was refused while parsed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._address = self.client[0] if self.client else ""
        refusal: APCError | None = None
        if self.counts.by_address[self._address] >= self.bounds.max_client_connections:
            refusal = _too_many(self.bounds.max_client_connections)
        elif self.counts.admitted >= self.bounds.max_connections:
            refusal = _busy(self.bounds.max_connections)
        if refusal is None:
            self._admitted = True
            self.counts.admitted += 1
            self.counts.by_address[self._address] += 1
        elif self.counts.refused >= self.bounds.max_connections:
            transport.abort()  # too many even to answer: closed at once
            return
        else:
            self._refused = True
            self.counts.refused += 1
            self.app = _refusing(self.app, refusal)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._admitted:
            self._admitted = False
            self.counts.admitted -= 1
            self.counts.by_address[self._address] -= 1
            if self.counts.by_address[self._address] <= 0:
                del self.counts.by_address[self._address]
        if self._refused:
            self._refused = False
            self.counts.refused -= 1
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._state == BETWEEN:  # the first bytes of a request after a kept-alive answer
            self._state, self._head = HEAD, 0
            self._arm()
        if self._state == HEAD:
            self._head += len(data)
        super().data_received(data)
        if self._state == HEAD and self._head > MAX_HEAD_BYTES and not self.transport.is_closing():
            self.send_400_response(f"its head is over {MAX_HEAD_BYTES} bytes")

    def on_message_begin(self) -> None:
        self._parsed = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)  # "name: value\r\n", as sent at least
        super().on_header(name, value)

    def _count(self, size: int) -> None:
        """A head over :data:`MAX_HEAD_BYTES`, however many reads it arrived in, stops the
        parse (the parser's error: answered by :meth:`send_400_response`)."""
        self._parsed += size
        if self._parsed > MAX_HEAD_BYTES:
            self._oversize = True
            raise ValueError("the request's head is too large")

    def _should_upgrade(self) -> bool:
        """Never: this service has no WebSocket routes, and a connection handed to another
        protocol would leave this one's counts (its close never counted)."""
        return False

    def _unsupported_upgrade_warning(self) -> None:
        """An ``Upgrade`` header is ignored (the request answered as HTTP/1.1), not logged:
        a client could fill the log with it."""

    def on_headers_complete(self) -> None:
        self._state = REQUEST
        self._disarm()  # the head is in: the body's time is the guard's
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and not cycle.response_started and cycle.scope["method"] != "HEAD":
            cycle.transport = OneWrite(self.transport, cycle)  # type: ignore[assignment]

    def on_response_complete(self) -> None:
        if self.cycle is None or self.cycle.response_complete:
            self._state = BETWEEN  # kept alive: timed again from its next byte on
        super().on_response_complete()

    def _arm(self) -> None:
        self._disarm()
        self._timer = self.loop.call_later(self.bounds.header_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        self._timer = None
        if self.transport.is_closing() or self._state != HEAD:
            return
        _answer(self.transport, 408, slow_request(self.bounds.header_seconds, "line and headers"))

    def send_400_response(self, msg: str) -> None:
        """A request that cannot be read (a malformed line or header, a head over
        :data:`MAX_HEAD_BYTES`): answered as JSON, not uvicorn's plain text."""
        if self._oversize:
            msg = f"its head is over {MAX_HEAD_BYTES} bytes"
        _answer(self.transport, 400, _unreadable(msg))


def protocol_class(config: ServeConfig) -> type[GuardedProtocol]:
    """:class:`GuardedProtocol` with the bounds of ``config``, counting its own connections."""
    bound: type[GuardedProtocol] = type(
        "GuardedProtocol", (GuardedProtocol,), {"bounds": config, "counts": _Counts()}
    )
    return bound


def _answer(transport: asyncio.Transport, status: int, exc: APCError) -> None:
    """``exc`` as the answer, written as is (no request was read), then close."""
    body = error_body(exc)
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    transport.write(head.encode("ascii") + body)
    transport.close()


def _refusing(app: Any, refusal: APCError) -> Any:
    """``app`` for ``/healthz``; the refusal, as JSON with ``Connection: close``, for the rest."""

    async def refuse(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in OPEN_PATHS:
            await app(scope, receive, send)
            return
        await error_response(refusal, {"connection": "close"})(scope, receive, send)

    return refuse
