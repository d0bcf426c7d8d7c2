"""History tool calls, held once on the provider-neutral conversation for every dialect:
a call's name (under the alias tool definitions take) must be one the provider takes
(``lower.invalid_tool_name``), and no message makes two calls with one id
(``lower.duplicate_tool_call_id``); a later turn may use an id again."""

from __future__ import annotations

from typing import Any

import pytest

import compiler
from compiler.errors import CODES, LoweringError
from compiler.providers import get_dialect
from compiler.providers.conversation import check_pairing
from tests.providers.frames import TOOLS

PROVIDERS = ["openai", "openai-responses", "anthropic", "gemini"]
TEMPLATE = "S <<agent.tools.available>><<agent.chat.history>>"


def call(call_id: str, name: str = "dice.roll") -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": {"sides": 6}}


def chat(calls: list[dict[str, Any]], answers: list[str]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Roll."},
        {"role": "assistant", "content": None, "toolCalls": calls},
        *({"role": "tool", "toolCallId": a, "content": "4"} for a in answers),
        {"role": "user", "content": "Thanks."},
    ]


def compile_chat(provider: str, messages: list[dict[str, Any]]) -> compiler.CompileResult:
    ctx = {"chat": messages, "tools": TOOLS}
    return compiler.compile_string(TEMPLATE, context=ctx, provider=provider)


def test_the_code_is_registered() -> None:
    assert CODES["lower.duplicate_tool_call_id"] is LoweringError


# -- names -----------------------------------------------------------------------------
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", ["get_/whoami", "files read", "x" * 129])
def test_a_call_name_the_provider_refuses_is_refused(provider: str, name: str) -> None:
    with pytest.raises(LoweringError) as err:
        compile_chat(provider, chat([call("c1", name)], ["c1"]))
    assert err.value.code == "lower.invalid_tool_name"
    assert "message" in err.value.message and provider in err.value.message


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic"])
def test_a_name_too_long_for_the_provider_is_refused(provider: str) -> None:
    limit = 64 if provider.startswith("openai") else 128
    with pytest.raises(LoweringError, match=r"takes tool names"):
        compile_chat(provider, chat([call("c1", "a" * (limit + 1))], ["c1"]))
    assert compile_chat(provider, chat([call("c1", "a" * limit)], ["c1"])).request


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_dotted_call_name_takes_the_definitions_alias(provider: str) -> None:
    result = compile_chat(provider, chat([call("c1", "dice.roll")], ["c1"]))
    text = str(result.request)
    assert "dice_roll" in text and "'dice.roll'" not in text
    get_dialect(provider).check(result.request)


def test_anthropic_without_tool_definitions_writes_any_name_as_text() -> None:
    ctx = {"chat": chat([call("c1", "files read")], ["c1"])}
    result = compiler.compile_string("S <<agent.chat.history>>", context=ctx, provider="anthropic")
    assert "[Tool call: files read" in str(result.request)


def test_gemini_takes_the_names_its_rule_allows() -> None:
    result = compile_chat("gemini", chat([call("c1", "ns:tool")], ["c1"]))
    assert "ns:tool" in str(result.request)
    with pytest.raises(LoweringError, match="takes tool names"):
        compile_chat("openai", chat([call("c1", "ns:tool")], ["c1"]))


# -- ids -------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", PROVIDERS)
def test_two_calls_with_one_id_in_one_message_are_refused(provider: str) -> None:
    with pytest.raises(LoweringError) as err:
        compile_chat(provider, chat([call("c1"), call("c1")], ["c1"]))
    assert err.value.code == "lower.duplicate_tool_call_id"
    assert "two tool calls with the id 'c1'" in err.value.message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_id_a_later_turn_uses_again_pairs_with_that_turns_answer(provider: str) -> None:
    first = chat([call("c1")], ["c1"])
    again = chat([call("c1")], ["c1"])
    result = compile_chat(provider, [*first, {"role": "assistant", "content": "ok"}, *again])
    get_dialect(provider).check(result.request)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_distinct_ids_pass(provider: str) -> None:
    result = compile_chat(provider, chat([call("c1"), call("c2")], ["c1", "c2"]))
    get_dialect(provider).check(result.request)


def test_the_pairing_check_itself_refuses_a_repeated_id() -> None:
    messages: list[Any] = chat([call("c1"), call("c1")], ["c1"])
    with pytest.raises(LoweringError) as err:
        check_pairing(messages)
    assert err.value.code == "lower.duplicate_tool_call_id"
