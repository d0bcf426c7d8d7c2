"""Run the service under uvicorn until SIGTERM or SIGINT, then drain and exit.

Internal: called by ``apc serve``.

On SIGTERM uvicorn stops accepting connections and lets the requests in flight finish,
for at most :attr:`ServeConfig.drain_seconds`; then the process exits, even when a compile
that ran over its time limit is still busy in a worker thread (its answer was already a 503).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from compiler.serve.app import create_app
from compiler.serve.limits import ServeConfig


def serve(config: ServeConfig, schemas: dict[str, Callable[[], dict[str, Any]]]) -> int:
    """Serve until told to stop; the exit code."""
    app = create_app(config, schemas)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=config.host,
            port=config.port,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=int(max(1, config.drain_seconds)),
            server_header=False,
        )
    )
    sys.stderr.write(f"apc serve: listening on http://{config.host}:{config.port}\n")
    sys.stderr.flush()
    server.run()
    code = 0 if server.started else 1
    # the pool's threads are joined at exit: one still busy with an overrunning compile
    # would hold the process; nothing it could produce is wanted any more
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline and _busy_threads():
        time.sleep(0.05)
    if _busy_threads():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _busy_threads() -> bool:
    return any(t.name.startswith("apc-compile") and t.is_alive() for t in threading.enumerate())
