"""``top_k``: the caller's option and a preset's, sent where the provider takes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler
from compiler.cli import main
from tests.providers.frames import CASES
from tests.tavern.test_preset_settings import write_preset

TEMPLATE, CONTEXT, _ = CASES["plain chat"]


def test_openai_reports_the_callers_top_k() -> None:
    result = compiler.compile_string(TEMPLATE, context=CONTEXT, provider="openai", top_k=40)
    assert "top_k" not in result.request
    assert any(w.code == "lower.unsupported" and "top_k" in w.message for w in result.warnings)


def test_openai_compatible_sends_the_callers_top_k() -> None:
    result = compiler.compile_string(
        TEMPLATE, context=CONTEXT, provider="openai-compatible", model="llama-3", top_k=40
    )
    assert result.request["top_k"] == 40


def test_a_presets_top_k_is_quiet_where_openai_takes_none(tmp_path: Path) -> None:
    preset = write_preset(tmp_path, top_k=40)
    for provider in ("openai", "openai-compatible"):
        result = compiler.compile(preset, context=CONTEXT, provider=provider, model="gpt-4o")
        assert "top_k" not in result.request
        assert not [w for w in result.warnings if "top_k" in w.message]


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_a_bad_top_k_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="top_k"):
        compiler.CompileOptions(top_k=bad)  # type: ignore[arg-type]


def test_a_presets_bad_top_k_is_a_coded_error(tmp_path: Path) -> None:
    preset = write_preset(tmp_path, top_k="forty")
    with pytest.raises(compiler.ContextError) as info:
        compiler.compile(preset, context=CONTEXT)
    assert info.value.code == "context.invalid_preset"


def test_the_cli_takes_top_k(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "t.md"
    template.write_text(TEMPLATE)
    context = tmp_path / "run.json"
    context.write_text(json.dumps(CONTEXT))
    argv = ["compile", str(template), "--context", str(context)]
    assert main([*argv, "--provider", "openai-compatible", "--model", "m", "--top-k", "7"]) == 0
    assert json.loads(capsys.readouterr().out)["top_k"] == 7


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_presets_huge_top_k_is_clamped_to_what_the_api_takes(
    tmp_path: Path, provider: str
) -> None:
    preset = write_preset(tmp_path, top_k=1e30)
    model = "claude-3-opus-20240229" if provider == "anthropic" else "gemini-2.5-flash"
    result = compiler.compile(preset, context=CONTEXT, provider=provider, model=model)
    sent = result.request.get("top_k") or result.request["generationConfig"]["topK"]
    assert sent == 2**31 - 1 and type(sent) is int
    assert any(w.code == "lower.sampler_clamped" for w in result.warnings)


def test_the_callers_huge_top_k_is_refused() -> None:
    with pytest.raises(compiler.LoweringError) as info:
        compiler.compile_string(TEMPLATE, context=CONTEXT, provider="gemini", top_k=2**31)
    assert info.value.code == "lower.sampler_out_of_range"
    assert "0 to 2147483647" in str(info.value)


@pytest.mark.parametrize("value", ["-1", str(2**31)])
def test_the_cli_refuses_a_top_k_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    template = tmp_path / "t.md"
    template.write_text(TEMPLATE)
    context = tmp_path / "run.json"
    context.write_text(json.dumps(CONTEXT))
    argv = ["compile", str(template), "--context", str(context), "--provider", "gemini"]
    assert main([*argv, f"--top-k={value}"]) == 2
    assert "--top-k" in capsys.readouterr().err
