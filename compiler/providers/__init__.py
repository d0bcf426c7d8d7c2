"""The lower stage: fitted ContextFrame -> provider request body. One module per provider,
found by name in the registry, which installed packages extend through the entry-point group
``agent_prompt_compiler.providers`` (:data:`ENTRY_POINT_GROUP`).

Importing this package imports no provider's dialect: :func:`get_dialect` imports the one it
names.
"""

from typing import TYPE_CHECKING, Any

from compiler.providers.dialect import (
    MAX_TOP_K,
    SAMPLER_FLAGS,
    Dialect,
    LoweringOptions,
    ModelRequest,
)
from compiler.providers.registry import (
    DEFAULT_PROVIDER,
    ENTRY_POINT_GROUP,
    get_dialect,
    preset_model_key,
    provider_help,
    provider_names,
)

if TYPE_CHECKING:
    from compiler.providers.tool_params import ToolArguments


def __getattr__(name: str) -> Any:
    """``ToolArguments`` imports its module on first use (it reads a dialect's schema rules;
    naming the providers imports no dialect)."""
    if name == "ToolArguments":
        from compiler.providers.tool_params import ToolArguments

        return ToolArguments
    raise AttributeError(f"module 'compiler.providers' has no attribute {name!r}")


__all__ = [
    "DEFAULT_PROVIDER",
    "ENTRY_POINT_GROUP",
    "MAX_TOP_K",
    "SAMPLER_FLAGS",
    "Dialect",
    "LoweringOptions",
    "ModelRequest",
    "ToolArguments",
    "get_dialect",
    "preset_model_key",
    "provider_help",
    "provider_names",
]
