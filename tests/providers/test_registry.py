"""The provider registry: the built-in dialects by name, and third-party dialects that an
installed package registers under the ``agent_prompt_compiler.providers`` entry-point group,
compiled end to end from the Python API and from ``apc compile --provider NAME``. Nothing is
imported before a provider is asked for."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import LoweringError
from compiler.providers import ENTRY_POINT_GROUP, get_dialect, provider_names, registry

ROOT = Path(__file__).resolve().parents[2]
ECHO = "tests.providers.echo_dialect"
TEMPLATE = "Be brief. <<agent.chat.history>>"
CHAT = {"chat": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]}
BUILT_IN = ("openai", "openai-chat", "openai-responses", "openai-compatible", "gemini", "anthropic")


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Entry points as installed packages would declare them: fill the returned dict with
    name -> ``module:attr``; the registry reads them through importlib.metadata."""
    declared: dict[str, str] = {}
    real = importlib.metadata.entry_points

    def entry_points(**params: str) -> Any:
        if params.get("group") != ENTRY_POINT_GROUP:
            return real(**params)
        return importlib.metadata.EntryPoints(
            importlib.metadata.EntryPoint(name, value, ENTRY_POINT_GROUP)
            for name, value in declared.items()
        )

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_LOADED", {})
    return declared


def test_the_built_in_providers_are_registered_by_name() -> None:
    assert provider_names()[: len(BUILT_IN)] == BUILT_IN
    assert {get_dialect(name).name for name in BUILT_IN} == set(BUILT_IN) - {"openai-chat"}
    assert get_dialect("openai-chat") is get_dialect("openai")


def test_a_plugin_dialect_compiles_from_the_python_api(installed: dict[str, str]) -> None:
    installed["echo"] = f"{ECHO}:EchoDialect"  # a class: made once, then the same dialect
    assert "echo" in provider_names() and get_dialect("echo") is get_dialect("echo")
    result = compiler.compile_string(TEMPLATE, context=CHAT, provider="echo")
    assert result.request == {
        "model": "echo-1",
        "turns": [["system", "Be brief."], ["user", "hello"], ["assistant", "hi"]],
    }
    assert result.ledger.total_tokens > 0
    longer = {"chat": [{"role": "user", "content": f"turn {i} " * 20} for i in range(6)]}
    full = compiler.compile_string(TEMPLATE, context=longer, provider="echo")
    budget = full.ledger.total_tokens - 1  # the fit counts with the plugin's cost model
    cut = compiler.compile_string(TEMPLATE, context=longer, provider="echo", budget=budget)
    assert cut.ledger.total_tokens <= budget
    oldest = ["user", "turn 0 " * 20]
    assert oldest in full.request["turns"] and oldest not in cut.request["turns"]


def test_a_plugin_dialect_compiles_from_the_command_line(
    installed: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed["echo"] = f"{ECHO}:ECHO"  # an instance
    (tmp_path / "t.txt").write_text(TEMPLATE)
    (tmp_path / "run.json").write_text(json.dumps(CHAT))
    args = ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    assert main([*args, "--provider", "echo", "--max-output-tokens", "100"]) == 0
    request = json.loads(capsys.readouterr().out)
    assert request["turns"][0] == ["system", "Be brief."] and request["max_tokens"] == 100


def test_a_presets_model_for_a_plugin_is_under_its_dialects_key(
    installed: dict[str, str], tmp_path: Path
) -> None:
    installed["echo"] = f"{ECHO}:ECHO"
    preset = {
        "prompts": [{"identifier": "main", "content": "Be brief."}],
        "openai_model": "gpt-4o-mini",
        "echo_model": "echo-2",
    }
    (tmp_path / "p.json").write_text(json.dumps(preset))
    assert compiler.compile(tmp_path / "p.json", provider="echo").request["model"] == "echo-2"
    assert compiler.compile(tmp_path / "p.json").request["model"] == "gpt-4o-mini"


def test_an_installed_distribution_registers_a_provider(tmp_path: Path) -> None:
    """A real dist-info on sys.path, read by importlib.metadata in a fresh ``apc``."""
    info = tmp_path / "apc_echo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: apc-echo\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\necho = {ECHO}:EchoDialect\n")
    (tmp_path / "t.txt").write_text(TEMPLATE)
    (tmp_path / "run.json").write_text(json.dumps(CHAT))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", str(tmp_path / "t.txt"), "--context",
         str(tmp_path / "run.json"), "--provider", "echo"],
        capture_output=True, text=True, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["turns"][-1] == ["assistant", "hi"]


def test_a_built_in_name_is_never_a_plugins(installed: dict[str, str]) -> None:
    installed["openai"] = f"{ECHO}:ECHO"
    assert get_dialect("openai").name == "openai" and provider_names().count("openai") == 1


@pytest.mark.parametrize("value", ["json:dumps", "no_such_module_apc:Dialect", f"{ECHO}:nope"])
def test_a_plugin_that_loads_no_dialect_is_a_coded_error(
    installed: dict[str, str], value: str
) -> None:
    installed["broken"] = value
    with pytest.raises(LoweringError) as info:
        get_dialect("broken")
    assert info.value.code == "lower.invalid_provider" and value in info.value.message


def test_an_unknown_name_suggests_a_plugins_too(installed: dict[str, str]) -> None:
    installed["echo"] = f"{ECHO}:ECHO"
    with pytest.raises(LoweringError) as info:
        get_dialect("ecoh")
    assert info.value.code == "lower.unknown_provider" and "echo" in (info.value.hint or "")


def test_naming_the_providers_imports_no_dialect() -> None:
    code = (
        "import sys\n"
        "from compiler.providers import get_dialect, provider_names\n"
        "provider_names()\n"
        "before = sorted(m for m in sys.modules if m.startswith('compiler.providers.'))\n"
        "get_dialect('gemini')\n"
        "after = sorted(m for m in sys.modules if m.startswith('compiler.providers.'))\n"
        "print(before, [m for m in after if m.endswith(('.anthropic', '.gemini'))])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    before = "['compiler.providers.dialect', 'compiler.providers.registry']"
    assert out == f"{before} ['compiler.providers.gemini']"
