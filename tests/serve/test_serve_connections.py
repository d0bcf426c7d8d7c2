"""Slow and greedy clients against the real ``apc serve``: connections that never finish their
request are timed out with a JSON 408, one address cannot hold more than its share of
connections, and past the bounds the answers are JSON (``/healthz`` still answered). Every
socket is on loopback (127.0.0.x, one address per client), the counts are small and every
wait has a wide hang guard; no test measures speed."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.serve.server import LOOPBACK, Server, httpx, running, start

pytestmark = LOOPBACK  # the clients bind 127.0.0.2-4 too, but connect to 127.0.0.1 only

HANG_GUARD = 30.0
PER_CLIENT = 8
TOTAL = 12


def connect(server: Server, address: str) -> socket.socket:
    """A TCP connection to ``server`` from the loopback ``address``."""
    port = int(server.url.rsplit(":", 1)[1])
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(HANG_GUARD)
    s.bind((address, 0))
    s.connect(("127.0.0.1", port))
    return s


def request(path: str, body: bytes = b"", method: str = "GET") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\ncontent-length: {len(body)}\r\n"
    if body:
        head += "content-type: application/json\r\n"
    return head.encode() + b"\r\n" + body


def answer(s: socket.socket) -> tuple[int, Any]:
    """The status and JSON body of the one answer on ``s`` (read until it is complete)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, f"closed without an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(v) for k, _, v in (x.partition(": ") for x in lines) if k == "content-length")
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, "closed mid-answer"
        body += chunk
    assert "content-type: application/json" in [x.lower() for x in lines], head
    return int(lines[0].split()[1]), json.loads(body)


def code(found: Any) -> str:
    c: str = found["diagnostics"][0]["code"]
    return c


def ask(s: socket.socket, path: str, body: bytes = b"") -> tuple[int, Any]:
    s.sendall(request(path, body, "POST" if body else "GET"))
    return answer(s)


COMPILE = json.dumps({"template": "Hi"}).encode()


@pytest.fixture
def bounded() -> Iterator[Server]:
    server = start(
        "--max-client-connections", str(PER_CLIENT), "--max-connections", str(TOTAL),
        "--header-timeout", "600", "--body-timeout", "600",
    )  # fmt: skip
    with running(server):
        yield server


def test_idle_connections_of_one_client_lock_no_one_else_out(bounded: Server) -> None:
    held: list[socket.socket] = []
    try:
        # one client takes its share: idle, half a request line, a head without its body
        for i in range(PER_CLIENT):
            s = connect(bounded, "127.0.0.2")
            partial = [b"", b"POST /v1/compile HT", request("/v1/compile", b"x" * 100)[:-90]]
            s.sendall(partial[i % 3])
            held.append(s)
        # past its share: still answered, as JSON, and /healthz as usual
        over = connect(bounded, "127.0.0.2")
        held.append(over)
        status, found = ask(over, "/v1/compile", COMPILE)
        assert (status, code(found)) == (429, "serve.too_many_connections"), found
        again = connect(bounded, "127.0.0.2")
        held.append(again)
        assert ask(again, "/healthz")[0] == 200
        # another client is served as usual
        other = connect(bounded, "127.0.0.1")
        held.append(other)
        assert ask(other, "/healthz")[0] == 200
        status, found = ask(other, "/v1/compile", COMPILE)
        assert status == 200, found
        # the server's share taken by a third client: a fourth is told so, /healthz answered
        for _ in range(TOTAL - PER_CLIENT - 1):
            held.append(connect(bounded, "127.0.0.3"))
        fourth = connect(bounded, "127.0.0.4")
        held.append(fourth)
        status, found = ask(fourth, "/v1/compile", COMPILE)
        assert (status, code(found)) == (503, "serve.busy"), found
        fifth = connect(bounded, "127.0.0.4")
        held.append(fifth)
        assert ask(fifth, "/healthz")[0] == 200
        # many more connections than the server takes: refused or closed, never a hang
        for _ in range(200):
            with contextlib.suppress(OSError):  # refused at once past the refused ones' bound
                held.append(connect(bounded, "127.0.0.2"))
        assert ask(other, "/healthz")[0] == 200  # an admitted client is still served
        assert ask(other, "/v1/compile", COMPILE)[0] == 200
    finally:
        for s in held:
            s.close()
    # once they are gone, everyone is served again (closing is seen shortly)
    deadline = time.monotonic() + HANG_GUARD
    while True:
        with httpx.Client(base_url=bounded.url, timeout=HANG_GUARD) as c:
            r = c.post("/v1/compile", json={"template": "Hi"})
        if r.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r.status_code == 200, r.text


