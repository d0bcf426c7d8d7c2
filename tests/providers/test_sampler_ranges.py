"""Samplers within each provider's documented range: the caller's value out of range is
refused (``lower.sampler_out_of_range``; a usage error from the CLI), a preset's is clamped
(``lower.sampler_clamped``, an error when strict)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import CODES, Diagnostic, LoweringError
from compiler.providers import get_dialect
from compiler.providers.dialect import LoweringOptions
from tests.providers.frames import CASES
from tests.tavern.test_preset_settings import write_preset

TEMPLATE, CONTEXT, _ = CASES["plain chat"]
PROVIDERS = ["openai", "openai-responses", "anthropic", "gemini"]


def codes(warnings: list[Diagnostic]) -> list[str]:
    return [w.code for w in warnings]


def generation(request: dict[str, Any]) -> dict[str, Any]:
    """The sampler fields of a lowered request, under OpenAI's names."""
    config = request.get("generationConfig", request)
    names = {
        "temperature": "temperature",
        "top_p": "topP" if "generationConfig" in request else "top_p",
        "frequency_penalty": "frequencyPenalty"
        if "generationConfig" in request
        else "frequency_penalty",
        "presence_penalty": "presencePenalty"
        if "generationConfig" in request
        else "presence_penalty",
    }
    return {k: config[v] for k, v in names.items() if v in config}


def test_the_codes_are_registered() -> None:
    assert CODES["lower.sampler_out_of_range"] is LoweringError
    assert CODES["lower.sampler_clamped"] is LoweringError


def test_the_documented_ranges() -> None:
    openai = get_dialect("openai")
    assert openai.sampler_problem("temperature", 2) is None
    assert openai.sampler_problem("temperature", 2.01) is not None
    assert openai.sampler_problem("temperature", -0.1) is not None
    assert openai.sampler_problem("top_p", 1.5) is not None
    assert openai.sampler_problem("frequency_penalty", -2) is None
    assert openai.sampler_problem("presence_penalty", 2.5) is not None
    assert openai.sampler_problem("temperature", math.nan) is not None
    assert get_dialect("anthropic").sampler_problem("temperature", 1.5) is not None
    assert get_dialect("anthropic").sampler_problem("top_p", 1) is None
    gemini = get_dialect("gemini")
    assert gemini.sampler_problem("temperature", 2) is None
    assert gemini.sampler_problem("frequency_penalty", -2) is None
    assert gemini.sampler_problem("frequency_penalty", 2) is not None  # up to, not including
    assert gemini.sampler_problem("presence_penalty", 1.99) is None


@pytest.mark.parametrize(
    ("provider", "option", "value"),
    [
        ("openai", "temperature", 99.0),
        ("openai", "top_p", 7.0),
        ("openai", "frequency_penalty", -100.0),
        ("openai", "presence_penalty", 100.0),
        ("openai-responses", "temperature", 50.0),
        ("openai-responses", "top_p", -3.0),
        ("anthropic", "temperature", 1.5),
        ("anthropic", "top_p", 2.0),
        ("gemini", "temperature", 2.5),
        ("gemini", "top_p", -0.5),
        ("gemini", "presence_penalty", 2.0),
    ],
)
def test_the_callers_value_out_of_range_is_refused(
    provider: str, option: str, value: float
) -> None:
    with pytest.raises(LoweringError) as err:
        compiler.compile_string(TEMPLATE, context=CONTEXT, provider=provider, **{option: value})
    assert err.value.code == "lower.sampler_out_of_range"
    assert option in err.value.message and provider in err.value.message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_callers_value_in_range_is_sent_as_given(provider: str) -> None:
    result = compiler.compile_string(
        TEMPLATE, context=CONTEXT, provider=provider, temperature=0.7, top_p=0.9
    )
    assert "lower.sampler_out_of_range" not in codes(result.warnings)
    if provider != "anthropic":  # Anthropic sends neither (deprecated)
        assert generation(result.request) == {"temperature": 0.7, "top_p": 0.9}


def test_a_direct_lowering_refuses_too() -> None:
    frame = compiler.compile_string(TEMPLATE, context=CONTEXT).frame
    with pytest.raises(LoweringError, match="temperature 3"):
        get_dialect("openai").lower(frame, "gpt-4o", LoweringOptions(temperature=3.0))


