"""Loading ``grammar/agent.lark``: from inside the wheel, or from a source checkout.

Internal: the API is :mod:`compiler.syntax`.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path

from lark import Lark

GRAMMAR_NAME = "agent.lark"


def grammar_text() -> str:
    """The grammar source: the copy shipped in the wheel, else the checkout's grammar/."""
    shipped = resources.files("compiler").joinpath("_grammar", GRAMMAR_NAME)
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_NAME
    return checkout.read_text(encoding="utf-8")


@functools.cache
def parser() -> Lark:
    """The one LALR parser (built once per process)."""
    return Lark(
        grammar_text(),
        parser="lalr",
        lexer="contextual",
        propagate_positions=False,
        maybe_placeholders=False,
    )


@functools.cache
def terminal_pattern(name: str) -> re.Pattern[str]:
    """The grammar's terminal ``name`` (``STRING``, ``MACRO_OPEN``, ...) as a compiled regular
    expression, so that code scanning like the lexer uses the grammar's own definition."""
    for terminal in parser().terminals:
        if terminal.name == name:
            return re.compile(terminal.pattern.to_regexp())
    raise KeyError(f"the grammar has no terminal {name}")
