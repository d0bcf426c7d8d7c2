"""Profiles on disk, and the run's resolved_profile.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.errors import ProfileError
from compiler.profile import (
    AgentProfile,
    ProfileRegistry,
    ResolvedAgentProfile,
    resolve_profile,
    write_resolved_profile,
)
from compiler.profile.registry import PROFILES_DIR, normalize_profile_id


def store(root: Path, profile_id: str, data: dict[str, object]) -> Path:
    path = root / PROFILES_DIR / f"{profile_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_blank_id_is_default_writer() -> None:
    assert normalize_profile_id(None) == "default-writer"
    assert normalize_profile_id("") == "default-writer"
    assert normalize_profile_id(" \t") == "default-writer"
    assert normalize_profile_id("mine") == "mine"


def test_registry_path_rejects_path_tricks(tmp_path: Path) -> None:
    registry = ProfileRegistry(tmp_path)
    with pytest.raises(ProfileError) as info:
        registry.path_for("../../etc/passwd")
    assert info.value.code == "agent.profile_id_invalid"


def test_stored_profile_is_the_user_layer(tmp_path: Path) -> None:
    path = store(tmp_path, "novelist", {"id": "novelist", "tools": {"maxRounds": 33}})
    preset = {
        "agent": {"profiles": [{"id": "novelist", "tools": {"maxRounds": 5, "maxCallsPerRun": 9}}]}
    }
    resolved = resolve_profile(profile_id="novelist", preset=preset, data_root=tmp_path)
    assert resolved.tools.max_rounds == 33  # user beats preset
    assert resolved.tools.max_calls_per_run == 9
    assert resolved.provenance["tools.maxRounds"].layer == "user"
    assert resolved.provenance["tools.maxRounds"].file == str(path)
    overridden = resolve_profile(
        profile_id="novelist", data_root=tmp_path, run={"tools": {"maxRounds": 2}}
    )
    assert overridden.tools.max_rounds == 2  # run beats user


def test_missing_stored_profile_is_not_found(tmp_path: Path) -> None:
    store(tmp_path, "novelist", {"id": "novelist"})
    with pytest.raises(ProfileError) as info:
        resolve_profile(profile_id="novelst", data_root=tmp_path)
    assert info.value.code == "agent.profile_not_found"
    assert info.value.hint == "did you mean 'novelist'?"


def test_stored_default_writer_customises_the_builtin(tmp_path: Path) -> None:
    store(tmp_path, "default-writer", {"id": "default-writer", "tools": {"maxCallsPerRun": 5}})
    assert resolve_profile(data_root=tmp_path).tools.max_calls_per_run == 5


def test_stored_profile_id_must_match_file(tmp_path: Path) -> None:
    store(tmp_path, "a", {"id": "b"})
    with pytest.raises(ProfileError) as info:
        resolve_profile(profile_id="a", data_root=tmp_path)
    assert info.value.code == "agent.profile_id_mismatch"


def test_stored_profile_errors_name_the_file(tmp_path: Path) -> None:
    path = store(tmp_path, "a", {"id": "a", "tools": {"maxRounds": "many"}})
    with pytest.raises(ProfileError) as info:
        resolve_profile(profile_id="a", data_root=tmp_path)
    assert (info.value.code, info.value.path, info.value.file) == (
        "profile.invalid_value",
        "tools.maxRounds",
        str(path),
    )


def test_save_and_list(tmp_path: Path) -> None:
    registry = ProfileRegistry(tmp_path)
    registry.save(AgentProfile.model_validate({"id": "zeta", "displayName": "Z"}))
    registry.save(AgentProfile.model_validate({"id": "alpha"}))
    assert registry.ids() == ["alpha", "zeta"]
    loaded = registry.load("zeta")
    assert loaded is not None and loaded.display_name == "Z"
    assert json.loads(registry.path_for("zeta").read_text("utf-8")) == {
        "id": "zeta",
        "displayName": "Z",
    }


def test_resolved_profile_written_atomically_and_round_trips(tmp_path: Path) -> None:
    resolved = resolve_profile(run={"tools": {"allow": ["mcp.*", "workspace.write_file"]}})
    assert resolved.warnings
    path = write_resolved_profile(tmp_path / "run-1", resolved)
    assert path == tmp_path / "run-1" / "input" / "resolved_profile.json"
    assert [p.name for p in path.parent.iterdir()] == ["resolved_profile.json"]  # no temp left
    data = json.loads(path.read_text("utf-8"))
    assert data["tools"]["visible"] == ["workspace.write_file"]
    assert data["warnings"][0]["code"] == "agent.profile_unknown_tool"
    again = ResolvedAgentProfile.model_validate_json(path.read_text("utf-8"))
    assert again == resolved
    # Overwriting replaces the file whole.
    write_resolved_profile(tmp_path / "run-1", resolve_profile())
    assert json.loads(path.read_text("utf-8"))["warnings"] == []
