"""Shared fixtures. Sockets are blocked for the whole session (pytest-socket, see pyproject)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """../shared/corpus, read in place; tests that need it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-data corpus not found at {CORPUS}")
    return CORPUS
