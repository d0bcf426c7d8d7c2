"""The syntax stage: template text -> AST with exact spans. Knows nothing but text."""

from compiler.syntax.ast import Arg, Macro, Node, Template, Text
from compiler.syntax.parser import MAX_TEMPLATE_CHARS, parse

__all__ = [
    "MAX_TEMPLATE_CHARS",
    "Arg",
    "Macro",
    "Node",
    "Template",
    "Text",
    "parse",
]
