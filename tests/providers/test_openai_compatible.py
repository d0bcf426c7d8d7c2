"""The OpenAI-compatible dialect ('openai-compatible'): SillyTavern's Custom source's body
(``max_tokens``, system text as ``system``, SillyTavern's name rule, a prefill kept), valid
for the openai SDK pointed at another server; no model table (no window, no maximum output,
no unknown-model tokenizer error); the budget from ``--budget`` or the preset."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.providers import get_dialect
from tests.providers.frames import CASES
from tests.providers.sdk import needs_openai, validate_strictly, wire_body
from tests.providers.test_openai_chat import OPTIONS

MODEL = "llama-3.1-8b-instruct"
REPLY = {"id": "c", "object": "chat.completion", "created": 0, "model": MODEL, "choices": []}
CHAT = {"chat": [{"role": "user", "content": "Tell me a story."}]}
TEMPLATE = "You are a storyteller.\n<<agent.chat.history>>"


def compiled(template: str = TEMPLATE, context: Any = CHAT, **options: Any) -> Any:
    return compiler.compile_string(
        template, context=context, provider="openai-compatible", **{"model": MODEL, **options}
    )


@needs_openai
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_sdk_type_accepts_the_body_and_sends_it_unchanged(name: str) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    template, ctx, options = CASES[name]
    request = compiled(template, ctx, **{**options, **OPTIONS}).request
    validate_strictly(CompletionCreateParamsNonStreaming, request)
    path, body = wire_body(
        lambda client: client.chat.completions.create(**request),
        REPLY,
        base_url="http://127.0.0.1:8080/v1",
    )
    assert path == "/v1/chat/completions"
    assert body == request


def test_the_body_has_max_tokens_and_no_table_warning() -> None:
    result = compiled(max_output_tokens=1_000_000)
    assert result.request["max_tokens"] == 1_000_000
    assert "max_completion_tokens" not in result.request
    assert result.warnings == []
    assert get_dialect("openai-compatible").output_limit("gpt-4o") is None


@pytest.mark.parametrize("model", ["o3", "gpt-5", "openai/gpt-5-mini"])
def test_system_stays_system_and_samplers_are_sent_for_any_name(model: str) -> None:
    result = compiled(model=model, temperature=0.3, stop=("a", "b", "c", "d", "e"))
    roles = {m["role"] for m in result.request["messages"]}
    assert "developer" not in roles and "system" in roles
    assert result.request["temperature"] == 0.3
    assert result.request["stop"] == ["a", "b", "c", "d"]  # SillyTavern's limit of 4
    assert [w.code for w in result.warnings] == ["lower.unsupported"]


def test_names_follow_sillytaverns_rule_and_a_prefill_is_kept() -> None:
    chat = {
        "chat": [
            {"role": "user", "content": "Hello.", "name": "Mira-Vale"},
            {"role": "assistant", "content": "*She smiles and says*", "name": "Alex"},
        ]
    }
    result = compiled(context=chat)
    last = result.request["messages"][-1]
    assert last == {"role": "assistant", "content": "*She smiles and says*", "name": "Alex"}
    assert result.request["messages"][-2]["name"] == "Mira_Vale"
    assert result.warnings == []


def test_the_model_is_required() -> None:
    with pytest.raises(compiler.LoweringError) as err:
        compiled(model=None)
    assert err.value.code == "lower.model_required"


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("my-local-model", "cl100k_base"),
        ("meta-llama/llama-3.1-70b-instruct", "cl100k_base"),
        ("gpt-4o", "o200k_base"),
        ("openai/gpt-4o-mini", "o200k_base"),
    ],
)
def test_an_unknown_name_counts_with_cl100k_not_an_error(model: str, encoding: str) -> None:
    assert get_dialect("openai-compatible").encoding(model) == encoding
    assert compiled(model=model).ledger.encoding == encoding


def test_encoding_overrides() -> None:
    assert compiled(encoding="o200k_base").ledger.encoding == "o200k_base"


def _long_chat(n: int) -> dict[str, Any]:
    roles = ("user", "assistant")
    return {
        "chat": [{"role": roles[i % 2], "content": f"Turn {i}: " + "words " * 40} for i in range(n)]
    }


def test_no_window_means_the_budget_is_the_callers() -> None:
    assert get_dialect("openai-compatible").window(MODEL) is None
    whole = compiled(context=_long_chat(60))
    assert whole.ledger.budget is None and whole.ledger.budget_source == "none"
    assert len(whole.request["messages"]) == 61  # nothing cut
    cut = compiled(context=_long_chat(60), budget=1000)
    assert cut.ledger.budget == 1000 and cut.ledger.budget_source == "--budget"
    assert cut.ledger.total_tokens <= 1000 < whole.ledger.total_tokens
    assert not any(w.code == "context.budget_over_window" for w in cut.warnings)


PRESET = {
    "prompts": [
        {"identifier": "main", "name": "Main", "role": "system", "content": "Tell the story."},
        {"identifier": "chatHistory", "name": "Chat History", "marker": True},
    ],
    "openai_max_context": 900,
    "openai_max_tokens": 200,
    "custom_model": "qwen2.5-7b-instruct",
    "temperature": 0.6,
}


def test_a_preset_gives_the_model_the_budget_and_max_tokens(tmp_path: Path) -> None:
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(PRESET), encoding="utf-8")
    run = tmp_path / "run.json"
    run.write_text(json.dumps(_long_chat(40)), encoding="utf-8")
    result = compiler.compile(path, context=run, mode="legacy", provider="openai-compatible")
    assert result.request["model"] == "qwen2.5-7b-instruct"
    assert result.request["max_tokens"] == 200 and result.request["temperature"] == 0.6
    assert result.ledger.budget == 700 and result.ledger.budget_source == "preset"
    assert result.ledger.total_tokens <= 700
    assert not [w.code for w in result.warnings if w.code.startswith(("lower.", "tokenizer."))]


def test_the_cli_compiles_and_lists_the_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "t.txt"
    template.write_text(TEMPLATE, encoding="utf-8")
    run = tmp_path / "run.json"
    run.write_text(json.dumps(CHAT), encoding="utf-8")
    args = [str(template), "--context", str(run), "--provider", "openai-compatible"]
    assert main(["compile", *args, "--model", MODEL, "--max-output-tokens", "50"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["model"] == MODEL and body["max_tokens"] == 50
    for command in ("check", "explain"):
        assert main([command, *args, "--model", MODEL, "--budget", "500"]) == 0, command
    assert main(["bench", *args, "--model", MODEL, "--budget", "500", "--no-compare"]) == 0
    capsys.readouterr()
    with contextlib.suppress(SystemExit):
        main(["compile", "--help"])
    assert "openai-compatible" in capsys.readouterr().out
