"""Rules a provider would answer 400 to, found by a review of the four dialects (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.providers import get_dialect
from tests.providers.frames import TOOLS

PROVIDERS = ["openai", "openai-responses", "anthropic", "gemini"]
TOOL_CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "Roll."},
    {
        "role": "assistant",
        "content": None,
        "toolCalls": [{"id": "call_" + "a" * 60, "name": "dice.roll", "arguments": {"sides": 6}}],
    },
    {"role": "tool", "toolCallId": "call_" + "a" * 60, "content": "4"},
    {"role": "user", "content": "Thanks."},
]


def test_anthropic_writes_tool_turns_as_text_when_no_tools_are_offered() -> None:
    result = compiler.compile_string(
        "S <<agent.chat.history>>", context={"chat": TOOL_CHAT}, provider="anthropic"
    )
    body = json.dumps(result.request)
    assert "tool_use" not in body and "tool_result" not in body and "tools" not in result.request
    assert "[Tool call: dice.roll" in body and "[Tool result]" in body
    assert any(w.code == "lower.unsupported" for w in result.warnings)
    get_dialect("anthropic").check(result.request)


@pytest.mark.parametrize(("provider", "limit"), [("openai", 40), ("openai-responses", 64)])
def test_long_tool_call_ids_are_shortened_consistently(provider: str, limit: int) -> None:
    ctx = {"chat": TOOL_CHAT, "tools": TOOLS}
    result = compiler.compile_string(
        "S <<agent.tools.available>><<agent.chat.history>>", context=ctx, provider=provider
    )
    body = result.request
    if provider == "openai":
        call = body["messages"][2]["tool_calls"][0]["id"]
        answer = body["messages"][3]["tool_call_id"]
    else:
        items = body["input"]
        call = next(i["call_id"] for i in items if i.get("type") == "function_call")
        answer = next(i["call_id"] for i in items if i.get("type") == "function_call_output")
    assert call == answer and len(call) <= limit and call.startswith("call_")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("combinator", ["anyOf", "oneOf"])
def test_a_top_level_combinator_becomes_one_object(provider: str, combinator: str) -> None:
    tool = {
        "name": "pick",
        "description": "Pick one.",
        "parameters": {
            combinator: [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ]
        },
    }
    profile = compiler.resolve_profile(run={"tools": {"allow": ["*"]}})
    result = compiler.compile_string(
        "S <<agent.tools.available>><<agent.chat.history>>",
        context={"tools": [tool], "chat": [{"role": "user", "content": "Pick."}]},
        provider=provider,
        profile=profile,
    )
    text = json.dumps(result.request)
    assert combinator not in text
    assert '"a"' in text and '"b"' in text  # no branch is lost
    assert any("combinator" in w.message for w in result.warnings)
    get_dialect(provider).check(result.request)


@pytest.mark.parametrize("provider", ["openai", "openai-responses"])
def test_reasoning_models_get_no_sampling_options(provider: str) -> None:
    result = compiler.compile_string(
        "S Hi", provider=provider, model="o3-mini", temperature=0.7, top_p=0.9, stop=("END",)
    )
    assert not {"temperature", "top_p", "stop"} & set(result.request)
    assert len([w for w in result.warnings if w.code == "lower.unsupported"]) >= 2


def test_chat_sends_at_most_four_stop_sequences() -> None:
    result = compiler.compile_string("S Hi", stop=tuple(f"s{i}" for i in range(6)))
    assert result.request["stop"] == ["s0", "s1", "s2", "s3"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_chat_messages_are_left_out_everywhere(provider: str) -> None:
    chat = [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": None},
        {"role": "user", "content": "   "},
        {"role": "user", "content": "Go on."},
    ]
    result = compiler.compile_string(
        "S <<agent.chat.history>>", context={"chat": chat}, provider=provider
    )
    get_dialect(provider).check(result.request)
    assert "Go on." in json.dumps(result.request)


def test_an_injection_never_lands_between_a_call_and_its_results(tmp_path: Path) -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "content": "Main."},
            {"identifier": "chatHistory", "marker": True},
            {
                "identifier": "note",
                "role": "user",
                "content": "Remember the river.",
                "injection_position": 1,
                "injection_depth": 1,
            },
        ]
    }
    (tmp_path / "p.json").write_text(json.dumps(preset))
    chat = [
        {"role": "user", "content": "Roll twice."},
        {
            "role": "assistant",
            "content": None,
            "toolCalls": [
                {"id": "c1", "name": "dice.roll", "arguments": {"sides": 6}},
                {"id": "c2", "name": "dice.roll", "arguments": {"sides": 20}},
            ],
        },
        {"role": "tool", "toolCallId": "c1", "content": "4"},
        {"role": "tool", "toolCallId": "c2", "content": "17"},
    ]
    for provider in PROVIDERS:
        result = compiler.compile(
            tmp_path / "p.json", context={"chat": chat}, mode="legacy", provider=provider
        )
        get_dialect(provider).check(result.request)
        assert "Remember the river." in json.dumps(result.request)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([{"role": "user", "content": "a"}], False),
        ([{"role": "user", "content": "a"}, {"role": "tool", "content": "b"}], True),
        ([{"role": "assistant", "content": "a", "toolCalls": []}], False),
        ([{"role": "assistant", "content": "a", "toolCalls": [{"id": "c"}]}], True),
        ([{"role": "user", "content": "a", "toolCallId": "c"}], False),
        ([], False),
    ],
)
def test_tool_turns_are_calls_made_or_results(messages: list[Any], expected: bool) -> None:
    """An empty ``toolCalls`` list is no tool turn (no rewrite, no warning), as before the
    check took its C-speed path."""
    from compiler.providers.conversation import has_tool_turns

    assert has_tool_turns(messages) is expected
