"""The lower stage: fitted ContextFrame -> provider request body. One module per provider."""

from compiler.providers.base import get_dialect
from compiler.providers.dialect import Dialect

__all__ = ["Dialect", "get_dialect"]
