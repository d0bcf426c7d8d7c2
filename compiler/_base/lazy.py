"""Internal: the public names of a package imported on first use (PEP 562), so importing the
package loads none of the modules that hold them (``import compiler`` loads no pipeline)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``homes`` maps each module to the
    names (space-separated) it holds; a name is imported on first use and kept in the
    package's namespace, so the next lookup is plain."""
    home_of = {name: module for module, names in homes.items() for name in names.split()}
    names = sorted(public)

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
