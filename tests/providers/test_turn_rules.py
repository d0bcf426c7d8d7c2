"""The conversation-turn rules (docs, "Conversation turns"), each on every dialect it
concerns, compiled end to end from a run context and held to the official SDKs: call ids
unique per Responses request, Gemini 3 thought signatures, a final model turn Gemini refuses,
a first turn that is not a user turn, a prefill OpenAI cannot send, names in Responses, and
a tool result's error flag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.errors import APCError, LoweringError
from compiler.providers import get_dialect
from compiler.providers.gemini import generate_content_arguments
from compiler.providers.gemini_turns import SKIP_SIGNATURE, needs_signatures, refuses_prefill
from tests.providers.frames import TOOLS
from tests.providers.sdk import needs_openai, validate_strictly, wire_body
from tests.providers.test_openai_responses import REPLY as RESPONSES_REPLY

HISTORY = "System.\n<<agent.tools.available>>\n<<agent.chat.history>>"
CHAT_REPLY = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o",
    "choices": [],
}


def call(call_id: str, sides: int, **extra: Any) -> dict[str, Any]:
    return {"id": call_id, "name": "dice.roll", "arguments": {"sides": sides}, **extra}


def calling(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "toolCalls": list(calls)}


def answer(call_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "tool", "toolCallId": call_id, "content": text, **extra}


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def compiled(provider: str, chat: list[dict[str, Any]], model: str | None = None, **kw: Any) -> Any:
    context: dict[str, Any] = {"chat": chat, "tools": TOOLS}
    if "toolResults" in kw:
        context["toolResults"] = kw.pop("toolResults")
    template = kw.pop("template", HISTORY)
    result = compiler.compile_string(
        template, context=context, provider=provider, model=model, profile=None, **kw
    )
    get_dialect(provider).check(result.request)
    return result


def codes(result: Any) -> list[str]:
    return [d.code for d in result.warnings if d.code.startswith("lower.")]


# -- the SDKs --------------------------------------------------------------------------
def responses_sdk(request: dict[str, Any]) -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    validate_strictly(ResponseCreateParamsNonStreaming, request)
    path, body = wire_body(lambda client: client.responses.create(**request), RESPONSES_REPLY)
    assert path == "/v1/responses" and body == request


def chat_sdk(request: dict[str, Any]) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    validate_strictly(CompletionCreateParamsNonStreaming, request)
    path, body = wire_body(lambda client: client.chat.completions.create(**request), CHAT_REPLY)
    assert path == "/v1/chat/completions" and body == request


def anthropic_sdk(request: dict[str, Any]) -> None:
    from anthropic.types import ContentBlockParam
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    from tests.providers.test_anthropic import send, strictly

    strictly(MessageCreateParamsNonStreaming, request)
    for msg in request["messages"]:
        for block in msg["content"]:
            strictly(ContentBlockParam, block)
    assert send(request) == request


def gemini_sdk(request: dict[str, Any], model: str) -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    from tests.providers.test_gemini import expected_wire, strict

    for content in request["contents"]:
        strict(types.Content, content)
    import httpx2

    seen: dict[str, Any] = {}

    def handler(req: Any) -> Any:
        seen["url"], seen["body"] = str(req.url), json.loads(req.content)
        reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]}
        return httpx2.Response(200, json=reply)

    from google import genai

    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(
            httpx_client=httpx2.Client(transport=httpx2.MockTransport(handler))
        ),
    )
    client.models.generate_content(**generate_content_arguments(request, model))
    assert seen["url"].endswith(f"/models/{model}:generateContent")
    body = seen["body"]
    if body.get("generationConfig") == {} and "generationConfig" not in request:
        del body["generationConfig"]
    assert body == expected_wire(request)


# -- 1. Responses: a call id used again gets a suffix, in the call and its output ----------
REUSED = [
    user("Roll."),
    calling(call("call_1", 6)),
    answer("call_1", "4"),
    user("Again."),
    calling(call("call_1", 8)),
    answer("call_1", "7"),
    user("And?"),
]


@needs_openai
def test_responses_sends_each_call_id_once_in_a_request() -> None:
    request = compiled("openai-responses", REUSED).request
    items = [i for i in request["input"] if i.get("type")]
    assert [(i["type"], i["call_id"]) for i in items] == [
        ("function_call", "call_1"),
        ("function_call_output", "call_1"),
        ("function_call", "call_1_2"),
        ("function_call_output", "call_1_2"),
    ]
    assert items[3]["output"] == "7"
    responses_sdk(request)


def test_responses_check_refuses_a_call_id_sent_twice() -> None:
    """The documented 400 ("Duplicate function_call_output for call_id")."""
    request = compiled("openai-responses", REUSED).request
    for item in request["input"]:
        if item.get("call_id") == "call_1_2":
            item["call_id"] = "call_1"
    with pytest.raises(LoweringError) as info:
        get_dialect("openai-responses").check(request)
    assert info.value.code == "lower.duplicate_tool_call_id"


def test_a_suffixed_id_never_takes_an_id_the_request_uses() -> None:
    chat = [*REUSED[:6], user("More."), calling(call("call_1_2", 4)), answer("call_1_2", "2")]
    request = compiled("openai-responses", [*chat, user("Done?")]).request
    ids = [i["call_id"] for i in request["input"] if i.get("type") == "function_call"]
    assert len(set(ids)) == 3 and ids[2] == "call_1_2" and ids[1] == "call_1_3"


# -- 2. Gemini 3: thought signatures; a final model turn -------------------------------
SIGNED = [
    user("Roll twice."),
    calling(call("c1", 6, thoughtSignature="c2lnLTE="), call("c2", 8)),
    answer("c1", "4"),
    answer("c2", "5"),
]


def function_calls(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for c in request["contents"] for p in c["parts"] if "functionCall" in p]


def test_a_received_thought_signature_goes_back_as_received() -> None:
    model = "gemini-3-pro-preview"
    result = compiled("gemini", SIGNED, model)
    parts = function_calls(result.request)
    assert parts[0]["thoughtSignature"] == "c2lnLTE=" and "thoughtSignature" not in parts[1]
    assert codes(result) == []
    gemini_sdk(result.request, model)


def test_a_current_turn_call_without_a_signature_gets_googles_placeholder() -> None:
    model = "gemini-3-flash-preview"
    chat = [
        user("Roll."),
        calling(call("old", 4)),  # an earlier turn: not validated, nothing added
        answer("old", "1"),
        assistant("One."),
        user("Roll twice."),
        calling(call("c1", 6), call("c2", 8)),  # the current turn: its first call needs one
        answer("c1", "4"),
        answer("c2", "5"),
    ]
    result = compiled("gemini", chat, model)
    old, first, second = function_calls(result.request)
    assert "thoughtSignature" not in old and "thoughtSignature" not in second
    assert first["thoughtSignature"] == SKIP_SIGNATURE
    assert codes(result) == ["lower.missing_thought_signature"]
    assert "thoughtSignature" in (result.warnings[0].hint or "")
    gemini_sdk(result.request, model)
    with pytest.raises(APCError) as info:
        compiled("gemini", chat, model, strict=True)
    assert info.value.code == "lower.missing_thought_signature"


def test_gemini_2_5_gets_no_placeholder() -> None:
    result = compiled("gemini", SIGNED, "gemini-2.5-flash")
    assert function_calls(result.request)[1] == {
        "functionCall": {"name": "dice_roll", "args": {"sides": 8}, "id": "c2"}
    }
    assert codes(result) == []


def test_which_gemini_models_need_signatures_and_refuse_a_prefill() -> None:
    assert needs_signatures("gemini-3-pro-preview") and needs_signatures("gemini-3.6-flash")
    assert not needs_signatures("gemini-2.5-flash")
    for model in ("gemini-3.6-flash", "gemini-3.5-flash-lite", "gemini-3.7-flash", "gemini-4-pro"):
        assert refuses_prefill(model), model
    for model in ("gemini-3.5-flash", "gemini-2.5-flash", "gemini-3.1-pro-preview"):
        assert not refuses_prefill(model), model
    assert refuses_prefill("mystery-model")  # no version: assumed to refuse


PREFILLED = [user("Tell me a story."), assistant("Once upon a time")]


@pytest.mark.parametrize("model", ["gemini-3.6-flash", "gemini-3.5-flash-lite"])
def test_a_prefill_gemini_refuses_moves_into_the_last_user_turn(model: str) -> None:
    """The documented 400 ("Requests ending with a model turn are not supported")."""
    result = compiled("gemini", PREFILLED, model)
    contents = result.request["contents"]
    assert [c["role"] for c in contents] == ["user"]
    assert contents[-1]["parts"][-1] == {
        "text": "[Begin your reply with this text]\nOnce upon a time"
    }
    assert codes(result) == ["lower.prefill_unsupported"]
    gemini_sdk(result.request, model)


def test_a_prefill_older_gemini_models_take_is_sent_as_a_model_turn() -> None:
    result = compiled("gemini", PREFILLED, "gemini-2.5-flash")
    assert result.request["contents"][-1] == {
        "role": "model",
        "parts": [{"text": "Once upon a time"}],
    }
    assert codes(result) == []


# -- Anthropic: a call's thinking block goes back first in its turn --------------------
def test_a_calls_thinking_block_goes_back_first_in_its_assistant_turn() -> None:
    thinking = {"thinking": "They want a d6.", "signature": "EqQBCkYIARgCIkD"}
    chat = [
        user("Roll."),
        calling(call("c1", 6, thinking=thinking), text="Rolling."),
        answer("c1", "4"),
    ]
    request = compiled("anthropic", chat, "claude-sonnet-4-5").request
    turn = request["messages"][1]
    assert [b["type"] for b in turn["content"]] == ["thinking", "text", "tool_use"]
    assert turn["content"][0] == {"type": "thinking", **thinking}
    anthropic_sdk(request)


def test_a_bad_signature_in_the_run_context_is_refused() -> None:
    with pytest.raises(APCError) as info:
        compiled("gemini", [user("Roll."), calling(call("c1", 6, thoughtSignature=""))])
    assert info.value.code == "context.invalid_context"


# -- 3. the first turn is a user turn (Anthropic, Gemini) ------------------------------
GREETING_FIRST = [assistant("Welcome, traveller."), user("Hello.")]


def test_anthropic_puts_a_user_turn_before_a_greeting() -> None:
    result = compiled("anthropic", GREETING_FIRST, "claude-sonnet-4-5")
    messages = result.request["messages"]
    assert messages[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "[Start a new chat]"}],
    }
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert codes(result) == []
    anthropic_sdk(result.request)


def test_gemini_puts_a_user_turn_before_a_greeting() -> None:
    result = compiled("gemini", GREETING_FIRST, "gemini-2.5-flash")
    contents = result.request["contents"]
    assert contents[0] == {"role": "user", "parts": [{"text": "[Start a new chat]"}]}
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    gemini_sdk(result.request, "gemini-2.5-flash")


def test_the_presets_human_sysprompt_message_is_claudes_first_turn_not_geminis(
    tmp_path: Path,
) -> None:
    preset = tmp_path / "preset.json"
    preset.write_text(
        json.dumps(
            {
                "prompts": [{"identifier": "chatHistory", "marker": True}],
                "claude_use_sysprompt": True,
                "human_sysprompt_message": "Let's begin, {{user}}.",
            }
        )
    )
    run = {"persona": {"name": "Lin"}, "chat": [assistant("Welcome.")]}
    claude = compiler.compile(
        preset, context=run, provider="anthropic", model="claude-3-opus-20240229"
    )
    assert claude.request["messages"][0] == {"role": "user", "content": "Let's begin, Lin."}
    gemini = compiler.compile(preset, context=run, provider="gemini", model="gemini-2.5-flash")
    assert gemini.request["contents"][0] == {
        "role": "user",
        "parts": [{"text": "[Start a new chat]"}],
    }


def test_a_greeting_and_a_prefill_alone_go_to_anthropic_after_the_placeholder() -> None:
    chat, template = [assistant("Welcome.")], "System.\n<<agent.chat.history>>"
    result = compiled("anthropic", chat, "claude-sonnet-4-5", template=template)
    assert [m["role"] for m in result.request["messages"]] == ["user", "assistant"]
    assert codes(result) == []  # Claude 4.5 takes a prefill (no tools offered)
    anthropic_sdk(result.request)


# -- 4. what OpenAI would take with another meaning ------------------------------------
def with_prefill(provider: str, text: str) -> Any:
    """The compiled frame of a one-message chat with assistant text after the chat (a
    preset's ``assistant_prefill``), lowered for ``provider``."""
    from compiler._base.frame import Component, ComponentKind

    frame = compiled(provider, PREFILLED[:1]).frame
    tail = Component(
        id="prefill",
        kind=ComponentKind.PRESET_GUIDE,
        source="preset#assistant_prefill",
        inline_content=text,
        role="assistant",
        group=999,
    )
    return frame.model_copy(update={"components": [*frame.components, tail]})


@needs_openai
@pytest.mark.parametrize("provider", ["openai", "openai-responses"])
def test_openai_warns_of_a_prefill_it_cannot_continue(provider: str) -> None:
    from compiler.providers.dialect import LoweringOptions

    dialect, frame = get_dialect(provider), with_prefill(provider, "Once upon a time")
    report: list[Any] = []
    request = dialect.lower(frame, "gpt-4o", LoweringOptions(), report)
    dialect.check(request)
    assert [d.code for d in report] == ["lower.prefill_unsupported"]
    hint = report[0].hint or ""
    assert "Structured Outputs" in hint and "system or user" in hint
    (chat_sdk if provider == "openai" else responses_sdk)(request)
    with pytest.raises(LoweringError) as info:
        dialect.lower(frame, "gpt-4o", LoweringOptions(strict=True), [])
    assert info.value.code == "lower.prefill_unsupported"


def test_a_chat_that_ends_with_the_assistant_is_no_prefill_for_openai() -> None:
    """The model's next message follows it: what a SillyTavern generate after a reply means."""
    assert codes(compiled("openai", PREFILLED)) == []
    assert codes(compiled("openai", [*PREFILLED, user("Go on.")])) == []


@needs_openai
def test_responses_writes_each_speakers_name_into_the_content() -> None:
    chat = [user("Hi.", name="Ann"), user("Hello.", name="Bob"), assistant("Hey both.", name="Eve")]
    chat.append(user("Well?"))
    result = compiled("openai-responses", chat)
    texts = [
        i["content"] for i in result.request["input"] if i.get("role") in ("user", "assistant")
    ]
    assert texts == ["Ann: Hi.", "Bob: Hello.", "Eve: Hey both.", "Well?"]
    assert codes(result) == ["lower.unsupported"] and "Name: " in result.warnings[0].message
    responses_sdk(result.request)


# -- 4. a failed tool result is a flag, never a text marker ----------------------------
FAILED = [user("Roll."), calling(call("c1", 6)), answer("c1", "the die fell off", isError=True)]
MARKED = [user("Roll."), calling(call("c1", 6)), answer("c1", "[error] is a word here")]


def result_block(request: dict[str, Any]) -> dict[str, Any]:
    return next(b for m in request["messages"] for b in m["content"] if b["type"] == "tool_result")


def function_response(request: dict[str, Any]) -> dict[str, Any]:
    return next(
        p["functionResponse"]
        for c in request["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    )


def test_a_chat_tool_messages_error_flag_reaches_anthropic_and_gemini() -> None:
    anthropic = compiled("anthropic", FAILED, "claude-sonnet-4-5").request
    assert result_block(anthropic) == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": "the die fell off",
        "is_error": True,
    }
    anthropic_sdk(anthropic)
    gemini = compiled("gemini", FAILED, "gemini-2.5-flash").request
    assert function_response(gemini)["response"] == {"error": "the die fell off"}
    gemini_sdk(gemini, "gemini-2.5-flash")


def test_a_results_own_text_starting_with_the_old_marker_is_no_error() -> None:
    anthropic = compiled("anthropic", MARKED, "claude-sonnet-4-5").request
    assert "is_error" not in result_block(anthropic)
    assert result_block(anthropic)["content"] == "[error] is a word here"
    gemini = compiled("gemini", MARKED, "gemini-2.5-flash").request
    assert function_response(gemini)["response"] == {"content": "[error] is a word here"}


def test_the_run_contexts_tool_result_error_flag_reaches_every_dialect() -> None:
    results = [
        {
            "callId": "r1",
            "tool": "dice.roll",
            "arguments": {"sides": 6},
            "content": "no die",
            "isError": True,
        }
    ]
    kw = {"toolResults": results, "template": HISTORY + "\n<<agent.tool_results>>"}
    chat = [user("Roll.")]
    anthropic = compiled("anthropic", chat, "claude-sonnet-4-5", **dict(kw)).request
    assert (
        result_block(anthropic)["is_error"] is True
        and result_block(anthropic)["content"] == "no die"
    )
    gemini = compiled("gemini", chat, "gemini-2.5-flash", **dict(kw)).request
    assert function_response(gemini)["response"] == {"error": "no die"}
    chat_request = compiled("openai", chat, **dict(kw)).request
    tool = next(m for m in chat_request["messages"] if m["role"] == "tool")
    assert tool["content"] == "[error] no die"  # OpenAI has no flag: written out
    responses = compiled("openai-responses", chat, **dict(kw)).request
    output = next(i for i in responses["input"] if i.get("type") == "function_call_output")
    assert output["output"] == "[error] no die"
