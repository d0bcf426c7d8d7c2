"""A preset's own settings: the default budget, model and generation options (issue 12/14).

Precedence: the caller's value > the preset's > the profile's > the defaults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import ContextError

CORPUS_PRESET = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "presets"
) / "st-default-2024.json"
CHAT = [{"role": "user", "content": f"message {i} " + "word " * 20} for i in range(400)]
SHORT_CHAT = [{"role": "user", "content": "Hello there."}]
SETTINGS: dict[str, Any] = {
    "openai_max_context": 2000,
    "openai_max_tokens": 500,
    "temperature": 0.7,
    "top_p": 0.9,
    "frequency_penalty": 0.1,
    "presence_penalty": 0.2,
    "seed": 42,
    "custom_stopping_strings": '["\\nUser:", "###"]',
    "openai_model": "gpt-4o-mini",
    "claude_model": "claude-3-5-haiku-20241022",
}


def write_preset(tmp_path: Path, **settings: Any) -> Path:
    preset = {
        "prompts": [
            {"identifier": "main", "content": "You are a helpful narrator."},
            {"identifier": "chatHistory", "marker": True},
        ],
        **settings,
    }
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset), encoding="utf-8")
    return path


def test_the_preset_sets_the_default_budget_model_and_options(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **SETTINGS)
    result = compiler.compile(path, context={"chat": CHAT}, mode="legacy")
    assert result.ledger.budget == 1500  # openai_max_context - openai_max_tokens
    assert result.ledger.budget_source == "preset"
    assert 1400 < result.ledger.total_tokens <= 1500
    req = result.request
    assert req["model"] == "gpt-4o-mini"
    assert req["max_completion_tokens"] == 500
    assert (req["temperature"], req["top_p"]) == (0.7, 0.9)
    assert (req["frequency_penalty"], req["presence_penalty"], req["seed"]) == (0.1, 0.2, 42)
    assert req["stop"] == ["\nUser:", "###"]
    assert result.warnings == []


def test_anthropic_gets_what_it_takes_without_warnings(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **SETTINGS)
    result = compiler.compile(
        path, context={"chat": SHORT_CHAT}, mode="legacy", provider="anthropic", strict=True
    )
    req = result.request
    assert req["model"] == "claude-3-5-haiku-20241022"
    assert req["max_tokens"] == 500
    assert req["stop_sequences"] == ["\nUser:", "###"]
    # SillyTavern's samplers for a model that takes them (top_k: its default 0)
    assert (req["temperature"], req["top_p"], req["top_k"]) == (0.7, 0.9, 0)
    assert not {"seed", "frequency_penalty", "presence_penalty"} & set(req)
    # the caller's own temperature replaces the preset's
    asked = compiler.compile(
        path, context={"chat": SHORT_CHAT}, mode="legacy", provider="anthropic", temperature=0.3
    )
    assert asked.request["temperature"] == 0.3 and asked.warnings == []
    # a model that refuses temperature with top_p gets neither; the caller's is reported
    newer = compiler.compile(
        path,
        context={"chat": SHORT_CHAT},
        mode="legacy",
        provider="anthropic",
        model="claude-sonnet-4-5",
        temperature=0.3,
    )
    assert not {"temperature", "top_p", "top_k"} & set(newer.request)
    assert [w.code for w in newer.warnings] == ["lower.unsupported"]


def test_the_caller_wins_over_the_preset(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **SETTINGS)
    result = compiler.compile(
        path,
        context={"chat": CHAT},
        mode="legacy",
        model="gpt-4o",
        budget=800,
        max_output_tokens=100,
        temperature=0.1,
        seed=7,
        stop=("END",),
    )
    req = result.request
    assert (req["model"], req["max_completion_tokens"]) == ("gpt-4o", 100)
    assert (req["temperature"], req["seed"], req["stop"]) == (0.1, 7, ["END"])
    assert req["top_p"] == 0.9  # not overridden: the preset's
    assert (result.ledger.budget, result.ledger.budget_source) == (800, "--budget")
    # a caller's response limit moves the preset's budget with it
    wider = compiler.compile(path, context={"chat": CHAT}, mode="legacy", max_output_tokens=200)
    assert wider.ledger.budget == 1800


def test_the_cli_overrides_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_preset(tmp_path, **SETTINGS)
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"chat": SHORT_CHAT}), encoding="utf-8")
    argv = ["compile", str(path), "--context", str(run), "--mode", "legacy"]
    assert main([*argv, "--model", "gpt-4.1", "--temperature", "0", "--seed", "3"]) == 0
    req = json.loads(capsys.readouterr().out)
    assert (req["model"], req["temperature"], req["seed"]) == ("gpt-4.1", 0.0, 3)
    assert req["max_completion_tokens"] == 500


def test_seed_minus_one_is_omitted_and_the_window_still_caps(tmp_path: Path) -> None:
    path = write_preset(tmp_path, openai_max_context=100000, openai_max_tokens=1000, seed=-1)
    result = compiler.compile(path, context={"chat": SHORT_CHAT}, mode="legacy")
    assert "seed" not in result.request
    assert result.ledger.budget == 99000
    # the model's window caps a preset context larger than it
    big = write_preset(tmp_path, openai_max_context=10**7, openai_max_tokens=1000)
    result = compiler.compile(big, context={"chat": SHORT_CHAT}, mode="legacy")
    assert (result.ledger.budget, result.ledger.budget_source) == (128000 - 1000, "window")


def test_check_budget_uses_the_preset_budget(tmp_path: Path) -> None:
    path = write_preset(tmp_path, **SETTINGS)
    feasible = compiler.check_budget(path, context={"chat": SHORT_CHAT}, mode="legacy")
    assert (feasible.budget, feasible.reserve, feasible.model) == (1500, 500, "gpt-4o-mini")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("openai_max_context", "4096", "an integer"),
        ("openai_max_tokens", 0, "at least 1"),
        ("temperature", "hot", "a number"),
        ("seed", 1.5, "an integer"),
        ("custom_stopping_strings", "not json", "JSON-encoded"),
        ("custom_stopping_strings", [1], "an array of strings"),
        ("openai_model", 4, "a string"),
    ],
)
def test_a_wrong_type_is_a_coded_error_at_its_path(
    tmp_path: Path, key: str, value: Any, expected: str
) -> None:
    path = write_preset(tmp_path, **{key: value})
    with pytest.raises(ContextError) as err:
        compiler.compile(path, context={"chat": SHORT_CHAT}, mode="legacy")
    assert err.value.code == "context.invalid_preset"
    assert err.value.path == key
    assert expected in err.value.message


@pytest.mark.skipif(not CORPUS_PRESET.is_file(), reason="../shared/corpus is absent")
def test_the_corpus_preset_budget_and_request() -> None:
    result = compiler.compile(CORPUS_PRESET, context={"chat": CHAT}, mode="legacy")
    assert (result.ledger.budget, result.ledger.budget_source) == (4095 - 300, "preset")
    assert result.ledger.total_tokens <= 3795
    req = result.request
    assert (req["model"], req["max_completion_tokens"]) == ("gpt-4-turbo", 300)
    assert (req["temperature"], req["top_p"], req["frequency_penalty"]) == (1, 1, 0)
    assert "seed" not in req and "stop" not in req
    claude = compiler.compile(
        CORPUS_PRESET, context={"chat": SHORT_CHAT}, mode="legacy", provider="anthropic"
    )
    assert (claude.request["model"], claude.request["max_tokens"]) == (
        "claude-3-5-sonnet-20240620",
        300,
    )
    # no lower.unsupported for the preset's own settings; the run has no card (issue 12, 19)
    assert [w.code for w in claude.warnings] == ["context.no_character"]


def test_char_and_user_in_lorebook_keys_are_filled_before_matching(tmp_path: Path) -> None:
    """Issue 12, item 5."""
    book = {
        "entries": {
            "0": {"uid": 0, "key": ["{{char}}"], "content": "CHAR-LORE"},
            "1": {"uid": 1, "key": ["{{user}}'s map"], "content": "USER-LORE"},
            "2": {"uid": 2, "key": ["{{char}}x"], "content": "NEVER"},
        }
    }
    lore = tmp_path / "book.json"
    lore.write_text(json.dumps(book), encoding="utf-8")
    preset = {
        "prompts": [
            {"identifier": "worldInfoBefore", "marker": True},
            {"identifier": "chatHistory", "marker": True},
        ]
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset), encoding="utf-8")
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Seraphina"}}
    chat = [{"role": "user", "content": "Seraphina, look at Ann's map."}]
    ctx = {"character": card, "persona": {"name": "Ann"}, "worldInfo": str(lore), "chat": chat}
    text = json.dumps(compiler.compile(path, context=ctx, mode="legacy").request)
    assert "CHAR-LORE" in text and "USER-LORE" in text and "NEVER" not in text


def test_a_preset_without_samplers_sends_sillytaverns_defaults(tmp_path: Path) -> None:
    """SillyTavern always sends temperature, top_p, the penalties and max_tokens; a preset
    that sets none keeps a new user's shipped values (st-oracle capture synth_bare)."""
    path = write_preset(tmp_path)
    req = compiler.compile(path, context={"chat": SHORT_CHAT}, mode="legacy").request
    assert (req["temperature"], req["top_p"]) == (1.0, 1.0)
    assert (req["frequency_penalty"], req["presence_penalty"]) == (0.0, 0.0)
    assert req["max_completion_tokens"] == 300
    assert "seed" not in req and "stop" not in req
    # the caller still wins, and the reserve follows the default max_tokens
    asked = compiler.compile(path, context={"chat": SHORT_CHAT}, mode="legacy", temperature=0.2)
    assert asked.request["temperature"] == 0.2
    assert asked.ledger.budget == 128000 - 300


