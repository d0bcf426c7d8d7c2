"""The ``apc`` process ends a one-shot command without the interpreter's teardown: its
output is whole, and a write that fails at the last flush still fails the process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPILE = ["compile", "examples/writer/template.txt", "--context", "examples/writer/run.json"]


def apc(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "compiler", *args], cwd=ROOT, env=env, **kwargs
    )


def test_a_compile_s_output_is_whole() -> None:
    first = apc(COMPILE, capture_output=True)
    assert first.returncode == 0 and first.stdout.rstrip().endswith(b"}")
    assert apc(COMPILE, capture_output=True).stdout == first.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_failed_last_flush_fails_the_process() -> None:
    with open("/dev/full", "wb") as full:
        done = apc(["explain-code", "template.unknown_macro"], stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 120 and b"No space left" in done.stderr


def test_closed_streams_are_no_error(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    done = apc([*COMPILE, "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert done.returncode == 0 and out.read_bytes().rstrip().endswith(b"}")
    closed = subprocess.run(
        f"{sys.executable} -m compiler {' '.join(COMPILE)} -o {out} >&- 2>&-",
        shell=True,
        cwd=ROOT,
        check=False,
    )
    assert closed.returncode == 0
