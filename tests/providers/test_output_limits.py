"""The requested output length never exceeds the model's maximum output: each dialect's
table (matched like its windows), the clamp and its warning, strict, unknown models, the
reserve, and every way in (the Python API, a preset, ``apc compile``, ``apc check``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import CODES, Diagnostic, LoweringError
from compiler.providers import get_dialect
from compiler.providers.anthropic import CLAUDE_OUTPUT_LIMITS, DEFAULT_MAX_TOKENS
from compiler.providers.anthropic import DIALECT as ANTHROPIC
from compiler.providers.dialect import LoweringOptions
from compiler.providers.registry import PROVIDERS
from tests.providers.frames import CASES
from tests.tavern.test_preset_settings import write_preset

TEMPLATE, CONTEXT, _ = CASES["plain chat"]
HAS_ANTHROPIC = importlib.util.find_spec("anthropic") is not None


def compile_(**options: Any) -> compiler.CompileResult:
    return compiler.compile_string(TEMPLATE, context=CONTEXT, **options)


def codes(warnings: list[Diagnostic]) -> list[str]:
    return [w.code for w in warnings]


def sent(request: dict[str, Any]) -> int | None:
    """The response length a lowered request carries, whatever the provider calls it."""
    for key in ("max_completion_tokens", "max_output_tokens", "max_tokens"):
        if key in request:
            value: int = request[key]
            return value
    config: dict[str, int] = request.get("generationConfig", {})
    return config.get("maxOutputTokens")


# -- the tables ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("provider", "model", "limit"),
    [
        ("openai", "gpt-4o", 16_384),
        ("openai", "gpt-4o-2024-08-06", 16_384),
        ("openai", "gpt-4o-2024-05-13", 4_096),
        ("openai", "openai/gpt-4o-mini", 16_384),
        ("openai", "gpt-4.1-nano-2025-04-14", 32_768),
        ("openai", "gpt-4-turbo-2024-04-09", 4_096),
        ("openai", "gpt-4-0613", 8_192),
        ("openai", "gpt-3.5-turbo-0125", 4_096),
        ("openai", "o1", 100_000),
        ("openai", "o1-mini", 65_536),
        ("openai", "o3-mini-2025-01-31", 100_000),
        ("openai", "o4-mini", 100_000),
        ("openai", "gpt-5-mini", 128_000),
        ("openai", "gpt-5-chat-latest", 16_384),
        ("openai", "gpt-5.1", 128_000),
        ("openai", "gpt-oss-120b", 131_072),
        ("openai-responses", "gpt-4o", 16_384),
        ("anthropic", "claude-3-haiku-20240307", 4_096),
        ("anthropic", "claude-3-5-sonnet-latest", 8_192),
        ("anthropic", "claude-3-7-sonnet-20250219", 64_000),
        ("anthropic", "claude-sonnet-4-20250514", 64_000),
        ("anthropic", "claude-sonnet-4-5", 64_000),
        ("anthropic", "claude-opus-4-0", 32_000),
        ("anthropic", "claude-opus-4-1-20250805", 32_000),
        ("anthropic", "claude-haiku-4-5-20251001", 64_000),
        ("anthropic", "claude-opus-4-6", 128_000),
        ("gemini", "gemini-1.5-pro-002", 8_192),
        ("gemini", "gemini-2.0-flash-lite", 8_192),
        ("gemini", "models/gemini-2.5-flash", 65_536),
        ("gemini", "gemini-2.5-pro-preview-06-05", 65_536),
        ("gemini", "gemini-2.5-flash-image", 32_768),
        ("gemini", "gemini-3-pro-preview", 65_536),
    ],
)
def test_the_table_matches_models_like_the_windows(provider: str, model: str, limit: int) -> None:
    assert get_dialect(provider).output_limit(model) == limit


@pytest.mark.parametrize(
    ("provider", "model"),
    [("openai", "my-model"), ("anthropic", "claude-next"), ("gemini", "gemini-9"),
     ("anthropic", "gpt-4o"), ("openai", "gpt-4oo")],
)  # fmt: skip
def test_an_unknown_model_has_no_maximum(provider: str, model: str) -> None:
    assert get_dialect(provider).output_limit(model) is None


#: The providers with a table of models (openai-compatible has none: any model, any length).
TABLED = sorted(p for p in PROVIDERS if p != "openai-compatible")


def test_every_dialect_has_a_table_and_its_default_model_is_in_it() -> None:
    assert not get_dialect("openai-compatible").output_limits
    for provider in TABLED:
        dialect = get_dialect(provider)
        assert dialect.output_limits, provider
        assert dialect.output_limit(dialect.default_model) is not None, provider


def test_anthropics_default_max_tokens_is_never_over_the_maximum() -> None:
    anthropic = get_dialect("anthropic")
    for prefix in CLAUDE_OUTPUT_LIMITS:
        assert anthropic.default_output_tokens(prefix) <= CLAUDE_OUTPUT_LIMITS[prefix], prefix
    for prefix in DEFAULT_MAX_TOKENS:
        limit = anthropic.output_limit(prefix)
        assert limit is None or DEFAULT_MAX_TOKENS[prefix] <= limit, prefix


def test_the_codes_are_registered_as_lowering_errors() -> None:
    assert CODES["lower.output_clamped"] is LoweringError
    assert CODES["lower.unknown_output_limit"] is LoweringError


# -- the clamp, from the Python API ----------------------------------------------------
def test_gpt_4o_at_100000_is_clamped_to_16384_with_a_warning() -> None:
    result = compile_(model="gpt-4o", max_output_tokens=100_000)
    assert result.request["max_completion_tokens"] == 16_384
    assert codes(result.warnings) == ["lower.output_clamped"]
    warning = result.warnings[0]
    assert warning.severity == "warning"
    assert "100,000" in warning.message and "16,384" in warning.message
    assert "gpt-4o" in warning.message
    # the reserve is what is sent: the window less 16,384, not less 100,000
    assert result.ledger.budget == 128_000 - 16_384


def test_max_completion_tokens_is_clamped_the_same() -> None:
    result = compile_(model="gpt-4o", max_completion_tokens=100_000)
    assert result.request["max_completion_tokens"] == 16_384
    assert codes(result.warnings) == ["lower.output_clamped"]


def test_claude_3_haiku_is_clamped_to_4096() -> None:
    result = compile_(
        provider="anthropic", model="claude-3-haiku-20240307", max_output_tokens=100_000
    )
    assert result.request["max_tokens"] == 4_096
    assert codes(result.warnings) == ["lower.output_clamped"]
    assert result.ledger.budget == int((200_000 - 4_096) * (1 - ANTHROPIC.safety_margin))


@pytest.mark.skipif(not HAS_ANTHROPIC, reason="the anthropic SDK is not installed")
def test_the_anthropic_client_takes_the_clamped_claude_3_haiku_request() -> None:
    """The SDK itself refuses a non-streaming call with max_tokens 100,000; the clamped
    request goes through it unchanged."""
    from tests.providers.test_anthropic import send

    result = compile_(
        provider="anthropic", model="claude-3-haiku-20240307", max_output_tokens=100_000
    )
    assert send(result.request) == result.request
    with pytest.raises(ValueError, match=r"(?i)streaming"):
        send({**result.request, "max_tokens": 100_000})


@pytest.mark.parametrize(
    ("provider", "model", "limit"),
    [
        ("openai-responses", "gpt-4o", 16_384),
        ("openai", "o1-mini", 65_536),
        ("gemini", "gemini-2.0-flash", 8_192),
        ("gemini", "gemini-2.5-pro", 65_536),
        ("anthropic", "claude-opus-4-1", 32_000),
    ],
)
def test_every_dialect_clamps(provider: str, model: str, limit: int) -> None:
    result = compile_(provider=provider, model=model, max_output_tokens=1_000_000)
    assert sent(result.request) == limit
    assert codes(result.warnings) == ["lower.output_clamped"]


@pytest.mark.parametrize("provider", TABLED)
def test_at_or_under_the_maximum_nothing_changes(provider: str) -> None:
    dialect = get_dialect(provider)
    limit = dialect.output_limit(dialect.default_model)
    assert limit is not None
    for asked in (1_000, limit):
        result = compile_(provider=provider, max_output_tokens=asked)
        assert sent(result.request) == asked
        assert "lower.output_clamped" not in codes(result.warnings)


def test_strict_makes_the_clamp_an_error() -> None:
    with pytest.raises(LoweringError) as err:
        compile_(model="gpt-4o", max_output_tokens=100_000, strict=True)
    assert err.value.code == "lower.output_clamped"
    assert "16,384" in err.value.message
    assert err.value.details["events"][-1].type == "context_assembly_failed"
    fine = compile_(model="gpt-4o", max_output_tokens=16_384, strict=True)
    assert fine.request["max_completion_tokens"] == 16_384


def test_an_unknown_model_is_passed_through_with_a_warning() -> None:
    result = compile_(provider="anthropic", model="claude-next", max_output_tokens=100_000)
    assert result.request["max_tokens"] == 100_000
    assert codes(result.warnings) == ["lower.unknown_output_limit"]
    assert "claude-next" in result.warnings[0].message
    assert result.ledger.budget == int(
        (200_000 - 100_000) * (1 - ANTHROPIC.safety_margin)
    )  # the reserve: as sent
    openai = compile_(model="my-model", encoding="o200k_base", max_output_tokens=50_000)
    assert openai.request["max_completion_tokens"] == 50_000
    assert codes(openai.warnings) == ["lower.unknown_output_limit"]
    with pytest.raises(LoweringError) as err:
        compile_(model="my-model", encoding="o200k_base", max_output_tokens=50_000, strict=True)
    assert err.value.code == "lower.unknown_output_limit"


def test_an_unknown_model_with_no_output_length_asked_is_not_reported() -> None:
    anthropic = compile_(provider="anthropic", model="claude-next")  # its default max_tokens
    assert anthropic.request["max_tokens"] == DEFAULT_MAX_TOKENS["claude"]
    assert anthropic.warnings == []
    gemini = compile_(provider="gemini", model="gemini-9")
    assert "generationConfig" not in gemini.request and gemini.warnings == []
    openai = compile_(model="my-model", encoding="o200k_base", strict=True)
    assert "max_completion_tokens" not in openai.request


def test_the_dialect_clamps_when_lowered_directly() -> None:
    from compiler._base.frame import Component, ComponentKind, ContextFrame

    frame = ContextFrame(
        components=[
            Component(
                id="c",
                kind=ComponentKind.CHAT_HISTORY,
                source="t",
                messages=[{"role": "user", "content": "Hi."}],
            )
        ]
    )
    report: list[Diagnostic] = []
    dialect = get_dialect("openai")
    request = dialect.lower(frame, "gpt-4o", LoweringOptions(max_output_tokens=99_999), report)
    assert request["max_completion_tokens"] == 16_384
    assert codes(report) == ["lower.output_clamped"]
    assert dialect.reserved_output("gpt-4o", 99_999) == 16_384
    assert dialect.reserved_output("gpt-4o", None) is None
    assert get_dialect("anthropic").reserved_output("claude-3-haiku", None) == 4_096


# -- a preset's openai_max_tokens ------------------------------------------------------
def test_a_presets_max_tokens_over_the_maximum_is_clamped_with_the_warning(
    tmp_path: Path,
) -> None:
    path = write_preset(
        tmp_path, openai_model="gpt-4o", openai_max_context=120_000, openai_max_tokens=100_000
    )
    result = compiler.compile(path, context=CONTEXT, mode="legacy")
    assert result.request["max_completion_tokens"] == 16_384
    assert codes(result.warnings) == ["lower.output_clamped"]
    # openai_max_context less the reserve, which is what is sent
    assert (result.ledger.budget, result.ledger.budget_source) == (120_000 - 16_384, "preset")
    claude = compiler.compile(
        path, context=CONTEXT, mode="legacy", provider="anthropic", model="claude-3-haiku"
    )
    assert claude.request["max_tokens"] == 4_096
    assert codes(claude.warnings) == ["lower.output_clamped"]


# -- the CLI ---------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    template = tmp_path / "t.txt"
    template.write_text(TEMPLATE, encoding="utf-8")
    run = tmp_path / "run.json"
    run.write_text(json.dumps(CONTEXT), encoding="utf-8")
    return str(template), str(run)


def test_apc_compile_clamps_and_warns(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    template, run = files
    args = ["compile", template, "--context", run, "--model", "gpt-4o"]
    assert main([*args, "--max-output-tokens", "100000"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["max_completion_tokens"] == 16_384
    assert "warning[lower.output_clamped]" in err
    assert main([*args, "--max-output-tokens", "100000", "--strict"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "error[lower.output_clamped]" in err
    assert main([*args, "--provider", "anthropic", "--model", "claude-3-haiku",
                 "--max-output-tokens", "100000"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    assert json.loads(out)["max_tokens"] == 4_096 and "lower.output_clamped" in err


def test_apc_check_budget_reports_the_clamp_and_reserves_what_is_sent(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    template, _ = files
    args = ["check", template, "--model", "gpt-4o", "--max-output-tokens", "100000"]
    assert main([*args, "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().err)
    assert [d["code"] for d in found] == ["lower.output_clamped"]
    assert main([*args, "--strict"]) == 1
    assert "error[lower.output_clamped]" in capsys.readouterr().err
    # the budget plus the reserve (16,384, not 100,000) against the window
    assert main([*args, "--budget", "111616", "--format", "json"]) == 0
    assert "context.budget_over_window" not in capsys.readouterr().err
    assert main([*args, "--budget", "111617", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().err)
    over = [d for d in found if d["code"] == "context.budget_over_window"]
    assert len(over) == 1 and "16,384 reserved" in over[0]["message"]
