"""Profiles on disk and the resolved profile of a run.

Internal: the API is :mod:`compiler.profile`.

A user's profiles live at ``<data-root>/_tauritavern/agent-profiles/profiles/<id>.json``, one
:class:`~compiler.profile.models.AgentProfile` JSON per file, whose ``id`` must match the
file name. A blank id means the built-in ``default-writer``. A run directory receives
``input/resolved_profile.json``, written atomically (temp file in the same directory, then
``os.replace``).
"""

from __future__ import annotations

import json
from pathlib import Path

from compiler._base.atomic import atomic_write_text
from compiler.errors import ProfileError
from compiler.inputs.read import is_file, lexists, real_dir
from compiler.profile.embedded import load_json
from compiler.profile.models import (
    DEFAULT_PROFILE_ID,
    AgentProfile,
    check_profile_id,
    validate_model,
)
from compiler.profile.resolve import ResolvedAgentProfile

__all__ = [
    "PROFILES_DIR",
    "RESOLVED_PROFILE_PATH",
    "ProfileRegistry",
    "normalize_profile_id",
    "write_resolved_profile",
]

PROFILES_DIR = Path("_tauritavern") / "agent-profiles" / "profiles"
RESOLVED_PROFILE_PATH = Path("input") / "resolved_profile.json"


def normalize_profile_id(profile_id: str | None) -> str:
    """A blank (or missing) id is ``default-writer``; any other id must be valid."""
    if profile_id is None or not profile_id.strip():
        return DEFAULT_PROFILE_ID
    code = check_profile_id(profile_id)
    if code:
        raise ProfileError(
            code=code,
            message=f"invalid profile id {profile_id!r}: use lowercase ASCII letters, digits, "
            "'-' and '_', at most 128 characters",
        )
    return profile_id


class ProfileRegistry:
    """The profile files under one data root."""

    def __init__(self, data_root: str | Path) -> None:
        self.data_root = Path(data_root)
        self.directory = self.data_root / PROFILES_DIR

    def path_for(self, profile_id: str) -> Path:
        """Where the profile ``profile_id`` is stored (validated, so no path tricks)."""
        return self.directory / f"{normalize_profile_id(profile_id)}.json"

    def ids(self) -> list[str]:
        """The ids stored on disk, sorted."""
        if real_dir(self.directory) is None:
            return []
        return sorted(
            p.stem
            for p in self.directory.glob("*.json")
            if is_file(p) and check_profile_id(p.stem) is None
        )

    def load(self, profile_id: str) -> AgentProfile | None:
        """The stored profile ``profile_id`` (validated as a layer fragment), or None."""
        path = self.path_for(profile_id)
        if not lexists(path):  # something unreadable there is an error, not "no profile"
            return None
        profile = validate_model(AgentProfile, load_json(path), file=str(path), partial=True)
        if profile.id != normalize_profile_id(profile_id):
            raise ProfileError(
                code="agent.profile_id_mismatch",
                message=f"profile file for '{profile_id}' has id '{profile.id}'",
                path="id",
                file=str(path),
            )
        return profile

    def save(self, profile: AgentProfile) -> Path:
        """Store ``profile`` (atomically) and return its path."""
        path = self.path_for(profile.id)
        text = json.dumps(
            profile.model_dump(mode="json", by_alias=True, exclude_unset=True),
            indent=2,
            ensure_ascii=False,
        )
        _atomic_write(path, text + "\n")
        return path


def write_resolved_profile(run_dir: str | Path, resolved: ResolvedAgentProfile) -> Path:
    """Write ``<run-dir>/input/resolved_profile.json`` atomically; return its path."""
    path = Path(run_dir) / RESOLVED_PROFILE_PATH
    text = json.dumps(resolved.to_json(), indent=2, ensure_ascii=False, sort_keys=False)
    _atomic_write(path, text + "\n")
    return path


def _atomic_write(path: Path, text: str) -> None:
    atomic_write_text(path, text, code="profile.write_failed")
