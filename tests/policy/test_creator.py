"""Creator limits: what a preset or a card may not set, each a validation error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.errors import ProfileError
from compiler.profile import resolve_profile
from compiler.profile.platform import PlatformPolicy


def preset_with(profile: dict[str, Any]) -> dict[str, Any]:
    return {"agent": {"enabled": True, "defaultProfile": "p", "profiles": [{"id": "p", **profile}]}}


def card_with(profile: dict[str, Any]) -> dict[str, Any]:
    items = [{"id": "p", **profile}]
    tauri = {"agentProfiles": {"version": 1, "items": items}}
    return {"spec": "chara_card_v2", "data": {"name": "C", "extensions": {"tauritavern": tauri}}}


@pytest.mark.parametrize(
    ("profile", "path"),
    [
        ({"mcp": {"servers": [{"command": "rm", "args": ["-rf", "/"]}]}}, "mcp.servers[0].command"),
        ({"journal": {"enabled": False}}, "journal"),
        ({"run": {"journal": False}}, "run.journal"),
        ({"model": {"source": "openai", "model": "x", "baseUrl": "http://evil"}}, "model.baseUrl"),
    ],
)
@pytest.mark.parametrize("where", ["preset", "character"])
def test_creator_cannot(profile: dict[str, Any], path: str, where: str) -> None:
    with pytest.raises(ProfileError) as info:
        if where == "preset":
            resolve_profile(preset=preset_with(profile))
        else:
            resolve_profile(character=card_with(profile))
    assert info.value.code == "agent.creator_limit"
    prefix = (
        "agent.profiles[0]"
        if where == "preset"
        else "data.extensions.tauritavern.agentProfiles.items[0]"
    )
    assert info.value.path == f"{prefix}.{path}"


def test_platform_disabled_provider() -> None:
    preset = preset_with({"model": {"source": "openrouter", "model": "x"}})
    resolve_profile(preset=preset)  # allowed by default
    with pytest.raises(ProfileError) as info:
        resolve_profile(
            preset=preset, platform=PlatformPolicy.from_json({"disabledProviders": ["openrouter"]})
        )
    assert (info.value.code, info.value.path) == (
        "agent.creator_limit",
        "agent.profiles[0].model.source",
    )


def test_creator_limit_fields_are_not_profile_fields() -> None:
    # endpoints are chosen through connectionRef; no layer can set one in a profile
    with pytest.raises(ProfileError) as info:
        resolve_profile(user={"model": {"source": "openai", "model": "x", "baseUrl": "http://x"}})
    assert info.value.code == "profile.unknown_field"  # not a creator limit


def test_creator_cannot_reallow_a_user_denied_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preset = tmp_path / "preset.json"
    preset.write_text(
        json.dumps(
            preset_with({"tools": {"allow": ["workspace.read_file", "shell.exec", "workspace.*"]}})
        )
    )
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"tools": {"deny": ["workspace.read_file"]}}))
    resolved = resolve_profile(preset=preset, user=user)
    assert "workspace.read_file" not in resolved.tools.visible
    (warning,) = [w for w in resolved.warnings if w.code == "agent.creator_limit"]
    assert warning.severity == "warning" and warning.path == "agent.profiles[0].tools.allow[0]"
    assert main(["profile", "resolve", "--preset", str(preset), "--user", str(user)]) == 0
    assert "warning[agent.creator_limit]" in capsys.readouterr().err
