"""Start the real ``apc serve`` (this checkout) in a subprocess on a free loopback port."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

httpx = pytest.importorskip("httpx", reason="the test extra (httpx) is not installed")
pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (uvicorn) is not installed")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
WRITER = EXAMPLES / "writer"
LOOPBACK = pytest.mark.allow_hosts(["127.0.0.1"])
START_SECONDS = 30.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str
    token: str | None = None

    def client(self, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **kwargs)

    def post(self, route: str, body: Any, **kwargs: Any) -> httpx.Response:
        with self.client() as c:
            return c.post(route, json=body, **kwargs)

    def terminate(self) -> int:
        """SIGTERM, then the exit code (killed after 20 s: a test failure)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


def start(*args: str, token: str | None = None) -> Server:
    """``apc serve ARGS`` started (call :func:`wait_ready` before using it)."""
    port = free_port()
    cmd = [sys.executable, "-m", "compiler", "serve", "--port", str(port), *args]
    if token:
        cmd += ["--token", token]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
    return Server(proc, f"http://127.0.0.1:{port}", token)


def stop(server: Server) -> None:
    proc = server.proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    if proc.stderr is not None:
        proc.stderr.close()


@contextmanager
def running(*servers: Server) -> Iterator[None]:
    """Wait until every server answers ``/healthz`` (they start side by side); stop them
    when the block ends."""
    try:
        for server in servers:
            wait_ready(server)
        yield
    finally:
        for server in servers:
            stop(server)


def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            err = server.proc.stderr.read().decode() if server.proc.stderr else ""
            raise AssertionError(f"apc serve exited {server.proc.returncode}: {err[-2000:]}")
        try:
            if httpx.get(server.url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError("apc serve did not answer /healthz in time")


def long_chat(messages: int, seed: int = 1) -> list[dict[str, str]]:
    """A chat of ``messages`` messages of about 40 words each."""
    rng = random.Random(seed)
    words = [
        "the",
        "lantern",
        "ferry",
        "river",
        "mira",
        "village",
        "dawn",
        "brass",
        "price",
        "choice",
        "storm",
    ]
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": " ".join(rng.choice(words) for _ in range(40)) + f" ({i})",
        }
        for i in range(messages)
    ]


def slow_body(macros: int, caller: str) -> dict[str, object]:
    """A compile that takes a while: a template dense with macros (about 0.3 ms each to
    parse, bind and fill); ``caller`` gives it its own session, so it starts cold."""
    return {"template": "x <<agent.plan>> " * macros, "context": {"plan": "go"}, "caller": caller}
