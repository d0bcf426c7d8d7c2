"""Run the service under uvicorn until SIGTERM or SIGINT, then drain and exit.

Internal: called by ``apc serve``.

On SIGTERM uvicorn stops accepting connections and lets the requests in flight finish, for
at most :attr:`ServeConfig.drain_seconds`; then it re-raises the signal, so the process ends
as terminated by SIGTERM (status 143), worker threads included: a compile that ran over its
time limit (its answer was already a 503) cannot hold the process.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import uvicorn

from compiler.serve.app import create_app
from compiler.serve.connections import protocol_class
from compiler.serve.limits import ServeConfig


def serve(config: ServeConfig, schemas: dict[str, Callable[[], dict[str, Any]]]) -> int:
    """Serve until told to stop; the exit code (1: it could not start)."""
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config, schemas),
            host=config.host,
            port=config.port,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=max(1, round(config.drain_seconds)),
            # connections are admitted, counted and timed by our protocol (JSON answers past
            # its bounds, /healthz answered): uvicorn's own limit would answer plain text
            http=protocol_class(config),
            loop="auto",  # uvloop where it is installed (the serve extra has it, but on Windows)
            limit_concurrency=None,
            server_header=False,
        )
    )
    sys.stderr.write(f"apc serve: listening on http://{config.host}:{config.port}\n")
    sys.stderr.flush()
    server.run()
    return 0 if server.started else 1
