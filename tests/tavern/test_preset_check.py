"""apc check on a preset: diagnostics point into prompts[i].content; broken JSON is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler
from compiler.cli import main
from compiler.errors import ContextError


def test_check_points_into_the_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "role": "system", "content": "ok {{agent.plan}}"},
            {"identifier": "chatHistory", "marker": True},
            {"identifier": "x", "role": "system", "content": "line one\n  <<agent.fiel>>"},
        ]
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset))
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}#prompts[2].content:2:3: error[template.unknown_macro]" in err
    assert f"{path}#prompts[0].content:1:4: warning[template.legacy_agent_macro]" in err
    preset["prompts"][2]["content"] = "fine"
    path.write_text(json.dumps(preset))
    assert main(["check", str(path)]) == 0


def test_broken_preset_json_is_an_error_not_template_text(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"prompts": [')
    with pytest.raises(ContextError) as info:
        compiler.compile(path)
    assert info.value.code == "context.invalid_json"
