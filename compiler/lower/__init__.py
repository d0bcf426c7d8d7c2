"""The lower stage: fitted ContextFrame -> provider request body. One module per provider."""

from compiler.dialect import Dialect
from compiler.lower.base import get_dialect

__all__ = ["Dialect", "get_dialect"]