def test_upgrade_requests_never_leave_the_connection_counts(bounded: Server) -> None:
    """A request asking for a WebSocket is answered as HTTP/1.1 (there are no WebSocket
    routes): handed to another protocol, its connection's close would never be counted, and
    a few hundred such requests would lock every client out for good."""
    upgrade = (
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\n"
        b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    for _ in range(TOTAL + PER_CLIENT):
        s = connect(bounded, "127.0.0.2")
        try:
            s.sendall(upgrade)
            assert answer(s)[0] == 200
        finally:
            s.close()
    deadline = time.monotonic() + HANG_GUARD  # closing is seen shortly
    while True:
        s = connect(bounded, "127.0.0.2")
        try:
            status, found = ask(s, "/v1/compile", COMPILE)
        finally:
            s.close()
        if status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert status == 200, found


@pytest.fixture(scope="module")
def impatient() -> Iterator[Server]:
    server = start("--header-timeout", "0.5", "--body-timeout", "0.5")
    with running(server):
        yield server


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # a connection that never says anything
        b"POST /v1/compile HTTP/1.1\r\nHost: localhost\r\n",  # a head never finished
        request("/v1/compile", b'{"template": "Hi"}' + b" " * 100)[:-60],  # a body never finished
    ],
    ids=["idle", "head", "body"],
)
def test_a_request_that_never_arrives_is_timed_out(impatient: Server, sent: bytes) -> None:
    s = connect(impatient, "127.0.0.1")
    try:
        s.sendall(sent)
        status, found = answer(s)  # within the hang guard: the server closes it first
        assert (status, code(found)) == (408, "serve.slow_request"), found
        assert s.recv(1) == b""  # and closed
    finally:
        s.close()
    assert httpx.get(impatient.url + "/healthz", timeout=HANG_GUARD).status_code == 200


def test_a_kept_alive_connection_times_out_its_next_head(impatient: Server) -> None:
    s = connect(impatient, "127.0.0.1")
    try:
        assert ask(s, "/healthz")[0] == 200
        s.sendall(b"GET /healthz HTTP/1.1\r\n")  # then nothing more
        status, found = answer(s)
        assert (status, code(found)) == (408, "serve.slow_request"), found
    finally:
        s.close()


@pytest.mark.parametrize("ending", [b"", b"\r\n\r\n"], ids=["unfinished", "whole"])
def test_a_head_too_large_is_a_json_400(impatient: Server, ending: bytes) -> None:
    """Over 16 KiB, whether the head is still arriving or came whole in one read."""
    s = connect(impatient, "127.0.0.1")
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nx-big: " + b"y" * 20_000 + ending)
        status, found = answer(s)
        assert (status, code(found)) == (400, "serve.bad_request"), found
        assert "16384" in found["diagnostics"][0]["message"]
    finally:
        s.close()


def test_a_head_too_large_to_read_is_a_json_400(impatient: Server) -> None:
    s = connect(impatient, "127.0.0.1")
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nx-big: " + b"y" * 20_000)
        status, found = answer(s)
        assert (status, code(found)) == (400, "serve.bad_request"), found
    finally:
        s.close()
