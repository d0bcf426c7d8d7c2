"""The syntax stage: template text -> AST with exact spans. Knows nothing but text."""

from compiler.syntax.ast import Arg, Macro, Node, Template, Text
from compiler.syntax.parser import parse

__all__ = ["Arg", "Macro", "Node", "Template", "Text", "parse"]
