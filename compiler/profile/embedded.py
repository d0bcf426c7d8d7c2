"""Agent schemas embedded in presets and character cards (JSON or PNG).

Internal: the API is :mod:`compiler.profile`.

Where a schema may live (both forms may appear together; their profiles are combined and an
id defined twice is ``agent.profile_duplicate_id``):

- a preset JSON: ``agent`` (the seed's ``{enabled, defaultProfile, profiles}``) and/or
  ``extensions.tauritavern.agentProfiles`` (TauriTavern's ``{"version": 1, "items": [...]}``);
- a character card (V2/V3, JSON or PNG): ``data.extensions.tauritavern.agentProfiles`` and/or
  ``data.extensions.agent`` (the seed's form, so a creator can ship a ``defaultProfile`` with
  a card, as with a preset). V1 cards have no extensions and so no schema.

PNG cards carry base64 JSON in ``tEXt`` (also ``zTXt``/``iTXt``) chunks; ``ccv3`` wins over
``chara``. The PNG reader is stdlib only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from compiler._records import record
from compiler.errors import ContextError, ProfileError
from compiler.inputs.read import load_json_file
from compiler.profile.models import (
    AgentProfile,
    AgentSchema,
    _Model,
    validate_model,
)
from compiler.profile.platform import PlatformPolicy, check_creator_profile

__all__ = [
    "EmbeddedSchema",
    "TavernProfiles",
    "load_json",
    "schema_from_card",
    "schema_from_preset",
]


class TavernProfiles(_Model):
    """TauriTavern's ``agentProfiles`` container (``{"version": 1, "items": [...]}``)."""

    version: int
    items: list[AgentProfile] = Field(default=[])


@record(frozen=True)
class EmbeddedSchema:
    """An agent schema found in a file, with the JSON path of each of its profiles."""

    schema: AgentSchema
    file: str | None
    paths: tuple[str, ...]  # paths[i] is where schema.profiles[i] sits in the file
    schema_path: str  # where enabled / defaultProfile sit ("agent"), or "" for TauriTavern form
    enabled_set: bool  # whether the file sets ``enabled`` explicitly

    def find(self, profile_id: str) -> tuple[str, AgentProfile] | None:
        """The path and profile with ``profile_id``, if defined here."""
        found = self.schema.find(profile_id)
        return (self.paths[found[0]], found[1]) if found else None

    @property
    def default_profile_path(self) -> str:
        """The JSON path of ``defaultProfile``."""
        return f"{self.schema_path}.defaultProfile" if self.schema_path else "defaultProfile"


def load_json(path: str | Path) -> Any:
    """Parse a JSON file through the one input reader (:mod:`compiler.inputs.read`): a
    missing, unreadable, oversized or malformed file is a ``context.*`` error, whichever
    stage reads it."""
    return load_json_file(Path(path), what="profile layer")


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _combine(
    agent: Any,
    agent_path: str,
    tavern: Any,
    tavern_path: str,
    file: str | None,
    platform: PlatformPolicy | None = None,
) -> EmbeddedSchema | None:
    if agent is None and tavern is None:
        return None
    for raw, base, key in ((agent, agent_path, "profiles"), (tavern, tavern_path, "items")):
        items = raw.get(key) if isinstance(raw, dict) else None
        for i, item in enumerate(items if isinstance(items, list) else []):
            check_creator_profile(item, path=f"{base}.{key}[{i}]", file=file, platform=platform)
    schema = AgentSchema()
    paths: list[str] = []
    enabled_set = False
    if agent is not None:
        schema = validate_model(AgentSchema, agent, path_prefix=agent_path, file=file, partial=True)
        paths = [f"{agent_path}.profiles[{i}]" for i in range(len(schema.profiles))]
        enabled_set = "enabled" in schema.model_fields_set
    if tavern is not None:
        container = validate_model(
            TavernProfiles, tavern, path_prefix=tavern_path, file=file, partial=True
        )
        if container.version != 1:
            raise ProfileError(
                code="agent.profile_schema_unsupported",
                message=f"agentProfiles version {container.version} is unsupported (expected 1)",
                path=f"{tavern_path}.version",
                file=file,
            )
        seen = {p.id for p in schema.profiles}
        for index, profile in enumerate(container.items):
            if profile.id in seen:
                raise ProfileError(
                    code="agent.profile_duplicate_id",
                    message=f"profile id '{profile.id}' is defined twice",
                    path=f"{tavern_path}.items[{index}].id",
                    file=file,
                )
            seen.add(profile.id)
        schema = AgentSchema.model_construct(
            _fields_set=set(schema.model_fields_set),
            enabled=schema.enabled,
            default_profile=schema.default_profile,
            profiles=[*schema.profiles, *container.items],
        )
        paths += [f"{tavern_path}.items[{i}]" for i in range(len(container.items))]
    return EmbeddedSchema(
        schema=schema,
        file=file,
        paths=tuple(paths),
        schema_path=agent_path if agent is not None else "",
        enabled_set=enabled_set,
    )


def schema_from_preset(
    data: Any, file: str | None = None, platform: PlatformPolicy | None = None
) -> EmbeddedSchema | None:
    """The agent schema of a preset JSON, or None when it has none."""
    if not isinstance(data, dict):
        raise ProfileError(
            code="profile.invalid_value", message="a preset must be a JSON object", file=file
        )
    return _combine(
        data.get("agent"),
        "agent",
        _dig(data, "extensions", "tauritavern", "agentProfiles"),
        "extensions.tauritavern.agentProfiles",
        file,
        platform,
    )


def schema_from_card(
    data: Any, file: str | None = None, platform: PlatformPolicy | None = None
) -> EmbeddedSchema | None:
    """The agent schema of a character card (V2/V3 JSON), or None when it has none."""
    if not isinstance(data, dict):
        raise ContextError(
            code="context.invalid_card", message="a character card must be a JSON object", file=file
        )
    return _combine(
        _dig(data, "data", "extensions", "agent"),
        "data.extensions.agent",
        _dig(data, "data", "extensions", "tauritavern", "agentProfiles"),
        "data.extensions.tauritavern.agentProfiles",
        file,
        platform,
    )
