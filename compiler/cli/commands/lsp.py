"""``apc lsp``: the language server for templates and presets, on stdin and stdout (needs
the ``lsp`` extra: pygls).

Internal: the interface is the ``apc`` command line and the Language Server Protocol.
"""

from __future__ import annotations

import argparse
from typing import Any

from compiler.cli.commands._common import import_extra

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
    server = import_extra("compiler.lsp.server", "lsp", EXTRA_MODULES, "pygls", "lsp.unavailable")
    code: int = server.serve()
    return code
