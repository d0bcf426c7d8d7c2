"""The lower stage: fitted ContextFrame -> provider request body. One module per provider,
found by name in the registry, which installed packages extend through the entry-point group
``agent_prompt_compiler.providers`` (:data:`ENTRY_POINT_GROUP`).

Importing this package imports no provider's dialect: :func:`get_dialect` imports the one it
names.
"""

from compiler.providers.dialect import Dialect, LoweringOptions, ModelRequest
from compiler.providers.registry import (
    DEFAULT_PROVIDER,
    ENTRY_POINT_GROUP,
    get_dialect,
    preset_model_key,
    provider_names,
)
from compiler.providers.tool_params import ToolArguments

__all__ = [
    "DEFAULT_PROVIDER",
    "ENTRY_POINT_GROUP",
    "Dialect",
    "LoweringOptions",
    "ModelRequest",
    "ToolArguments",
    "get_dialect",
    "preset_model_key",
    "provider_names",
]
