"""AST nodes of a template: literal Text and Macro, every node with its Span.

Internal: the API is :mod:`compiler.syntax`.
"""

from __future__ import annotations

from typing import Literal

from compiler._records import record
from compiler.errors import Span

ArgValue = str | int | bool
ArgKind = Literal["string", "int", "bool", "ident"]


@record(frozen=True, slots=True)
class Text:
    """Literal text, already unescaped (``\\<<agent.`` became ``<<agent.``).

    ``literal_opens`` counts the escapes: the ``<<agent.`` openers in ``value`` that the
    author wrote as literal text. Any other opener in what is finally sent is a macro that
    was never expanded (see :mod:`compiler._assemble.markers`).
    """

    value: str
    span: Span
    literal_opens: int = 0


@record(frozen=True, slots=True)
class Arg:
    """One macro argument: positional when ``key`` is None."""

    key: str | None
    value: ArgValue
    kind: ArgKind
    span: Span  # the whole argument, from its first character
    value_span: Span


@record(frozen=True, slots=True)
class Macro:
    """``<<agent.NAME ARG* >>``; ``name`` includes the ``agent.`` prefix."""

    name: str
    args: tuple[Arg, ...]
    span: Span  # from ``<<`` to ``>>`` inclusive
    name_span: Span  # ``<<agent.name``


Node = Text | Macro


@record(frozen=True, slots=True)
class Template:
    """A parsed template: its name (for diagnostics), source text, and nodes in order."""

    name: str
    source: str
    nodes: tuple[Node, ...]

    @property
    def macros(self) -> tuple[Macro, ...]:
        return tuple(n for n in self.nodes if isinstance(n, Macro))
