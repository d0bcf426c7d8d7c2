"""The lower stage: fitted ContextFrame -> provider request body. One module per provider."""

from compiler.lower.base import Dialect, get_dialect

__all__ = ["Dialect", "get_dialect"]
