"""SillyTavern's marker formats: personality_format, scenario_format, wi_format, examples."""

from __future__ import annotations

import json
from pathlib import Path

import compiler

CARD = {
    "name": "Aqua",
    "description": "A goddess.",
    "personality": "cheerful",
    "scenario": "in the square",
    "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Hello!\n<START>\n{{user}}: Bye",
}


def compile_with(tmp_path: Path, extra: dict[str, str]) -> list[str]:
    ids = ["charPersonality", "scenario", "worldInfoBefore", "dialogueExamples", "chatHistory"]
    preset = {
        "prompts": [{"identifier": i, "marker": True} for i in ids],
        "prompt_order": [
            {"character_id": 100001, "order": [{"identifier": i, "enabled": True} for i in ids]}
        ],
        **extra,
    }
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset))
    ctx = {
        "character": CARD,
        "persona": {"name": "Kazuma", "description": ""},
        "worldInfo": [{"content": "Axel is a town.", "position": "before"}],
        "chat": [{"role": "user", "content": "hey"}],
    }
    result = compiler.compile(path, context=ctx, mode="legacy")
    return [
        m["content"] if "name" not in m else f"{m['name']}={m['content']}"
        for m in result.request["messages"]
    ]


def test_preset_formats_apply(tmp_path: Path) -> None:
    got = compile_with(
        tmp_path,
        {
            "personality_format": "[{{char}}'s personality: {{personality}}]",
            "scenario_format": "[Circumstances: {{scenario}}]",
            "wi_format": "World: {0}",
            "new_example_chat_prompt": "[Example Chat]",
        },
    )
    assert got == [
        "[Aqua's personality: cheerful]",
        "[Circumstances: in the square]",
        "World: Axel is a town.",
        "[Example Chat]",
        "example_user=Hi",
        "example_assistant=Hello!",
        "[Example Chat]",
        "example_user=Bye",
        "[Start a new Chat]",
        "hey",
    ]


def test_defaults_without_formats(tmp_path: Path) -> None:
    """A preset without the keys keeps SillyTavern's shipped formats (st-oracle capture
    synth_bare)."""
    got = compile_with(tmp_path, {})
    assert got[:3] == [
        "[Aqua's personality: cheerful]",
        "[Circumstances and context of the dialogue: in the square]",
        "Axel is a town.",
    ]
    assert got[3:6] == ["[Example Chat]", "example_user=Hi", "example_assistant=Hello!"]


def test_empty_formats_and_formats_without_a_placeholder(tmp_path: Path) -> None:
    """As SillyTavern's preparePromptsForChatCompletion: an empty personality or scenario
    format sends nothing, an empty wi_format the entries as they are, and a format without
    its placeholder its own text."""
    got = compile_with(
        tmp_path, {"personality_format": "", "scenario_format": "", "wi_format": " "}
    )
    assert got[0] == "Axel is a town."
    got = compile_with(tmp_path, {"personality_format": "[{{char}} is moody]"})
    assert got[0] == "[Aqua is moody]"


def test_examples_and_new_chat_follow_the_preset(tmp_path: Path) -> None:
    """Issue 12, item 10: one system message per example message (a message runs from a
    speaker's line to the next speaker's), each block after new_example_chat_prompt, and
    new_chat_prompt right before the history; empty prompts are left out."""
    got = compile_with(
        tmp_path, {"new_example_chat_prompt": "", "new_chat_prompt": "[New {{char}}]"}
    )
    assert got[3:] == [
        "example_user=Hi",
        "example_assistant=Hello!",
        "example_user=Bye",
        "[New Aqua]",
        "hey",
    ]


def test_an_empty_chat_starts_with_the_greeting(tmp_path: Path) -> None:
    """Issue 12, item 11: first_mes (or the chosen alternate greeting), macros filled, as
    the assistant's message."""
    card = {**CARD, "first_mes": "Hi {{user}}!", "alternate_greetings": ["Yo {{user}}."]}
    preset = {"prompts": [{"identifier": "chatHistory", "marker": True}]}
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset))
    for greeting, text in ((0, "Hi Kazuma!"), (1, "Yo Kazuma.")):
        ctx = {"character": card, "persona": {"name": "Kazuma"}, "chat": [], "greeting": greeting}
        messages = compiler.compile(path, context=ctx, mode="legacy").request["messages"]
        assert messages[1:] == [{"role": "assistant", "content": text}]


def test_the_greeting_is_scanned_and_is_the_last_message(tmp_path: Path) -> None:
    """An empty chat starts with the greeting before world info scans it (st-oracle capture
    synth_greeting_world); {{lastMessage}} is the greeting."""
    card = {**CARD, "first_mes": "A storm comes, {{user}}."}
    preset = {
        "prompts": [
            {"identifier": "worldInfoBefore", "marker": True},
            {"identifier": "chatHistory", "marker": True},
            {"identifier": "jailbreak", "role": "system", "content": "Last: {{lastMessage}}"},
        ],
        "new_chat_prompt": "",
    }
    world = {"entries": {"0": {"uid": 0, "key": ["storm"], "content": "Storms are rare."}}}
    (tmp_path / "world.json").write_text(json.dumps(world))
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset))
    ctx = {"character": card, "persona": {"name": "Kazuma"}, "chat": [], "worldInfo": "world.json"}
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    messages = compiler.compile(path, context=tmp_path / "run.json", mode="legacy").request[
        "messages"
    ]
    assert [m["content"] for m in messages] == [
        "Storms are rare.",
        "A storm comes, Kazuma.",
        "Last: A storm comes, Kazuma.",
    ]


def test_send_if_empty_answers_the_assistant(tmp_path: Path) -> None:
    """The preset's send_if_empty is the user's message after the assistant's (st-oracle
    capture synth_send_if_empty), not after the user's."""
    preset = {
        "prompts": [{"identifier": "chatHistory", "marker": True}],
        "new_chat_prompt": "",
        "send_if_empty": " [{{user}} nods.] ",
    }
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset))
    for chat, tail in (
        (
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
            "[Kazuma nods.]",
        ),
        ([{"role": "user", "content": "hi"}], "hi"),
        ([], "[Kazuma nods.]"),  # after the greeting
    ):
        ctx = {"character": {**CARD, "first_mes": "Hello!"}, "persona": {"name": "Kazuma"}}
        messages = compiler.compile(path, context={**ctx, "chat": chat}, mode="legacy").request
        assert messages["messages"][-1]["content"] == tail


def test_a_disabled_main_is_kept_empty_for_the_cards_system_prompt(tmp_path: Path) -> None:
    """SillyTavern's PromptManager keeps a disabled main with empty content: the card's
    system_prompt still replaces it, {{original}} empty (st-oracle capture synth_order_roles);
    without one nothing is sent for it."""
    ids = ["main", "chatHistory"]
    preset = {
        "prompts": [
            {"identifier": "main", "role": "system", "content": "Main text."},
            {"identifier": "chatHistory", "marker": True},
        ],
        "prompt_order": [
            {
                "character_id": 100001,
                "order": [{"identifier": i, "enabled": i != "main"} for i in ids],
            }
        ],
        "new_chat_prompt": "",
    }
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset))
    chat = [{"role": "user", "content": "hey"}]
    for card, first in (
        ({**CARD, "system_prompt": "{{original}}Be {{char}}."}, "Be Aqua."),
        (CARD, "hey"),
    ):
        ctx = {"character": card, "chat": chat}
        messages = compiler.compile(path, context=ctx, mode="legacy").request["messages"]
        assert messages[0]["content"] == first
