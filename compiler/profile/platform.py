"""Creator limits (seed section 11): what a preset or a character card may not set.

Internal: the public names are :class:`compiler.ToolGate` and :class:`compiler.PlatformPolicy`.

A creator controls what the agent sees, which tools it has, its artifacts, plan strictness,
approvals and budgets. A creator may not reach outside the workspace roots, set an MCP stdio
command, override a provider or endpoint the platform disables, re-allow a tool the user
denied, turn the journal off, or choose the permissive tool mode (which would offer every
tool its allow list does not name; that widening is the user's choice alone).
:func:`check_creator_profile` is the one enforcing function for the raw profile objects a
preset or card embeds; each attempt is a ``ProfileError`` ``agent.creator_limit`` naming the
file and the JSON path, before the profile is validated.

Paths outside the workspace are refused for every layer by profile validation
(``agent.profile_workspace_root_unknown``, ``workspace.path_invalid``). A user-denied tool
cannot be re-allowed by construction (deny lists accumulate and the user layer comes after
the creator's); :func:`reallow_warnings` makes a creator's explicit allow of such a tool
visible as a warning instead of silently ignoring it. Whatever the mode, no tool outside the
user layer's own ``tools.allow`` is visible (see :mod:`compiler.profile.resolve`).
Platform-disabled providers are compared case- and whitespace-insensitively
(:class:`PlatformPolicy`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any

from compiler._records import record
from compiler.errors import Diagnostic, ProfileError, did_you_mean

#: Model keys that would point requests at another endpoint.
ENDPOINT_KEYS = frozenset({"endpoint", "baseUrl", "baseURL", "apiUrl", "apiBase", "proxy", "url"})
_MCP_COMMAND_KEYS = frozenset({"command", "args", "stdio", "cwd", "env"})


def normalize_provider(name: str) -> str:
    """A provider name as the platform policy compares it: case-folded, without whitespace
    (``' OpenRouter '`` -> ``openrouter``)."""
    return "".join(name.split()).casefold()


@record(frozen=True)
class PlatformPolicy:
    """What the platform (not the creator) decides: providers it disables.

    Provider names are normalised here, the one place (:func:`normalize_provider`): the set
    holds normalised names, and :meth:`disables` normalises the name it is asked about.
    """

    disabled_providers: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        normalized = frozenset(normalize_provider(str(p)) for p in self.disabled_providers)
        object.__setattr__(self, "disabled_providers", normalized)

    def disables(self, provider: str) -> bool:
        """True when the platform disables ``provider`` (compared case- and
        whitespace-insensitively)."""
        return normalize_provider(provider) in self.disabled_providers

    @classmethod
    def from_json(cls, data: Any, file: str | None = None) -> PlatformPolicy:
        """The policy of a platform file's JSON: ``{"disabledProviders": [names]}``; any
        other key is ``profile.unknown_field`` (a misspelt key must not disable nothing)."""
        if isinstance(data, Mapping):
            for key in data:
                if key != "disabledProviders":
                    raise ProfileError(
                        code="profile.unknown_field",
                        message=f"unknown field '{key}' in the platform policy",
                        hint=did_you_mean(str(key), ["disabledProviders"]),
                        path=str(key),
                        file=file,
                    )
        providers = data.get("disabledProviders", []) if isinstance(data, Mapping) else None
        if not isinstance(providers, list) or not all(isinstance(p, str) for p in providers):
            raise ProfileError(
                code="profile.invalid_value",
                message='a platform policy is {"disabledProviders": [names]}',
                path="disabledProviders" if isinstance(data, Mapping) else None,
                file=file,
            )
        return cls(disabled_providers=frozenset(providers))


def _fail(message: str, path: str, file: str | None, hint: str | None = None) -> ProfileError:
    return ProfileError(
        code="agent.creator_limit", message=message, path=path, file=file, hint=hint
    )


def _walk(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, key, value) of every object member, depth first."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            yield sub, str(key), item
            yield from _walk(item, sub)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def check_creator_profile(
    raw: Any, *, path: str, file: str | None, platform: PlatformPolicy | None = None
) -> None:
    """Raise ``agent.creator_limit`` for the first thing a creator may not set in ``raw``."""
    if not isinstance(raw, Mapping):
        return
    platform = platform or PlatformPolicy()
    for sub, key, value in _walk(raw, path):
        lowered = sub.lower()
        if "mcp" in lowered and key in _MCP_COMMAND_KEYS:
            raise _fail(
                "a preset or character card cannot set an MCP stdio command",
                sub,
                file,
                "MCP servers are configured by the user, not by presets or cards",
            )
        if key == "journal" and (
            value is False or (isinstance(value, Mapping) and value.get("enabled") is False)
        ):
            raise _fail("a preset or character card cannot turn the journal off", sub, file)
    tools = raw.get("tools")
    mode = tools.get("mode") if isinstance(tools, Mapping) else None
    if isinstance(mode, str) and mode.strip().lower() == "permissive":
        raise _fail(
            "a preset or character card cannot set tools.mode 'permissive'",
            f"{path}.tools.mode",
            file,
            "list the tools the agent needs in tools.allow; only the user can choose the "
            "permissive mode",
        )
    model = raw.get("model")
    if isinstance(model, Mapping):
        for key in model:
            if key in ENDPOINT_KEYS:
                raise _fail(
                    f"a preset or character card cannot override the endpoint ('{key}')",
                    f"{path}.model.{key}",
                    file,
                    "choose a connection the user configured (model.connectionRef)",
                )
        source = model.get("source")
        if isinstance(source, str) and platform.disables(source):
            raise _fail(
                f"provider '{source}' is disabled by the platform",
                f"{path}.model.source",
                file,
            )


def reallow_warnings(
    creator_allow: Sequence[str],
    user_deny: Sequence[str],
    *,
    path: str,
    file: str | None,
) -> list[Diagnostic]:
    """Warnings for a creator's exact ``allow`` entries that the user's deny overrides."""
    from compiler.profile.tool_catalogue import tool_matches_any

    return [
        Diagnostic(
            code="agent.creator_limit",
            severity="warning",
            message=f"'{entry}' stays denied: the user denies it and a preset or card "
            "cannot re-allow it",
            path=f"{path}[{i}]",
            file=file,
        )
        for i, entry in enumerate(creator_allow)
        if "*" not in entry and "?" not in entry and tool_matches_any(user_deny, entry)
    ]
