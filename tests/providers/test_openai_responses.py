"""The Responses dialect ('openai-responses'): every shared frame's request is what the
official SDK accepts and sends unchanged, tool calls and their outputs pair as items, and
what Responses cannot express is reported, not sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

import compiler
from compiler._base.tokens import counter_for
from compiler.providers import get_dialect
from tests.providers.frames import CASES, CHAT, TOOLS, preset_case
from tests.providers.sdk import needs_openai, validate_strictly, wire_body

PROVIDER = "openai-responses"
DIALECT = get_dialect(PROVIDER)
COUNTER = counter_for("o200k_base")
OPTIONS = {"max_output_tokens": 256, "temperature": 0.7, "top_p": 0.9}
REPLY = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "model": "gpt-4o",
    "status": "completed",
    "output": [],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


def compile_case(name: str, **extra: Any) -> compiler.CompileResult:
    template, ctx, options = CASES[name]
    extra.setdefault("model", "gpt-4o")
    return compiler.compile_string(template, context=ctx, provider=PROVIDER, **options, **extra)


def requests() -> list[Any]:
    out = [
        pytest.param(lambda n=name: compile_case(n, **OPTIONS).request, id=name) for name in CASES
    ]
    case = preset_case()
    if case is not None:
        path, ctx = case
        out.append(
            pytest.param(
                lambda: (
                    compiler.compile(
                        path, context=ctx, provider=PROVIDER, model="gpt-4o", **OPTIONS
                    ).request
                ),
                id="corpus preset",
            )
        )
    return out


# -- the SDK ---------------------------------------------------------------------------
@needs_openai
@pytest.mark.parametrize("make", requests())
def test_the_sdk_type_accepts_the_request_strictly(make: Any) -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    validate_strictly(ResponseCreateParamsNonStreaming, make())


@needs_openai
@pytest.mark.parametrize("make", requests())
def test_the_sdk_sends_the_request_unchanged(make: Any) -> None:
    request = make()
    path, body = wire_body(lambda client: client.responses.create(**request), REPLY)
    assert path == "/v1/responses"
    assert body == request


@needs_openai
def test_strict_validation_catches_a_key_the_sdk_does_not_know() -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    request = compile_case("plain chat").request
    request["input"][0]["name"] = "Ann"
    with pytest.raises(AssertionError, match=r"input\[0\]\.name"):
        validate_strictly(ResponseCreateParamsNonStreaming, request)


# -- the request shape ------------------------------------------------------------------
def test_tool_calls_and_outputs_are_paired_items() -> None:
    request = compile_case("tools and results").request
    items = request["input"]
    calls = [i for i in items if i.get("type") == "function_call"]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert [c["call_id"] for c in calls] == [o["call_id"] for o in outputs] == ["call_1", "call_2"]
    for call in calls:
        answer = items[items.index(call) + 1]
        assert answer["type"] == "function_call_output" and answer["call_id"] == call["call_id"]
        assert call["name"] == "dice_roll"
    assert [json.loads(c["arguments"]) for c in calls] == [{"sides": 20}, {"sides": 6}]
    assert outputs[0]["output"] == "17"
    # an assistant message with no text becomes its calls alone; no item has a tool role
    assert all(i.get("content") is not None for i in items if "role" in i)
    assert all(i.get("role") != "tool" for i in items)


def test_tools_are_flat_and_not_strict() -> None:
    result = compile_case("tools and results")
    assert result.tools
    assert result.request["tools"] == [
        {"type": "function", "name": t["alias"]}
        | ({"description": t["description"]} if t["description"] else {})
        | {"parameters": t["parameters"], "strict": False}
        for t in result.tools
    ]


def test_an_assistant_text_with_calls_keeps_the_text_before_them() -> None:
    chat = [
        {"role": "user", "content": "Roll."},
        {
            "role": "assistant",
            "content": "Rolling.",
            "toolCalls": [{"id": "c1", "name": "dice.roll", "arguments": {"sides": 4}}],
        },
        {"role": "tool", "toolCallId": "c1", "content": "3"},
    ]
    request = compiler.compile_string(
        "S.\n<<agent.chat.history>>",
        context={"chat": chat, "tools": TOOLS},
        provider=PROVIDER,
        profile=None,
    ).request
    assert [i.get("type", i.get("role")) for i in request["input"]] == [
        "system",
        "user",
        "assistant",
        "function_call",
        "function_call_output",
    ]


@pytest.mark.parametrize(("model", "role"), [("o3", "developer"), ("gpt-4o", "system")])
def test_system_text_is_an_input_item_not_instructions(model: str, role: str) -> None:
    request = compile_case("system text mid-conversation", model=model).request
    assert "instructions" not in request
    items = request["input"]
    assert items[0]["role"] == role and items[-1]["role"] == role


# -- what Responses cannot express ------------------------------------------------------
def test_a_message_name_is_reported_and_left_out() -> None:
    result = compile_case("tools and results")
    assert all("name" not in i for i in result.request["input"] if "role" in i)
    (warning,) = [w for w in result.warnings if w.code == "lower.unsupported"]
    assert "message name ('Ann')" in warning.message and warning.severity == "warning"


def test_a_message_name_is_an_error_when_strict() -> None:
    with pytest.raises(compiler.LoweringError) as info:
        compile_case("tools and results", strict=True)
    assert info.value.code == "lower.unsupported"


def test_options_responses_lacks_are_reported_and_not_sent() -> None:
    result = compile_case(
        "plain chat",
        frequency_penalty=0.5,
        presence_penalty=0.1,
        seed=7,
        stop=("END",),
        max_output_tokens=100,
        temperature=0.2,
    )
    request = result.request
    assert {k: request[k] for k in ("max_output_tokens", "temperature")} == {
        "max_output_tokens": 100,
        "temperature": 0.2,
    }
    for key in ("frequency_penalty", "presence_penalty", "seed", "stop", "max_completion_tokens"):
        assert key not in request
    reported = [w.message for w in result.warnings if w.code == "lower.unsupported"]
    assert len(reported) == 4
    for key in ("frequency_penalty", "presence_penalty", "seed", "stop"):
        assert any(f"express {key}:" in m for m in reported)


def test_max_output_tokens_below_the_minimum_is_raised_to_16() -> None:
    result = compile_case("plain chat", max_output_tokens=5)
    assert result.request["max_output_tokens"] == 16
    assert any("max_output_tokens 5" in w.message for w in result.warnings)


# -- counting ---------------------------------------------------------------------------
def test_the_count_is_the_per_item_model() -> None:
    count = COUNTER.count
    request = {
        "model": "gpt-4o",
        "input": [
            {"role": "user", "content": "Roll a d20."},
            {"type": "function_call", "call_id": "c1", "name": "dice_roll", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "17"},
        ],
    }
    expected = 3 + (3 + count("user") + count("Roll a d20."))
    expected += 3 + count("dice_roll") + count("{}")
    expected += 3 + count("17")
    assert DIALECT.count_request(request, COUNTER) == expected
    with_instructions = {**request, "instructions": "Be brief."}
    assert DIALECT.count_request(with_instructions, COUNTER) == expected + 3 + count(
        "system"
    ) + count("Be brief.")


def test_the_count_ignores_generation_options() -> None:
    plain = compile_case("tools and results").request
    tuned = compile_case("tools and results", max_output_tokens=64, temperature=1.0).request
    assert plain != tuned
    assert DIALECT.count_request(plain, COUNTER) == DIALECT.count_request(tuned, COUNTER)


def test_message_tokens_add_up_to_the_request() -> None:
    messages = [m for m in CHAT if "name" not in m]
    request = {"input": [i for m in messages for i in DIALECT.items(m)]}  # type: ignore[attr-defined]
    assert DIALECT.count_request(request, COUNTER) == 3 + sum(
        DIALECT.message_tokens(m, COUNTER)
        for m in messages  # type: ignore[arg-type]
    )


# -- check(): the 400 rules --------------------------------------------------------------
def _request(*items: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-4o", "input": list(items)}
    if tools is not None:
        body["tools"] = tools
    return body


CALL = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
USER = {"role": "user", "content": "Hi."}


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name, "parameters": {"type": "object"}, "strict": False}


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        (_request(USER, OUTPUT), "lower.orphan_tool_result"),
        (_request(USER, OUTPUT, CALL), "lower.orphan_tool_result"),
        (_request(USER, CALL, OUTPUT, OUTPUT), "lower.orphan_tool_result"),
        (_request(USER, CALL), "lower.unanswered_tool_call"),
        (_request(USER, CALL, USER), "lower.unanswered_tool_call"),
        (_request(), "lower.empty_request"),
        (_request({"role": "tool", "content": "x"}), "lower.invalid_role"),
        (_request({"role": "user", "content": None}), "lower.empty_content"),
        (_request(USER, CALL, {**OUTPUT, "output": None}), "lower.empty_content"),
        (_request(USER, tools=[_tool("dice.roll")]), "lower.invalid_tool_name"),
        (_request(USER, tools=[_tool("x" * 65)]), "lower.invalid_tool_name"),
        (_request(USER, tools=[_tool("a"), _tool("a")]), "lower.duplicate_tool_name"),
        (_request(USER, tools=[_tool(f"t{i}") for i in range(129)]), "lower.too_many_tools"),
    ],
)
def test_check_refuses_what_the_api_answers_400(request_: dict[str, Any], code: str) -> None:
    with pytest.raises(compiler.LoweringError) as info:
        DIALECT.check(request_)
    assert info.value.code == code


def test_check_accepts_a_paired_call() -> None:
    DIALECT.check(_request(USER, CALL, OUTPUT, tools=[_tool(f"t{i}") for i in range(128)]))


def test_the_dialect_has_the_openai_windows_and_exact_counts() -> None:
    assert DIALECT.name == PROVIDER
    assert DIALECT.window("gpt-4o") == 128_000 and DIALECT.window("gpt-5") == 400_000
    assert DIALECT.exact_counts and DIALECT.safety_margin == 0
