"""A SillyTavern preset compiled for Gemini is sent as SillyTavern 1.12.6 sends Google
(``convertGooglePrompt``, ``sendMakerSuiteRequest``): the system instruction, the turns,
the names, the stop strings and the samplers; a template keeps the dialect's own rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler._base.frame import TAVERN_GEMINI, Component, ComponentKind, ContextFrame
from compiler.providers.dialect import LoweringOptions
from compiler.providers.gemini import DIALECT, generate_content_arguments
from compiler.providers.gemini_tavern import JS_WHITESPACE, takes_system_instruction
from tests.providers.frames import CASES
from tests.providers.test_gemini import needs_sdk, strict, types

INPUTS = Path(__file__).resolve().parents[1] / "fixtures" / "st_oracle" / "inputs"
MODEL = "gemini-1.5-pro"
CHAT = [
    {"role": "user", "content": "The gale nearly took me."},
    {"role": "assistant", "content": "Sit by the fire."},
    {"role": "user", "content": "Is that your logbook?"},
]
SYSTEM_TEXT = (
    "You are Mira Vale with Alex.\n\n"
    "[Example Chat]\n\n"
    "Alex: What do you write in that book?\n\n"
    "Mira Vale: Names of ships. Their flags.\nWhether they waved back.\n\n"
    "Alex: Do they wave?\n\n"
    "Mira Vale: The good ones do.\n\n"
    "[Example Chat]\n\n"
    "Alex: Are you ever lonely up here?\n\n"
    "Mira Vale: *She taps the glass of the lamp.* Not with this old thing to argue with.\n\n"
    "[Start a new Chat]"
)


def preset(tmp_path: Path, **settings: Any) -> Path:
    prompts = [
        {"identifier": "main", "role": "system", "content": "You are {{char}} with {{user}}."},
        {"identifier": "dialogueExamples", "marker": True},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "jailbreak", "role": "system", "content": "Write only {{char}}'s reply."},
    ]
    path = tmp_path / "preset.json"
    path.write_text(json.dumps({"prompts": prompts, **settings}), encoding="utf-8")
    return path


def run(chat: list[dict[str, Any]] = CHAT) -> dict[str, Any]:
    return {
        "character": str(INPUTS / "mira.card.json"),
        "persona": {"name": "Alex"},
        "chat": chat,
    }


def compiled(
    tmp_path: Path,
    chat: list[dict[str, Any]] = CHAT,
    model: str = MODEL,
    options: dict[str, Any] | None = None,
    **settings: Any,
) -> compiler.CompileResult:
    """The preset with ``settings`` compiled for Gemini; ``options``: the caller's."""
    result = compiler.compile(
        preset(tmp_path, **settings),
        context=run(chat),
        mode="legacy",
        provider="gemini",
        model=model,
        **(options or {}),
    )
    DIALECT.check(result.request)
    return result


def texts(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["role"], p["text"]) for c in request["contents"] for p in c["parts"]]


def test_leading_system_messages_are_one_system_instruction(tmp_path: Path) -> None:
    result = compiled(tmp_path)
    request = result.request
    assert request["systemInstruction"] == {"parts": [{"text": SYSTEM_TEXT}]}
    assert texts(request) == [
        ("user", "The gale nearly took me."),
        ("model", "Sit by the fire."),
        ("user", "Is that your logbook?\n\nWrite only Mira Vale's reply."),
    ]
    assert result.warnings == []  # SillyTavern's own conversion: nothing to report


def test_without_the_system_instruction_system_text_is_user_turns(tmp_path: Path) -> None:
    request = compiled(tmp_path, use_makersuite_sysprompt=False).request
    assert "systemInstruction" not in request
    first = request["contents"][0]
    assert first["role"] == "user" and len(first["parts"]) == 1
    assert first["parts"][0]["text"] == f"{SYSTEM_TEXT}\n\nThe gale nearly took me."
    assert "[System note]" not in json.dumps(request)


@pytest.mark.parametrize("model", ["gemini-1.0-pro", "gemini-pro", "models/gemma-3-27b-it"])
def test_models_without_a_system_instruction_get_user_turns(tmp_path: Path, model: str) -> None:
    request = compiled(tmp_path, model=model).request
    assert "systemInstruction" not in request
    assert request["contents"][0]["parts"][0]["text"].startswith("You are Mira Vale")


def test_which_models_take_a_system_instruction() -> None:
    for model in ("gemini-1.5-pro", "gemini-1.5-flash-8b", "gemini-2.5-flash", "gemini-3-pro"):
        assert takes_system_instruction(model)
    for model in ("gemini-1.0-pro-001", "gemini-pro", "gemini-pro-vision", "gemma-2-9b-it"):
        assert not takes_system_instruction(model)


