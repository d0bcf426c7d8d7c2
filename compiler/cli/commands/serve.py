"""``apc serve``: the local compile service (needs the ``serve`` extra: FastAPI, uvicorn).

Internal: the interface is the ``apc`` command line and the HTTP API.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from compiler.cli.commands._common import import_extra, usage_error
from compiler.cli.commands.schema import SCHEMAS
from compiler.inputs import real_dir
from compiler.serve import limits

TOKEN_VARIABLE = "APC_SERVE_TOKEN"
EXTRA_MODULES = frozenset({"fastapi", "starlette", "uvicorn", "httptools", "orjson"})


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the local compile service (HTTP, JSON)")
    p.add_argument("--host", default=limits.DEFAULT_HOST, help="address (default: loopback)")
    p.add_argument("--port", type=int, default=limits.DEFAULT_PORT, help="port (default 8765)")
    p.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory requests may name files under (repeatable; none: inline only)",
    )
    p.add_argument("--data-root", metavar="DIR", help="data root holding the profile registry")
    p.add_argument(
        "--token",
        default=os.environ.get(TOKEN_VARIABLE) or None,
        help=f"bearer token every route but /healthz requires (default: ${TOKEN_VARIABLE}, "
        "which other users cannot read from the process list)",
    )
    g = p.add_argument_group("bounds")
    g.add_argument("--max-body-bytes", type=int, default=limits.MAX_BODY_BYTES)
    g.add_argument("--max-context-bytes", type=int, default=limits.MAX_CONTEXT_BYTES)
    g.add_argument(
        "--timeout", type=float, default=limits.COMPILE_TIMEOUT, help="seconds per compile"
    )
    g.add_argument(
        "--header-timeout",
        type=float,
        default=limits.HEADER_SECONDS,
        help="seconds a request's line and headers may take to arrive",
    )
    g.add_argument(
        "--body-timeout",
        type=float,
        default=limits.BODY_SECONDS,
        help="seconds a request's body may take to arrive",
    )
    g.add_argument("--max-connections", type=int, default=limits.MAX_CONNECTIONS)
    g.add_argument(
        "--max-client-connections",
        type=int,
        default=limits.MAX_CLIENT_CONNECTIONS,
        help="connections at once from one address",
    )
    g.add_argument("--max-sessions", type=int, default=limits.MAX_SESSIONS)
    g.add_argument(
        "--max-session-bytes",
        type=int,
        default=limits.MAX_SESSION_BYTES,
        help="memory the sessions kept may take together (an upper-bound estimate)",
    )
    g.add_argument(
        "--session-idle",
        type=float,
        default=limits.SESSION_IDLE_SECONDS,
        help="seconds a session may go unused before it is dropped",
    )
    g.add_argument("--workers", type=int, default=limits.WORKERS, help="compile threads")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    if isinstance(config, str):
        return usage_error(config)
    what = "FastAPI, uvicorn, httptools, orjson"
    runner = import_extra(
        "compiler.serve.runner", "serve", EXTRA_MODULES, what, "serve.unavailable"
    )
    code: int = runner.serve(config, SCHEMAS)
    sys.stderr.flush()
    return code


def config_from_args(args: argparse.Namespace) -> limits.ServeConfig | str:
    """The configuration the options say, or why it is refused (a usage error)."""
    roots: list[Path] = []
    for given in [*args.root, *([args.data_root] if args.data_root else [])]:
        found = real_dir(given)
        if found is None:
            return f"not a directory: {given[:200]}"
        roots.append(found)
    config = limits.ServeConfig(
        host=args.host,
        port=args.port,
        roots=tuple(roots[: len(args.root)]),
        data_root=roots[-1] if args.data_root else None,
        token=args.token,
        max_body_bytes=args.max_body_bytes,
        max_context_bytes=args.max_context_bytes,
        compile_timeout=args.timeout,
        header_seconds=args.header_timeout,
        body_seconds=args.body_timeout,
        max_connections=args.max_connections,
        max_client_connections=args.max_client_connections,
        max_sessions=args.max_sessions,
        max_session_bytes=args.max_session_bytes,
        session_idle=args.session_idle,
        workers=args.workers,
    )
    return config.problem() or config
