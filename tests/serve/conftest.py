"""The servers of tests/serve, started side by side once per session: ``server`` roots the
bundled example and the corpus (read in place); ``guarded`` has a token and small limits, and
roots a directory with a symlink and a hard link out of it. Both keep a generous compile
timeout (:data:`TIMEOUT`): a cold compile on a loaded machine takes over a second, and no test
may depend on the machine's load; the timeout itself is tested on its own (a compile that
cannot finish in time)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported by the fixtures: without the extras, test modules skip
    from tests.serve.server import Server

WRITER = Path(__file__).resolve().parents[2] / "examples" / "writer"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
TOKEN = "t0ken-for-the-tests-only"
TIMEOUT = "120"
LIMITS = ("--max-body-bytes", "8000000", "--max-context-bytes", "6000000", "--timeout", TIMEOUT)


PROFILE = {"id": "no-writes", "tools": {"deny": ["workspace.write_file"]}}


def sandbox(base: Path) -> Path:
    """``base/root`` with a template, a symlink and a hard link out of it to
    ``base/outside/secret.txt``; ``base/data``, a data root holding :data:`PROFILE`."""
    profiles = base / "data" / "_tauritavern" / "agent-profiles" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "no-writes.json").write_text(json.dumps(PROFILE), encoding="utf-8")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret", encoding="utf-8")
    (root / "ok.txt").write_text("Hello <<agent.chat.history>>", encoding="utf-8")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    os.link(outside / "secret.txt", root / "hard.txt")
    return root


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    from tests.serve.server import running, start

    roots = ["--root", str(WRITER)]
    if CORPUS.is_dir():
        roots += ["--root", str(CORPUS)]
    plain = start(*roots)
    root = sandbox(tmp_path_factory.mktemp("serve"))
    data = ["--data-root", str(root.parent / "data")]
    guarded = start("--root", str(root), *data, *LIMITS, token=TOKEN)
    with running(plain, guarded):
        yield plain, guarded


@pytest.fixture
def server(servers: tuple[Server, Server]) -> Server:
    return servers[0]


@pytest.fixture
def guarded(servers: tuple[Server, Server]) -> Server:
    return servers[1]
