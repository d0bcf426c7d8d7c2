"""Fixtures for the profile tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from profile_helpers import seed_section2, seed_section12


@pytest.fixture
def section2() -> dict[str, Any]:
    return seed_section2()


@pytest.fixture
def section12() -> dict[str, Any]:
    return seed_section12()


@pytest.fixture
def write_json(tmp_path: Path) -> Any:
    """Write a JSON value to ``tmp_path/name`` and return the path as a string."""

    def write(name: str, value: Any) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
        return str(path)

    return write
