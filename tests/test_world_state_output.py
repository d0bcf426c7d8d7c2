"""``apc compile --world-state FILE``: written atomically, never through a symlink or into a
special file, and never the same file as ``-o`` (one would silently overwrite the other)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compiler.cli import main

TEMPLATE = "Hello <<agent.chat.history>>"


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "t.apc"
    path.write_text(TEMPLATE, "utf-8")
    return path


def test_the_same_file_as_the_output_is_a_usage_error(
    template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.json"
    assert main(["compile", str(template), "--world-state", str(out), "-o", str(out)]) == 2
    assert "same file" in capsys.readouterr().err
    assert not out.exists()
    other = tmp_path / "sub" / ".." / "o.json"  # another spelling of it
    (tmp_path / "sub").mkdir()
    assert main(["compile", str(template), "--world-state", str(other), "-o", str(out)]) == 2
    out.write_text("kept", "utf-8")
    os.link(out, tmp_path / "alias.json")  # one file, two names
    args = ["compile", str(template), "--world-state", str(tmp_path / "alias.json")]
    assert main([*args, "-o", str(out)]) == 2
    assert out.read_text("utf-8") == "kept"


def test_a_symlink_or_a_fifo_at_the_state_path_is_left_alone(
    template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim"
    (tmp_path / "link.json").symlink_to(victim)
    args = ["compile", str(template), "-o", str(tmp_path / "req.json")]
    assert main([*args, "--world-state", str(tmp_path / "link.json")]) == 1
    assert "io.output_not_regular" in capsys.readouterr().err
    assert not victim.exists() and not (tmp_path / "req.json").exists()
    os.mkfifo(tmp_path / "fifo")
    assert main([*args, "--world-state", str(tmp_path / "fifo")]) == 1
    assert "io.output_not_regular" in capsys.readouterr().err
    assert (tmp_path / "link.json").is_symlink() and not (tmp_path / "req.json").exists()


def test_distinct_files_are_both_written(template: Path, tmp_path: Path) -> None:
    state, out = tmp_path / "state.json", tmp_path / "o.json"
    assert main(["compile", str(template), "--world-state", str(state), "-o", str(out)]) == 0
    assert state.read_text("utf-8").strip().startswith("{") and "messages" in out.read_text()
