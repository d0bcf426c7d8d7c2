"""What the parser knows of the grammar comes from grammar/agent.lark, or is checked against it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import lark
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from compiler.errors import TemplateError
from compiler.syntax import parser as syntax_parser
from compiler.syntax.grammar import (
    TABLES,
    built_parser,
    grammar_sha256,
    grammar_text,
    parser,
    shipped_tables,
    terminal_pattern,
)
from compiler.syntax.parser import _TERMINAL_WORDS
from compiler.syntax.tables import tables_source


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


# -- the shipped LALR tables (compiler/syntax/_lark_tables.py) -----------------------------


def test_the_shipped_tables_were_written_from_this_grammar() -> None:
    """A change to grammar/agent.lark needs `python -m compiler.syntax.tables` run after it:
    until then every process builds the parser from the grammar (correct, but ~30 ms)."""
    from compiler.syntax import _lark_tables as shipped

    assert grammar_sha256(grammar_text()) == shipped.GRAMMAR_SHA256, (
        "grammar/agent.lark changed: run `python -m compiler.syntax.tables`"
    )


def test_the_shipped_tables_are_what_the_tool_writes_at_every_run() -> None:
    """Byte for byte (lark's own numbering varies from process to process; the tool fixes
    it), so a hand edit or a stale file fails here and regenerating gives no spurious diff."""
    from compiler.syntax import _lark_tables as shipped

    if lark.__version__ != shipped.LARK_VERSION:
        pytest.skip(f"the shipped tables were written by another lark than {lark.__version__}")
    assert TABLES.read_text(encoding="utf-8") == tables_source(grammar_text()), (
        "compiler/syntax/_lark_tables.py differs: run `python -m compiler.syntax.tables`"
    )


@pytest.mark.slow
def test_the_tool_writes_the_same_tables_in_every_process() -> None:
    code = "from compiler.syntax import grammar as g, tables as t;"
    code += "print(t.tables_source(g.grammar_text()))"
    written = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "2")
    }
    assert len(written) == 1


def test_tables_of_another_grammar_or_lark_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    text = grammar_text()
    assert shipped_tables(text + "\n// edited\n") is None
    monkeypatch.setattr(lark, "__version__", "0.0.1")
    assert shipped_tables(text) is None


@pytest.fixture(scope="module")
def both() -> tuple[Lark, Lark]:
    tables = shipped_tables(grammar_text())
    if tables is None:
        pytest.skip(f"the shipped tables were written by another lark than {lark.__version__}")
    assert parser().source_path == "<deserialized>"  # the process's parser is the loaded one
    return parser(), built_parser(grammar_text())


def shape(node: object) -> object:
    """A tree with its tokens' types and offsets (a Token equals any string of its text)."""
    if isinstance(node, Tree):
        return (node.data, [shape(c) for c in node.children])
    if isinstance(node, Token):
        return (node.type, str(node), node.start_pos)
    return node


def outcome(p: Lark, text: str) -> object:
    try:
        return shape(p.parse(text))
    except UnexpectedInput as exc:  # what a syntax diagnostic reads of it
        expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
        token = getattr(exc, "token", None)
        stack = getattr(getattr(exc, "state", None), "value_stack", None) or ()
        shown = (shape(token), [shape(v) for v in stack])  # what the error follows
        return (type(exc).__name__, exc.pos_in_stream, sorted(expected), shown)


def parsed(p: Lark, text: str) -> object:
    """What ``compiler.parse`` makes of ``text`` with the parser ``p``: the template, or its
    diagnostics (codes, messages, spans and hints)."""
    with mock.patch.object(syntax_parser, "parser", lambda: p):
        try:
            return syntax_parser.parse(text)
        except TemplateError as exc:
            return exc.diagnostics


noise = st.sampled_from(
    ["<<agent.", "<<", "<", ">", ">>", "\\", "\\<<agent.", "\n", " ", "=", '"', "-", "x", "中",
     "{{char}}"]
)  # fmt: skip
values = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(['"a b"', '"\\"q\\""', '""', "summary", "drop-optional", "x_1", "a-", "1a"]),
)
args = st.one_of(
    st.tuples(st.sampled_from(["budget", "mode", "k", "_"]), values).map("=".join),
    st.tuples(st.sampled_from(["budget", "mode"]), values).map("=".join),
    st.sampled_from(['"output/main.md"', '"a\\"b"', "12", "=", ","]),
)
macros = st.tuples(
    st.sampled_from(["plan", "file", "workspace.tree", "x_1.y", "Plan", "a..b", "9"]),
    st.lists(st.tuples(st.sampled_from([" ", "\t", "\n ", ""]), args), max_size=4),
    st.sampled_from([">>", " >>", ">", ""]),
).map(lambda m: "<<agent." + m[0] + "".join(ws + a for ws, a in m[1]) + m[2])
templates = st.lists(st.one_of(noise, macros, st.text(max_size=5)), max_size=8).map("".join)


@given(templates)
def test_the_loaded_parser_is_the_built_one(both: tuple[Lark, Lark], text: str) -> None:
    """Trees and syntax errors (kind, position, expected set, the token and the parser's
    stack) of the loaded tables are those of lark's own analysis of the grammar, and so are
    the templates and diagnostics made of them."""
    loaded, built = both
    assert outcome(loaded, text) == outcome(built, text)
    assert parsed(loaded, text) == parsed(built, text)