# -- a preset's samplers ---------------------------------------------------------------
WILD = {"temperature": 50, "top_p": -3, "frequency_penalty": 100, "presence_penalty": -100}


def test_a_presets_values_out_of_range_are_clamped_for_openai(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **WILD)
    result = compiler.compile(path, context=CONTEXT, mode="legacy")
    assert generation(result.request) == {
        "temperature": 2.0,
        "top_p": 0.0,
        "frequency_penalty": 2.0,
        "presence_penalty": -2.0,
    }
    assert codes(result.warnings) == ["lower.sampler_clamped"] * 4
    assert all(w.severity == "warning" for w in result.warnings)
    assert "temperature 50" in result.warnings[0].message


def test_a_presets_values_are_clamped_for_responses_and_gemini(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **WILD)
    responses = compiler.compile(path, context=CONTEXT, mode="legacy", provider="openai-responses")
    assert generation(responses.request) == {"temperature": 2.0, "top_p": 0.0}
    assert codes(responses.warnings) == ["lower.sampler_clamped"] * 2
    gemini = compiler.compile(path, context=CONTEXT, mode="legacy", provider="gemini")
    # a preset's penalties are not sent to Gemini (SillyTavern sends Google none)
    assert generation(gemini.request) == {"temperature": 2.0, "top_p": 0.0}
    assert codes(gemini.warnings) == ["lower.sampler_clamped"] * 2


def test_gemini_clamps_its_penalties_below_2() -> None:
    options = LoweringOptions(
        frequency_penalty=100.0,
        presence_penalty=-100.0,
        quiet=frozenset({"frequency_penalty", "presence_penalty"}),
    )
    sent = get_dialect("gemini").within_sampler_ranges(options, [])
    assert sent.presence_penalty == -2.0
    assert sent.frequency_penalty is not None and 1.99 < sent.frequency_penalty < 2.0


def test_anthropic_leaves_a_presets_samplers_out_without_a_clamp(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **WILD)
    result = compiler.compile(path, context=CONTEXT, mode="legacy", provider="anthropic")
    assert "temperature" not in result.request and "top_p" not in result.request
    assert "lower.sampler_clamped" not in codes(result.warnings)


def test_the_callers_value_wins_over_the_presets_and_is_checked(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **WILD)
    result = compiler.compile(path, context=CONTEXT, mode="legacy", temperature=0.5)
    assert result.request["temperature"] == 0.5
    with pytest.raises(LoweringError) as err:
        compiler.compile(path, context=CONTEXT, mode="legacy", temperature=5.0)
    assert err.value.code == "lower.sampler_out_of_range"


def test_strict_makes_the_clamp_an_error(tmp_path: Path) -> None:
    path = write_preset(tmp_path, temperature=50)
    with pytest.raises(LoweringError) as err:
        compiler.compile(path, context=CONTEXT, mode="legacy", strict=True)
    assert err.value.code == "lower.sampler_clamped"


# -- the CLI ---------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    template = tmp_path / "t.txt"
    template.write_text(TEMPLATE, encoding="utf-8")
    run = tmp_path / "run.json"
    run.write_text(json.dumps(CONTEXT), encoding="utf-8")
    return str(template), str(run)


@pytest.mark.parametrize(
    "flags",
    [
        ["--temperature", "99"],
        ["--top-p", "7"],
        ["--frequency-penalty", "-100"],
        ["--presence-penalty", "3"],
        ["--temperature", "nan"],
        ["--provider", "anthropic", "--temperature", "1.5"],
        ["--provider", "gemini", "--frequency-penalty", "2"],
    ],
)
@pytest.mark.parametrize("command", ["compile", "explain"])
def test_the_cli_refuses_an_option_out_of_range_as_a_usage_error(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], flags: list[str], command: str
) -> None:
    template, run = files
    assert main([command, template, "--context", run, *flags]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"apc: error: {flags[-2]} " in err and "range" in err


def test_the_cli_clamps_a_presets_value_with_the_warning(
    tmp_path: Path, files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, run = files
    path = write_preset(tmp_path, temperature=50)
    assert main(["compile", str(path), "--context", run, "--mode", "legacy"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["temperature"] == 2.0
    assert "warning[lower.sampler_clamped]" in err
