"""``parse()``: template text -> :class:`Template`, or a :class:`TemplateError`.

Internal: the API is :mod:`compiler.syntax`.

Lark exceptions are converted here, at the syntax boundary, into diagnostics with a code,
an exact position and a hint; no lark type escapes this module.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Protocol

from lark import Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedToken

from compiler.errors import Diagnostic, TemplateError
from compiler.syntax.ast import Arg, ArgKind, ArgValue, Macro, Node, Template, Text
from compiler.syntax.grammar import parser, terminal_pattern
from compiler.syntax.positions import LineIndex

OPEN = "<<agent."
MAX_INT_DIGITS = 18
"""The most digits of an integer argument (budgets and priorities fit in far fewer)."""
MAX_TEMPLATE_CHARS = 2 * 1024 * 1024
"""The longest template text parsed (``template.too_large`` above it): parsing keeps the
whole tree in memory, about 100 bytes per character of macro-dense text."""
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_WORD_RE = re.compile(r"[A-Za-z0-9_]+|>>|.", re.S)

#: What a diagnostic calls each terminal of the grammar (the keys are exactly the grammar's
#: terminals and ``$END``: tests/syntax check that they match agent.lark).
_TERMINAL_WORDS = {
    "MACRO_CLOSE": "'>>'",
    "_WS": "whitespace",
    "KEY": "an argument",
    "STRING": "a quoted string",
    "EQUALS": "'='",
    "INT": "an integer",
    "IDENT": "an identifier",
    "TEXT": "text",
    "MACRO_OPEN": "a macro",
    "ESCAPED_OPEN": "text",
    "$END": "the end of the template",
}


def parse(source: str, name: str = "<string>", *, skip: Sequence[tuple[int, int]] = ()) -> Template:
    """Parse template text. Raises TemplateError (one syntax diagnostic) on bad syntax.

    ``skip`` holds ``(start, end)`` ranges of ``source`` that are not part of the template
    (SillyTavern ``{{// comments}}``, removed before anything else): they are neither text
    nor macros, and every position still refers to ``source``.
    """
    if len(source) > MAX_TEMPLATE_CHARS:
        raise TemplateError([too_large(len(source), name)])
    index = LineIndex(source, name)
    text, hole = _masked(source, skip)
    try:
        tree = parser().parse(text)
    except LarkError as exc:
        raise TemplateError([_syntax_diagnostic(exc, text, index)]) from None
    return _Builder(text, index, hole).template(tree)


def too_large(size: int, name: str) -> Diagnostic:
    """The ``template.too_large`` error for ``size`` characters of template text."""
    return Diagnostic(
        code="template.too_large",
        message=f"{size} characters of template text; the limit is {MAX_TEMPLATE_CHARS}",
        file=name,
        hint="split the template, or move long text into workspace files",
    )


def _masked(source: str, skip: Sequence[tuple[int, int]]) -> tuple[str, str]:
    """``source`` with each skipped range overwritten by a noncharacter absent from it
    (same length, so offsets hold), and that character ("" when nothing is skipped)."""
    if not skip:
        return source, ""
    candidates = itertools.chain(range(0xFDD0, 0xFDF0), range(0xF0000, 0xFFFFE))
    hole = next(chr(c) for c in candidates if chr(c) not in source)  # 65k+ to choose from
    chars = list(source)
    for start, end in skip:
        chars[start:end] = hole * (end - start)
    return "".join(chars), hole


class _Builder:
    """Turns the lark tree into AST nodes; string escapes are checked here."""

    def __init__(self, source: str, index: LineIndex, hole: str = "") -> None:
        self.source = source
        self.index = index
        self.hole = hole
        self.errors: list[Diagnostic] = []

    def template(self, tree: Tree[Token]) -> Template:
        nodes: list[Node] = []
        for child in tree.children:
            if isinstance(child, Tree):
                nodes.append(self.macro(child))
                continue
            escaped = int(child.type == "ESCAPED_OPEN")
            value = OPEN if escaped else str(child)
            if self.hole:
                value = value.replace(self.hole, "")
            span = self.index.span(child.start_pos or 0, child.end_pos or 0)
            last = nodes[-1] if nodes else None
            if isinstance(last, Text):  # an escape splits text tokens; join them again
                span = self.index.span(last.span.start, span.end)
                nodes[-1] = Text(last.value + value, span, last.literal_opens + escaped)
            else:
                nodes.append(Text(value, span, escaped))
        if self.errors:
            raise TemplateError(self.errors)
        return Template(name=self.index.name, source=self.index.source, nodes=tuple(nodes))

    def macro(self, tree: Tree[Token]) -> Macro:
        children = tree.children
        head, close = children[0], children[-1]
        assert isinstance(head, Token) and isinstance(close, Token)
        args = tuple(self.arg(c) for c in children[1:-1] if isinstance(c, Tree))
        return Macro(
            name=str(head)[2:],
            args=args,
            span=self.index.span(head.start_pos or 0, close.end_pos or 0),
            name_span=self.index.span(head.start_pos or 0, head.end_pos or 0),
        )

    def arg(self, tree: Tree[Token]) -> Arg:
        toks = [t for t in tree.children if isinstance(t, Token)]
        value_tok = toks[-1]
        key = str(toks[0]) if tree.data == "keyword" else None
        value, kind = self.value(value_tok)
        return Arg(
            key=key,
            value=value,
            kind=kind,
            span=self.index.span(toks[0].start_pos or 0, value_tok.end_pos or 0),
            value_span=self.index.span(value_tok.start_pos or 0, value_tok.end_pos or 0),
        )

    def value(self, tok: Token) -> tuple[ArgValue, ArgKind]:
        text = str(tok)
        if tok.type == "STRING":
            return self.unescape(text, tok.start_pos or 0), "string"
        if tok.type == "INT":
            if len(text.lstrip("-")) > MAX_INT_DIGITS:
                start = tok.start_pos or 0
                self.errors.append(
                    Diagnostic(
                        code="template.bad_argument",
                        message=f"integer of {len(text)} digits is too large "
                        f"(at most {MAX_INT_DIGITS} digits)",
                        span=self.index.span(start, tok.end_pos or start),
                        source_line=self.index.line_text(start),
                    )
                )
                return 0, "int"
            return int(text), "int"
        if text in ("true", "false"):
            return text == "true", "bool"
        return text, "ident"

    def unescape(self, quoted: str, start: int) -> str:
        out: list[str] = []
        i, body = 1, quoted
        while i < len(body) - 1:
            ch = body[i]
            if ch == "\\":
                nxt = body[i + 1]
                if nxt in _ESCAPES:
                    out.append(_ESCAPES[nxt])
                else:
                    self.errors.append(
                        Diagnostic(
                            code="template.syntax",
                            message=f"unknown escape '\\{nxt}' in string",
                            span=self.index.span(start + i, start + i + 2),
                            hint='the escapes are \\" \\\\ \\n \\t',
                            source=self.source,
                        )
                    )
                i += 2
                continue
            if ch != self.hole:
                out.append(ch)
            i += 1
        return "".join(out)


def _syntax_diagnostic(exc: LarkError, source: str, index: LineIndex) -> Diagnostic:
    """One friendly diagnostic for a lark error."""
    pos = _error_pos(exc, source)
    macro_start = _enclosing_macro(source, pos)

    def diag(code: str, message: str, start: int, end: int, hint: str | None = None) -> Diagnostic:
        return Diagnostic(
            code=code,
            message=message,
            span=index.span(start, end),
            hint=hint,
            source=source,
        )

    if (
        macro_start is not None
        and source.startswith('"', pos)
        and not terminal_pattern("STRING").match(source, pos)
    ):
        eol = source.find("\n", pos)
        return diag(
            "template.unterminated_string",
            "unterminated string: no closing '\"' on this line",
            pos,
            len(source) if eol < 0 else eol,
            'strings end on the line they start; write \\n for a newline and \\" for a quote',
        )
    if macro_start is None:
        if source.startswith(OPEN, pos):
            return diag(
                "template.syntax",
                "expected a macro name after '<<agent.'",
                pos,
                pos + len(OPEN),
                "macro names are lowercase words joined by dots, e.g. <<agent.plan>>; "
                "write \\<<agent. for the literal text",
            )
        return diag("template.syntax", "unexpected text", pos, min(pos + 1, len(source)))

    name_match = terminal_pattern("MACRO_OPEN").match(source, macro_start)
    name_end = name_match.end() if name_match else macro_start + len(OPEN)
    macro_name = source[macro_start + 2 : name_end]
    if not _is_closed(source, macro_start):
        return diag(
            "template.unterminated_macro",
            f"macro '{macro_name}' is never closed with '>>'",
            macro_start,
            name_end,
            "close the macro with '>>'",
        )
    return _macro_syntax(exc, source, pos, macro_name, diag)


def _macro_syntax(exc: LarkError, source: str, pos: int, macro: str, diag: _Diag) -> Diagnostic:
    """A syntax error inside a closed macro: say what was expected there."""
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        word = _WORD_RE.match(source, pos)
        end = word.end() if word else pos + 1
        prev = _previous_token_type(exc)
        if prev == "KEY":
            key_end = len(source[:pos].rstrip())
            key_start = key_end
            while key_start > 0 and (
                source[key_start - 1].isalnum() or source[key_start - 1] == "_"
            ):
                key_start -= 1
            key = source[key_start:key_end]
            return diag(
                "template.syntax",
                f"expected '=' after argument name '{key}'",
                key_start,
                key_end,
                f'a positional argument is a quoted string, e.g. "{key}"',
            )
        if prev == "EQUALS":
            return diag(
                "template.syntax",
                "expected a value after '='",
                pos,
                end,
                "a value is a quoted string, an integer, true, false or a bare identifier",
            )
        if prev in ("STRING", "INT", "IDENT"):
            return diag(
                "template.syntax",
                f"expected whitespace or '>>' after an argument of '{macro}', "
                f"found '{source[pos:end]}'",
                pos,
                end,
                "separate arguments with whitespace",
            )
    expected = _expected_words(exc)
    word = _WORD_RE.match(source, pos)
    found = word.group(0) if word else ""
    shown = found.encode("unicode_escape").decode() if found.isspace() else found
    message = (
        f"unexpected '{shown}' in macro '{macro}'"
        if found
        else f"unexpected end of input in macro '{macro}'"
    )
    if expected:
        message += f"; expected {expected}"
    return diag("template.syntax", message, pos, min(len(source), pos + max(1, len(found))))


class _Diag(Protocol):
    def __call__(
        self, code: str, message: str, start: int, end: int, hint: str | None = None
    ) -> Diagnostic: ...


def _error_pos(exc: LarkError, source: str) -> int:
    if isinstance(exc, UnexpectedCharacters):
        return int(exc.pos_in_stream or 0)
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        return exc.token.start_pos or 0
    return len(source)  # UnexpectedEOF and anything else: the end


def _previous_token_type(exc: UnexpectedToken) -> str | None:
    """The type of the token the parser shifted last (what the error follows)."""
    stack = getattr(exc, "state", None)
    value_stack = getattr(stack, "value_stack", None)
    if value_stack:
        last = value_stack[-1]
        if isinstance(last, Token):
            return last.type
        if isinstance(last, Tree) and last.children:
            tail = last.children[-1]
            return tail.type if isinstance(tail, Token) else None
    return None


def _expected_words(exc: LarkError) -> str:
    names: set[str] = set()
    if isinstance(exc, UnexpectedToken):
        names = set(exc.expected)
    elif isinstance(exc, UnexpectedCharacters):
        names = set(exc.allowed or ())
    words = sorted({_TERMINAL_WORDS.get(n, n) for n in names})
    return ", ".join(words)


def _enclosing_macro(source: str, pos: int) -> int | None:
    """The start of the macro that ``pos`` lies inside, or None when it is in text.

    Scans like the lexer does: escapes in text, strings (which end at a quote or a newline)
    inside macros, so ``<<agent.`` or ``>>`` inside a string never counts.
    """
    i, start = 0, None
    while i < pos:
        if start is None:
            nxt = source.find("<<agent.", i, pos)
            if nxt < 0:
                return None
            if nxt > 0 and source[nxt - 1] == "\\":
                i = nxt + len(OPEN)
                continue
            start, i = nxt, nxt + len(OPEN)
            continue
        close = _find_close(source, start, pos)
        if close is None:
            return start
        start, i = None, close + 2
    return start


def _is_closed(source: str, start: int) -> bool:
    """Whether the macro at ``start`` has a ``>>`` before the next macro or the end."""
    return _find_close(source, start, len(source), stop_at_open=True) is not None


def _find_close(source: str, start: int, limit: int, *, stop_at_open: bool = False) -> int | None:
    """The offset of the first ``>>`` outside strings in ``source[start:limit]``.

    With ``stop_at_open``, an ``<<agent.`` outside a string ends the search (None).
    """
    i, in_string = start + len(OPEN), False
    while i < limit:
        ch = source[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            if ch in '"\n':
                in_string = False
        elif ch == '"':
            in_string = True
        elif source.startswith(">>", i):
            return i
        elif stop_at_open and source.startswith(OPEN, i):
            return None
        i += 1
    return None
