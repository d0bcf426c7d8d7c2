"""``apc profile resolve`` and ``apc schema``, through ``compiler.cli.main``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from profile_helpers import make_png, seed_section2, seed_section12

from compiler.cli import main
from compiler.cli.commands.schema import SCHEMAS


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_resolve_prints_the_resolved_profile(
    capsys: pytest.CaptureFixture[str], write_json: Any
) -> None:
    preset = write_json("preset.json", seed_section2())
    code, out, err = run(capsys, "profile", "resolve", "--preset", preset)
    assert code == 0, err
    data = json.loads(out)
    assert data["id"] == "writer"
    assert data["tools"]["visible"] == [
        "chat.search",
        "skill.read",
        "workspace.read_file",
        "workspace.apply_patch",
    ]
    assert data["tools"]["approvalRequired"] == []
    assert data["context"]["historyBudgetTokens"] == 12000
    assert data["provenance"]["context.historyBudgetTokens"] == {"layer": "preset", "file": preset}


def test_resolve_all_layers_and_run_dir(
    capsys: pytest.CaptureFixture[str], write_json: Any, tmp_path: Path
) -> None:
    preset = write_json("preset.json", seed_section2())
    card = tmp_path / "card.png"
    items = [{"id": "writer", "tools": {"maxRounds": 7}}]
    card.write_bytes(
        make_png(
            {
                "chara": {
                    "spec": "chara_card_v2",
                    "data": {
                        "extensions": {
                            "tauritavern": {"agentProfiles": {"version": 1, "items": items}}
                        }
                    },
                }
            }
        )
    )
    user = write_json("user.json", {"tools": {"deny": ["chat.search"]}})
    run_file = write_json("run.json", {"tools": {"allow": ["chat.search", "workspace.write_file"]}})
    root = tmp_path / "data"
    (root / "_tauritavern" / "agent-profiles" / "profiles").mkdir(parents=True)
    run_dir = tmp_path / "runs" / "r1"
    code, out, err = run(
        capsys, "profile", "resolve", "--profile", "writer", "--preset", preset,
        "--character", str(card), "--user", user, "--run", run_file,
        "--data-root", str(root), "--run-dir", str(run_dir),
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["tools"]["maxRounds"] == 7
    assert data["tools"]["visible"] == ["workspace.write_file"]
    assert json.loads((run_dir / "input" / "resolved_profile.json").read_text("utf-8")) == data


def test_explain_lists_layer_and_file(capsys: pytest.CaptureFixture[str], write_json: Any) -> None:
    run_file = write_json("run.json", {"tools": {"maxRounds": 3}})
    code, out, _ = run(capsys, "profile", "resolve", "--run", run_file, "--explain")
    assert code == 0
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert lines["tools.maxRounds"] == ["run", run_file]
    assert lines["tools.maxCallsPerRun"] == ["builtin", "-"]
    code, out, _ = run(
        capsys, "profile", "resolve", "--run", run_file, "--explain", "--format", "json"
    )
    assert json.loads(out)["tools.maxRounds"] == {"layer": "run", "file": run_file}


def test_warnings_go_to_stderr(capsys: pytest.CaptureFixture[str], write_json: Any) -> None:
    run_file = write_json("run.json", {"tools": {"allow": ["mcp.*", "workspace.write_file"]}})
    code, out, err = run(capsys, "profile", "resolve", "--run", run_file)
    assert code == 0
    assert "agent.profile_unknown_tool" in err
    assert json.loads(out)["warnings"][0]["path"] == "tools.allow[0]"


def test_errors_are_diagnostics_not_tracebacks(
    capsys: pytest.CaptureFixture[str], write_json: Any
) -> None:
    preset = seed_section2()
    preset["agent"]["profiles"][0]["tools"]["alow"] = []
    path = write_json("preset.json", preset)
    code, out, err = run(capsys, "profile", "resolve", "--preset", path)
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert "profile.unknown_field" in err and "allow" in err
    code, _, err = run(capsys, "profile", "resolve", "--preset", path, "--format", "json")
    (diag,) = json.loads(err)
    assert diag["code"] == "profile.unknown_field"
    assert diag["path"] == "agent.profiles[0].tools.alow"
    assert diag["file"] == path
    assert diag["hint"] == "did you mean 'allow'?"


def test_profile_not_found_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "profile", "resolve", "--profile", "ghost")
    assert code == 1
    assert "agent.profile_not_found" in err


def schema(capsys: pytest.CaptureFixture[str], name: str) -> dict[str, Any]:
    code, out, _ = run(capsys, "schema", name)
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(doc)
    return doc


def test_preset_schema_validates_section_2(capsys: pytest.CaptureFixture[str]) -> None:
    validator = jsonschema.Draft202012Validator(schema(capsys, "preset"))
    validator.validate(seed_section2())
    tavern = {
        "temperature": 0.7,
        "extensions": {
            "tauritavern": {"agentProfiles": {"version": 1, "items": [seed_section12()]}}
        },
    }
    validator.validate(tavern)
    broken = seed_section2()
    broken["agent"]["profiles"][0]["tools"]["alow"] = []
    assert not validator.is_valid(broken)
    broken = seed_section2()
    broken["agent"]["profiles"][0]["id"] = "Bad Id"
    assert not validator.is_valid(broken)


def test_profile_schema_validates_section_12(capsys: pytest.CaptureFixture[str]) -> None:
    validator = jsonschema.Draft202012Validator(schema(capsys, "profile"))
    validator.validate(seed_section12())
    for artifact_target in ("message_body", {"message_extra": "bar"}, {"messageExtra": "bar"}):
        profile = seed_section12()
        profile["output"]["artifacts"][0]["target"] = artifact_target
        validator.validate(profile)
    missing = seed_section12()
    del missing["id"]
    assert not validator.is_valid(missing)
    wrong = seed_section12()
    wrong["plan"]["mode"] = "loose"
    assert not validator.is_valid(wrong)


def test_schema_registry_is_extensible(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SCHEMAS, "extra", lambda: {"$schema": "x", "type": "object"})
    code, out, _ = run(capsys, "schema", "extra")
    assert code == 0 and json.loads(out)["type"] == "object"
    code, _, err = run(capsys, "schema", "nope")
    assert code == 2
    assert "invalid choice" in err