SWITCHES = [
    "claude_use_sysprompt",
    "use_makersuite_sysprompt",
    "squash_system_messages",
    "wrap_in_quotes",
]


@pytest.mark.parametrize("key", SWITCHES)
@pytest.mark.parametrize("value", ["yes", "false", 0, 1, [], {}])
def test_a_checkbox_that_is_not_true_or_false_is_refused(
    tmp_path: Path, key: str, value: Any
) -> None:
    path = write_preset(tmp_path, **{key: value})
    with pytest.raises(ContextError) as err:
        compiler.compile(path, context={"chat": CHAT}, provider="gemini")
    assert err.value.code == "context.invalid_preset"
    assert err.value.path == key and "true or false" in err.value.message


@pytest.mark.parametrize("key", SWITCHES)
def test_a_null_checkbox_keeps_sillytaverns_default(tmp_path: Path, key: str) -> None:
    run = {"chat": [{"role": "user", "content": "Hi."}]}
    for provider, model in (
        ("gemini", "gemini-2.5-flash"),
        ("anthropic", "claude-3-opus-20240229"),
    ):
        absent = compiler.compile(
            write_preset(tmp_path), context=run, provider=provider, model=model
        )
        null = compiler.compile(
            write_preset(tmp_path, **{key: None}), context=run, provider=provider, model=model
        )
        assert null.request == absent.request
    gemini = compiler.compile(
        write_preset(tmp_path, use_makersuite_sysprompt=None), context=run, provider="gemini"
    )
    assert "systemInstruction" in gemini.request  # on, as SillyTavern ships it


@pytest.mark.parametrize(
    "key",
    [
        "new_chat_prompt",
        "new_example_chat_prompt",
        "send_if_empty",
        "wi_format",
        "personality_format",
        "scenario_format",
        "human_sysprompt_message",
        "assistant_prefill",
    ],
)
@pytest.mark.parametrize("value", [5, ["a"], {"a": 1}, False])
def test_a_text_setting_that_is_not_a_string_is_refused(
    tmp_path: Path, key: str, value: Any
) -> None:
    path = write_preset(tmp_path, **{key: value})
    with pytest.raises(ContextError) as err:
        compiler.compile(path, context={"chat": CHAT}, mode="legacy")
    assert err.value.code == "context.invalid_preset"
    assert err.value.path == key