def test_a_greeting_first_chat_gets_the_user_turn_gemini_needs(tmp_path: Path) -> None:
    # the card's greeting opens the chat; human_sysprompt_message is Claude's, not Google's
    request = compiled(tmp_path, chat=[], human_sysprompt_message="Let's start.").request
    assert request["systemInstruction"]["parts"][0]["text"] == SYSTEM_TEXT
    assert [c["role"] for c in request["contents"]] == ["user", "model", "user"]
    assert request["contents"][0]["parts"] == [{"text": "[Start a new chat]"}]
    assert request["contents"][1]["parts"][0]["text"].startswith("*The door bangs open")


def test_a_lone_system_message_stays_in_the_contents(tmp_path: Path) -> None:
    path = tmp_path / "preset.json"
    path.write_text(json.dumps({"prompts": [{"identifier": "main", "content": "Hi."}]}))
    result = compiler.compile(path, context={}, mode="legacy", provider="gemini", model=MODEL)
    assert "systemInstruction" not in result.request
    assert result.request["contents"] == [{"role": "user", "parts": [{"text": "Hi."}]}]


def test_names_are_written_before_the_text_without_a_report(tmp_path: Path) -> None:
    result = compiled(tmp_path, names_behavior=1)
    assert texts(result.request)[:2] == [
        ("user", "Alex: The gale nearly took me."),
        ("model", "Mira Vale: Sit by the fire."),
    ]
    assert result.warnings == []


def test_examples_after_the_chat_starts_name_their_speakers(tmp_path: Path) -> None:
    """SillyTavern 1.12.6 writes ``example_user: `` there; the speakers' names are sent, as
    in the system instruction (a deliberate difference)."""
    request = compiled(tmp_path, use_makersuite_sysprompt=False).request
    assert "example_" not in json.dumps(request)
    first = request["contents"][0]["parts"][0]["text"]
    assert "\n\nAlex: Do they wave?\n\nMira Vale: The good ones do.\n\n" in first


def test_sillytaverns_stop_strings_come_first(tmp_path: Path) -> None:
    stops = json.dumps(["###", "END", "FIN", "STOP"])
    config = compiled(tmp_path, custom_stopping_strings=stops).request["generationConfig"]
    assert config["stopSequences"] == ["\nAlex:", "[Start a new Chat]", "###", "END", "FIN"]
    result = compiled(tmp_path, new_chat_prompt="", options={"stop": ("A", "B", "C", "D")})
    config = result.request["generationConfig"]
    assert config["stopSequences"] == ["\nAlex:", "A", "B", "C", "D"]  # no empty sequence


def test_more_stop_strings_than_gemini_takes(tmp_path: Path) -> None:
    result = compiled(tmp_path, options={"stop": ("A", "B", "C", "D")})  # the caller's
    assert result.request["generationConfig"]["stopSequences"][2:] == ["A", "B", "C"]
    assert [w.code for w in result.warnings] == ["lower.unsupported"]
    stops = json.dumps(["A", "B", "C", "D"])  # the preset's: SillyTavern sends 3 of them
    assert compiled(tmp_path, custom_stopping_strings=stops).warnings == []


def test_the_samplers_sillytavern_sends_google(tmp_path: Path) -> None:
    settings = {
        "temperature": 0.7,
        "top_p": 0.9,
        "top_k": 40,
        "frequency_penalty": 0.3,
        "presence_penalty": 0.4,
        "seed": 5,
        "openai_max_tokens": 250,
    }
    result = compiled(tmp_path, **settings)
    assert result.request["generationConfig"] == {
        "stopSequences": ["\nAlex:", "[Start a new Chat]"],
        "maxOutputTokens": 250,
        "temperature": 0.7,
        "topP": 0.9,
        "topK": 40,
    }
    assert result.warnings == []
    assert "topK" not in compiled(tmp_path, top_k=0).request["generationConfig"]


def test_the_callers_penalties_and_seed_are_sent(tmp_path: Path) -> None:
    options = {"frequency_penalty": 0.5, "presence_penalty": 0.2, "seed": 3}
    result = compiled(tmp_path, options=options, frequency_penalty=0.1)
    config = result.request["generationConfig"]
    assert (config["frequencyPenalty"], config["presencePenalty"], config["seed"]) == (
        0.5,
        0.2,
        3,
    )


def test_a_template_keeps_the_dialects_rules() -> None:
    template, context, _ = CASES["plain chat"]
    text = f"System.\n<<agent.chat.history>>\n[later]\n{template}"
    result = compiler.compile_string(
        text, context=context, provider="gemini", model=MODEL, top_k=0, seed=4
    )
    assert "seed" in result.request["generationConfig"]
    assert "topK" not in result.request["generationConfig"]
    with_k = compiler.compile_string(template, context=context, provider="gemini", top_k=7)
    assert with_k.request["generationConfig"]["topK"] == 7


