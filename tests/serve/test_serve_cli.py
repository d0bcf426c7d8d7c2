"""``apc serve``'s command line, with or without the serve extra: the safe defaults are
checked before anything starts, and a missing extra says how to install it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from compiler.cli import main


def test_a_public_address_needs_a_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("APC_SERVE_TOKEN", raising=False)
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    assert "requires --token" in capsys.readouterr().err
    assert main(["serve", "--host", "0.0.0.0", "--token", "short"]) == 2
    assert "at least 16" in capsys.readouterr().err
    monkeypatch.setenv("APC_SERVE_TOKEN", "short")  # the token's other way in
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    assert "at least 16" in capsys.readouterr().err


def test_without_the_extra_serve_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [m for m in sys.modules if m.startswith("compiler.serve.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "fastapi", None)
    assert main(["serve"]) == 1
    err = capsys.readouterr().err
    assert "error[serve.unavailable]" in err
    assert "pip install 'agent-prompt-compiler[serve]'" in err


def test_a_root_must_be_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--root", str(tmp_path / "none")]) == 2
    assert "not a directory" in capsys.readouterr().err
