"""``apc lsp``: the language server for templates and presets, on stdin and stdout (needs
the ``lsp`` extra: pygls).

Internal: the interface is the ``apc`` command line and the Language Server Protocol.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from compiler.errors import APCError

INSTALL_HINT = "pip install 'agent-prompt-compiler[lsp]'"
EXTRA_MODULES = frozenset({"pygls", "lsprotocol", "cattrs"})


def register(sub: Any) -> None:
    p = sub.add_parser(
        "lsp", help="run the language server for templates and presets (LSP, over stdio)"
    )
    p.add_argument(
        "--stdio",
        action="store_true",
        help="talk over stdin and stdout (the default and only transport; accepted for "
        "clients that pass it)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        server = importlib.import_module("compiler.lsp.server")
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in EXTRA_MODULES:
            raise
        raise APCError(
            code="lsp.unavailable",
            message=f"apc lsp needs the lsp extra (pygls): no {exc.name}",
            hint=INSTALL_HINT,
        ) from None
    code: int = server.serve()
    return code