def test_same_role_turns_join_text_but_keep_function_parts() -> None:
    call = {"id": "c1", "name": "dice_roll", "arguments": {"sides": 6}}
    messages = [
        {"role": "user", "content": "Roll."},
        {"role": "system", "content": "Be fair."},
        {"role": "assistant", "content": "Rolling.", "toolCalls": [call]},
        {"role": "tool", "toolCallId": "c1", "content": "4"},
        {"role": "system", "content": "A four."},
    ]
    frame = ContextFrame(
        components=[
            Component(id="h", kind=ComponentKind.CHAT_HISTORY, source="t", messages=messages)
        ],
        metadata={TAVERN_GEMINI: {"systemInstruction": True, "user": "Alex", "char": "Mira"}},
    )
    request = DIALECT.lower(frame, MODEL, LoweringOptions())
    DIALECT.check(request)
    assert request["contents"] == [
        {"role": "user", "parts": [{"text": "Roll.\n\nBe fair."}]},
        {
            "role": "model",
            "parts": [
                {"text": "Rolling."},
                {"functionCall": {"name": "dice_roll", "args": {"sides": 6}, "id": "c1"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "dice_roll",
                        "response": {"content": "4"},
                        "id": "c1",
                    }
                },
                {"text": "A four."},
            ],
        },
    ]


def test_the_system_instruction_is_trimmed_as_javascript_trims() -> None:
    messages = [
        {"role": "system", "content": "\ufeff  Rules.\x1c"},
        {"role": "user", "content": "Hi."},
    ]
    frame = ContextFrame(
        components=[
            Component(id="h", kind=ComponentKind.CHAT_HISTORY, source="t", messages=messages)
        ],
        metadata={TAVERN_GEMINI: {"systemInstruction": True, "user": "Alex", "char": "Mira"}},
    )
    request = DIALECT.lower(frame, MODEL, LoweringOptions())
    assert request["systemInstruction"] == {"parts": [{"text": "Rules.\x1c"}]}
    assert "\ufeff" in JS_WHITESPACE and "\x1c" not in JS_WHITESPACE


@needs_sdk
def test_the_sdk_takes_a_presets_request(tmp_path: Path) -> None:
    stops = json.dumps(["###"])
    request = compiled(tmp_path, chat=[], top_k=40, custom_stopping_strings=stops).request
    strict(types.Content, request["systemInstruction"])
    for content in request["contents"]:
        strict(types.Content, content)
    strict(types.GenerateContentConfig, generate_content_arguments(request, MODEL)["config"])


def test_macros_in_a_presets_stop_strings_are_filled(tmp_path: Path) -> None:
    stops = json.dumps(["\n{{char}}:", "{{noop}}", "###"])
    request = compiled(tmp_path, custom_stopping_strings=stops).request
    assert request["generationConfig"]["stopSequences"] == [
        "\nAlex:",
        "[Start a new Chat]",
        "\nMira Vale:",
        "###",
    ]
    openai = compiler.compile(
        preset(tmp_path, custom_stopping_strings=stops), context=run(), mode="legacy"
    )
    assert openai.request["stop"] == ["\nMira Vale:", "###"]
    caller = compiled(tmp_path, options={"stop": ("{{char}}",)})  # the caller's: as given
    assert caller.request["generationConfig"]["stopSequences"][-1] == "{{char}}"


def test_an_agent_preset_keeps_gemini_turn_rules(tmp_path: Path) -> None:
    """Tool calls and results of an agent-mode preset stay function parts, and a Gemini 3
    model's current-turn call gets its placeholder signature."""
    from tests.providers.frames import CHAT as TOOL_CHAT
    from tests.providers.frames import TOOLS

    prompts = [
        {"identifier": "main", "role": "system", "content": "You narrate."},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "agentResults", "marker": True},
    ]
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"prompts": prompts}), encoding="utf-8")
    result = ({"callId": "call_2", "tool": "dice.roll", "arguments": {"sides": 6}, "content": "4"},)
    context = {"chat": TOOL_CHAT, "tools": TOOLS, "toolResults": list(result)}
    request = compiler.compile(
        path, context=context, mode="agent", provider="gemini", model="gemini-3-pro-preview"
    ).request
    DIALECT.check(request)
    calls = [p for c in request["contents"] for p in c["parts"] if "functionCall" in p]
    responses = [p for c in request["contents"] for p in c["parts"] if "functionResponse" in p]
    assert len(calls) == len(responses) == 2
    assert calls[-1]["thoughtSignature"] == "skip_thought_signature_validator"
