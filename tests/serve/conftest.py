"""The shared server of tests/serve: roots the bundled example and the corpus presets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.server import WRITER, Server, running

CORPUS_PRESETS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "presets"


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    roots = ["--root", str(WRITER)]
    if CORPUS_PRESETS.is_dir():
        roots += ["--root", str(CORPUS_PRESETS)]
    with running(*roots) as s:
        yield s
