"""Loading ``grammar/agent.lark``: from inside the wheel, or from a source checkout.

The LALR tables lark builds from the grammar (20-30 ms a process) are shipped analysed in
:mod:`compiler.syntax._lark_tables`, written by ``python -m compiler.syntax.tables``. They are
used only when they were written from this very grammar text and these parser options by this
very lark version; otherwise the parser is built from the grammar.

Internal: the API is :mod:`compiler.syntax`.
"""

from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources
from pathlib import Path
from typing import Any

import lark
from lark import Lark

GRAMMAR_NAME = "agent.lark"
TABLES = Path(__file__).with_name("_lark_tables.py")
"""Where :mod:`compiler.syntax.tables` writes the shipped tables."""
_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "propagate_positions": False,
    "maybe_placeholders": False,
}


def grammar_text() -> str:
    """The grammar source: the copy shipped in the wheel, else the checkout's grammar/."""
    shipped = resources.files("compiler").joinpath("_grammar", GRAMMAR_NAME)
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_NAME
    return checkout.read_text(encoding="utf-8")


def grammar_sha256(text: str) -> str:
    """The key the shipped tables are written under: the grammar text and the options."""
    return hashlib.sha256((text + repr(sorted(_OPTIONS.items()))).encode("utf-8")).hexdigest()


def built_parser(text: str) -> Lark:
    """The parser lark builds from the grammar text (its full analysis)."""
    return Lark(text, **_OPTIONS)


def shipped_tables(text: str) -> tuple[dict[str, Any], dict[Any, Any]] | None:
    """The shipped tables (data and memo, as ``Lark.memo_serialize`` gives them) if they were
    written from ``text`` by the running lark version, else None."""
    try:
        from compiler.syntax import _lark_tables as shipped
    except ImportError:
        return None
    written = (shipped.GRAMMAR_SHA256, shipped.LARK_VERSION)
    if written != (grammar_sha256(text), lark.__version__):
        return None
    return shipped.DATA, shipped.MEMO


@functools.cache
def parser() -> Lark:
    """The one LALR parser (built once per process, from the shipped tables when they fit)."""
    text = grammar_text()
    tables = shipped_tables(text)
    if tables is None:
        return built_parser(text)
    data, memo = tables
    # lark's own loader of its serialized tables (Lark.load without the pickle)
    return Lark.__new__(Lark)._load({"data": data, "memo": memo})


@functools.cache
def terminal_pattern(name: str) -> re.Pattern[str]:
    """The grammar's terminal ``name`` (``STRING``, ``MACRO_OPEN``, ...) as a compiled regular
    expression, so that code scanning like the lexer uses the grammar's own definition."""
    for terminal in parser().terminals:
        if terminal.name == name:
            return re.compile(terminal.pattern.to_regexp())
    raise KeyError(f"the grammar has no terminal {name}")
