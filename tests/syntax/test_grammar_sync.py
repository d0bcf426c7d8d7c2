"""What the parser knows of the grammar comes from grammar/agent.lark, or is checked against it."""

from __future__ import annotations

from compiler.syntax.grammar import parser, terminal_pattern
from compiler.syntax.parser import _TERMINAL_WORDS


def test_every_terminal_has_a_word_and_every_word_a_terminal() -> None:
    """Syntax errors name what was expected in words: a terminal added to, renamed in or
    removed from the grammar must be named here too."""
    terminals = {t.name for t in parser().terminals}
    assert set(_TERMINAL_WORDS) == terminals | {"$END"}


def test_scanning_uses_the_grammars_own_terminals() -> None:
    assert terminal_pattern("STRING").fullmatch('"a \\" b"')
    assert not terminal_pattern("STRING").match('"cut\n"')
    assert terminal_pattern("MACRO_OPEN").match("<<agent.chat.history x").group() == (
        "<<agent.chat.history"
    )
