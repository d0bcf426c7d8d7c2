"""The run context's ``worldInfo``: the path of a lorebook file, or entries a runtime
activated itself, placed as they are.

Internal: the run context's schema is :class:`compiler.inputs.run.RunContext`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError


class WorldEntryIn(BaseModel):
    """An activated world info entry as the runtime gives it (SillyTavern's other entry fields
    are allowed and kept): its text must be text."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="allow"
    )

    content: str = ""
    position: Literal["before", "after"] | int = "before"
    uid: int | str | None = None
    comment: str = ""
    order: int = 100


def _world_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An inline activated entry, checked as :class:`WorldEntryIn` (and kept as given)."""
    WorldEntryIn.model_validate(entry)
    return entry


def _not_a_lorebook(value: Any) -> Any:
    """An object given as ``worldInfo`` (a lorebook inline, most likely) is refused with what
    to write instead: an inline lorebook goes in ``lorebooks``."""
    if isinstance(value, dict):
        raise PydanticCustomError(
            "context.invalid_context",
            "the path of a lorebook file or a list of activated entries, not an object",
            {
                "hint": 'an inline lorebook goes in lorebooks: {"lorebooks": {"global": BOOK}} '
                "(or character, chat, persona)"
            },
        )
    return value


WorldInfoIn = Annotated[
    list[Annotated[dict[str, Any], AfterValidator(_world_entry)]] | str,
    BeforeValidator(_not_a_lorebook),
]
"""The type of the run context's ``worldInfo``."""
