"""The Gemini dialect (issue 11): every shared frame lowers to a generateContent body that the
official SDK's types accept strictly and that its client sends unchanged (mock transport, no
network); and the lowering's own rules: turns, system text, names, function calls and their
responses, tool parameter schemas, options, counting and the shape check."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import compiler
from compiler._base.frame import Component, ComponentKind, ContextFrame, Message, ToolSpec
from compiler._base.tokens import counter_for
from compiler.errors import Diagnostic, LoweringError
from compiler.providers import get_dialect
from compiler.providers.dialect import LoweringOptions
from compiler.providers.gemini import DIALECT, generate_content_arguments
from compiler.providers.gemini_schema import check_parameters, gemini_parameters
from tests.providers.frames import CASES, preset_case

try:
    from google import genai
    from google.genai import types
except ImportError:  # pragma: no cover - the test extras install it
    genai = types = None  # type: ignore[assignment]

needs_sdk = pytest.mark.skipif(
    genai is None, reason="google-genai is not installed (pip install -e '.[test]')"
)
MODEL = "gemini-2.5-flash"
OPTIONS = {
    "max_output_tokens": 256,
    "temperature": 0.7,
    "top_p": 0.9,
    "top_k": 40,
    "seed": 7,
    "stop": ("THE END",),
    "frequency_penalty": 0.1,
    "presence_penalty": 0.2,
}


def shared_requests() -> dict[str, dict[str, Any]]:
    """Each shared frame lowered for Gemini (with every generation option set)."""
    out = {}
    for name, (template, ctx, options) in CASES.items():
        result = compiler.compile_string(
            template, context=ctx, provider="gemini", model=MODEL, **options, **OPTIONS
        )
        out[name] = result.request
    case = preset_case()
    if case is not None:
        path, ctx = case
        out["corpus preset"] = compiler.compile(
            path, context=ctx, provider="gemini", model=MODEL
        ).request
    return out


REQUESTS = shared_requests()


# -- the official SDK ------------------------------------------------------------------------
def strict(model: Any, value: Any) -> None:
    """``value`` validates as ``model`` in strict mode and dumps back unchanged (so no key
    was ignored or coerced)."""
    parsed = model.model_validate_json(json.dumps(value), strict=True)
    assert parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == value


@needs_sdk
@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_the_sdk_types_accept_each_shared_request_strictly(name: str) -> None:
    request = REQUESTS[name]
    assert set(request) <= {"contents", "systemInstruction", "tools", "generationConfig"}
    for content in request["contents"]:
        assert content["role"] in ("user", "model")  # the SDK does not check roles
        strict(types.Content, content)
    if "systemInstruction" in request:
        strict(types.Content, request["systemInstruction"])
    for tool in request.get("tools", []):
        strict(types.Tool, tool)
        for declaration in tool["functionDeclarations"]:
            strict(types.FunctionDeclaration, declaration)
            if "parameters" in declaration:
                strict(types.Schema, declaration["parameters"])
    config = generate_content_arguments(request, MODEL)["config"]
    strict(types.GenerateContentConfig, config)
    DIALECT.check(request)


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def snake_schema(schema: Any) -> Any:
    """A Schema with its keywords in snake_case, as the SDK sends nested tool parameters
    (``maxItems`` -> ``max_items``; the API takes both spellings); property names stay."""
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {k: snake_schema(v) for k, v in value.items()}
        elif key in ("items",):
            out[key] = snake_schema(value)
        elif key == "anyOf":
            out["any_of"] = [snake_schema(v) for v in value]
        else:
            out[_snake(key)] = value
    return out


def expected_wire(request: dict[str, Any]) -> dict[str, Any]:
    wire = json.loads(json.dumps(request))
    for tool in wire.get("tools", []):
        for declaration in tool["functionDeclarations"]:
            if "parameters" in declaration:
                declaration["parameters"] = snake_schema(declaration["parameters"])
            if "parametersJsonSchema" in declaration:  # the SDK's spelling; the schema as is
                declaration["parameters_json_schema"] = declaration.pop("parametersJsonSchema")
    return wire


def send(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Send ``request`` through the official client over a mock transport: the URL and the
    JSON body that reached the wire."""
    try:
        import httpx2 as httpx  # the SDK's transport since google-genai 3
    except ImportError:  # pragma: no cover - older SDKs use httpx
        import httpx  # type: ignore[no-redef]
    seen: dict[str, Any] = {}

    def handler(req: Any) -> Any:
        seen["url"], seen["body"] = str(req.url), json.loads(req.content)
        reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]}
        return httpx.Response(200, json=reply)

    client = genai.Client(
        api_key="test-key",
        http_options=types.HttpOptions(
            httpx_client=httpx.Client(transport=httpx.MockTransport(handler))
        ),
    )
    response = client.models.generate_content(**generate_content_arguments(request, MODEL))
    assert response.text == "ok"
    return seen["url"], seen["body"]


def assert_sent_unchanged(request: dict[str, Any]) -> None:
    url, body = send(request)
    assert url.endswith(f"/models/{MODEL}:generateContent")  # the model is in the URL only
    if body.get("generationConfig") == {} and "generationConfig" not in request:
        del body["generationConfig"]  # the SDK sends an empty one along with any config
    assert body == expected_wire(request)


@needs_sdk
@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_the_sdk_client_sends_each_shared_request_unchanged(name: str) -> None:
    request = REQUESTS[name]
    assert_sent_unchanged(request)


@needs_sdk
def test_nested_schema_keywords_survive_the_sdk_round_trip() -> None:
    tool: ToolSpec = {
        "name": "notes.tag",
        "alias": "notes_tag",
        "description": "Tag notes.",
        "requireApproval": False,
        "parameters": {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "when": {"type": ["string", "null"], "format": "date-time"},
                "mode": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "required": ["tags"],
        },
    }
    request = DIALECT.lower(frame([{"role": "user", "content": "hi"}], tools=[tool]), MODEL)
    strict(types.Tool, request["tools"][0])
    assert_sent_unchanged(request)


# -- unit tests -------------------------------------------------------------------------------
def frame(
    messages: list[Message], system: str | None = None, tools: list[ToolSpec] | None = None
) -> ContextFrame:
    comps = []
    if system is not None:
        comps.append(
            Component(id="sys", kind=ComponentKind.PRESET_GUIDE, source="t", inline_content=system)
        )
    if tools:
        comps.append(
            Component(id="tools", kind=ComponentKind.TOOL_DEFINITIONS, source="t", tools=tools)
        )
    comps.append(Component(id="h", kind=ComponentKind.CHAT_HISTORY, source="t", messages=messages))
    return ContextFrame(components=comps)


def lower(messages: list[Message], **kw: Any) -> tuple[dict[str, Any], list[Diagnostic]]:
    options = kw.pop("options", LoweringOptions())
    model = kw.pop("model", MODEL)
    report: list[Diagnostic] = []
    request = DIALECT.lower(frame(messages, **kw), model, options, report)
    DIALECT.check(request)
    return request, report


def test_the_dialect_is_registered_with_its_facts() -> None:
    assert get_dialect("gemini") is DIALECT
    assert not DIALECT.exact_counts and 0 < DIALECT.safety_margin < 1
    assert DIALECT.encoding("gemini-2.5-pro") == "o200k_base"
    assert DIALECT.window("gemini-2.5-flash-lite") == 1_048_576
    assert DIALECT.window("models/gemini-1.5-pro-002") == 2_097_152
    assert DIALECT.window("gpt-4o") is None


def test_roles_map_to_user_and_model_and_same_role_turns_merge() -> None:
    request, report = lower(
        [
            {"role": "user", "content": "a"},
            {"role": "user", "content": "b"},
            {"role": "assistant", "content": "c"},
            {"role": "assistant", "content": ""},  # nothing to send: no empty part
            {"role": "assistant", "content": "d"},
            {"role": "user", "content": "e"},
        ],
        system="Rules.",
    )
    assert request["systemInstruction"] == {"parts": [{"text": "Rules."}]}
    assert request["contents"] == [
        {"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
        {"role": "model", "parts": [{"text": "c"}, {"text": "d"}]},
        {"role": "user", "parts": [{"text": "e"}]},
    ]
    assert report == []


def test_system_text_mid_conversation_is_a_tagged_user_part_and_a_warning() -> None:
    request, report = lower(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "system", "content": "Stay in character."},
            {"role": "user", "content": "go on"},
        ]
    )
    assert request["contents"][-1] == {
        "role": "user",
        "parts": [{"text": "[System note]\nStay in character."}, {"text": "go on"}],
    }
    assert [d.code for d in report] == ["lower.unsupported"]
    assert "system text" in report[0].message and report[0].severity == "warning"
    with pytest.raises(LoweringError) as info:
        lower(
            [{"role": "user", "content": "hi"}, {"role": "system", "content": "x"}],
            options=LoweringOptions(strict=True),
        )
    assert info.value.code == "lower.unsupported"


def test_system_text_alone_is_sent_as_the_user_turn() -> None:
    request, report = lower([], system="Write a poem.")
    assert request["contents"] == [{"role": "user", "parts": [{"text": "Write a poem."}]}]
    assert "systemInstruction" not in request and len(report) == 1


def test_a_message_name_is_written_before_its_text_and_reported() -> None:
    request, report = lower([{"role": "user", "content": "Hello.", "name": "Ann"}])
    assert request["contents"][0]["parts"] == [{"text": "Ann: Hello."}]
    assert "Ann" in report[0].message


CALLS: list[Message] = [
    {"role": "user", "content": "Roll twice."},
    {
        "role": "assistant",
        "content": "Rolling.",
        "toolCalls": [
            {"id": "c1", "name": "dice.roll", "arguments": {"sides": 6}},
            {"id": "c2", "name": "dice.roll", "arguments": {"sides": 20}},
        ],
    },
    {"role": "tool", "toolCallId": "c1", "content": "4"},
    {"role": "tool", "toolCallId": "c2", "content": "the die fell off the table", "isError": True},
    {"role": "user", "content": "And?"},
]


def test_function_calls_and_responses_pair_in_number_and_name() -> None:
    request, report = lower(CALLS)
    model, answer = request["contents"][1], request["contents"][2]
    assert model == {
        "role": "model",
        "parts": [
            {"text": "Rolling."},
            {"functionCall": {"name": "dice_roll", "args": {"sides": 6}, "id": "c1"}},
            {"functionCall": {"name": "dice_roll", "args": {"sides": 20}, "id": "c2"}},
        ],
    }
    assert answer == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "dice_roll", "response": {"content": "4"}, "id": "c1"}},
            {
                "functionResponse": {
                    "name": "dice_roll",
                    "response": {"error": "the die fell off the table"},
                    "id": "c2",
                }
            },
            {"text": "And?"},
        ],
    }
    assert report == []


def test_a_function_call_turn_that_opens_the_conversation_gets_a_user_turn() -> None:
    """As SillyTavern sends Gemini: the placeholder user turn, with no report."""
    request, report = lower(CALLS[1:4], system="Rules.")
    assert request["contents"][0] == {"role": "user", "parts": [{"text": "[Start a new chat]"}]}
    assert request["contents"][1]["role"] == "model" and report == []


def test_the_check_refuses_what_gemini_answers_400_to() -> None:
    good, _ = lower(CALLS)

    def refused(request: dict[str, Any]) -> str:
        with pytest.raises(LoweringError) as info:
            DIALECT.check(request)
        return info.value.code

    def edit(**changes: Any) -> dict[str, Any]:
        request = json.loads(json.dumps(good))
        request.update(changes)
        return request

    contents = good["contents"]
    assert refused(edit(contents=[])) == "lower.empty_request"
    assert refused(edit(contents=[{"role": "assistant", "parts": [{"text": "x"}]}])) == (
        "lower.invalid_role"
    )
    assert refused(edit(contents=[{"role": "user", "parts": [{"text": ""}]}])) == (
        "lower.empty_content"
    )
    assert refused(edit(contents=[{"role": "user", "parts": [{}]}])) == "lower.empty_content"
    one_answer = {**contents[2], "parts": contents[2]["parts"][:1]}
    assert refused(edit(contents=[*contents[:2], one_answer])) == "lower.unanswered_tool_call"
    assert refused(edit(contents=contents[:2])) == "lower.unanswered_tool_call"
    assert refused(edit(contents=[contents[0], contents[2]])) == "lower.orphan_tool_result"
    assert refused(edit(contents=contents[1:])) == "lower.invalid_tool_call"
    declaration = {"name": "9lives", "description": "x"}
    assert refused(edit(tools=[{"functionDeclarations": [declaration]}])) == (
        "lower.invalid_tool_name"
    )
    twice = [{"name": "a_b"}, {"name": "a_b"}]
    assert refused(edit(tools=[{"functionDeclarations": twice}])) == "lower.duplicate_tool_name"
    loose = {
        "name": "f",
        "parameters": {"type": "OBJECT", "properties": {"x": {}}, "additionalProperties": False},
    }
    assert refused(edit(tools=[{"functionDeclarations": [loose]}])) == "lower.invalid_tool_schema"


def tool(parameters: dict[str, Any]) -> ToolSpec:
    return {
        "name": "t.x",
        "alias": "t_x",
        "description": "A tool.",
        "parameters": parameters,
        "requireApproval": False,
    }


def test_schema_keywords_outside_the_subset_are_rewritten_and_reported() -> None:
    parameters = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri"},
            "size": {"type": "integer", "enum": [1, 2, 3], "description": "Size."},
            "kind": {"const": "fixed"},
            "who": {"$ref": "#/$defs/person"},
            "extra": {"type": "object", "additionalProperties": {"type": "string"}},
            "n": {"type": ["integer", "null"], "exclusiveMinimum": 0},
        },
        "required": ["url", "ghost"],
        "additionalProperties": False,
        "$defs": {"person": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    request, report = lower(
        [{"role": "user", "content": "hi"}], tools=[tool(parameters)], model="gemini-2.0-flash"
    )
    declared = request["tools"][0]["functionDeclarations"][0]
    assert declared["parameters"] == {
        "type": "OBJECT",
        "properties": {
            "url": {"type": "STRING"},
            "size": {"type": "INTEGER", "description": "Size. Allowed values: 1, 2, 3."},
            "kind": {"type": "STRING", "enum": ["fixed"]},
            "who": {"type": "OBJECT", "properties": {"name": {"type": "STRING"}}},
            "extra": {"type": "OBJECT"},
            "n": {"type": "INTEGER", "nullable": True},
        },
        "required": ["url"],
    }
    (warning,) = report
    assert warning.code == "lower.unsupported" and "t_x" in warning.message
    for lost in ("format 'uri'", "enum", "additionalProperties", "exclusiveMinimum", "ghost"):
        assert lost in warning.message
    assert "$schema" not in warning.message  # constrains nothing: dropped silently
    check_parameters("t_x", declared["parameters"])


def test_a_function_without_properties_has_no_parameters() -> None:
    for parameters in ({"type": "object", "properties": {}, "additionalProperties": False}, {}):
        notes: list[str] = []
        assert gemini_parameters(parameters, notes) is None and notes == []
    request, report = lower([{"role": "user", "content": "hi"}], tools=[tool({"type": "object"})])
    assert request["tools"][0]["functionDeclarations"][0] == {
        "name": "t_x",
        "description": "A tool.",
    }
    assert report == []


def test_a_recursive_ref_is_dropped_and_noted() -> None:
    notes: list[str] = []
    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}
    out = gemini_parameters({**node, "$defs": {"node": node}}, notes)
    assert out is not None and out["properties"]["child"]["properties"]["child"] == {}
    assert any("$ref" in n for n in notes)


def test_generation_options_go_to_generation_config() -> None:
    options = LoweringOptions(
        max_output_tokens=100,
        temperature=0.5,
        top_p=0.9,
        seed=3,
        stop=tuple("abcdef"),
        frequency_penalty=0.1,
        presence_penalty=0.2,
        cache_stable=True,
    )
    request, report = lower([{"role": "user", "content": "hi"}], options=options)
    assert request["generationConfig"] == {
        "maxOutputTokens": 100,
        "temperature": 0.5,
        "topP": 0.9,
        "seed": 3,
        "stopSequences": ["a", "b", "c", "d", "e"],
        "frequencyPenalty": 0.1,
        "presencePenalty": 0.2,
    }
    assert len(report) == 1 and "stop sequences" in report[0].message
    assert generate_content_arguments(request, MODEL)["config"]["maxOutputTokens"] == 100


def test_the_count_ignores_generation_config_and_message_shares_over_estimate() -> None:
    counter = counter_for("o200k_base")
    request, _ = lower(CALLS, system="Rules.")
    bare = {k: v for k, v in request.items() if k != "generationConfig"}
    with_options = {**bare, "generationConfig": {"maxOutputTokens": 5, "stopSequences": ["x"]}}
    total = DIALECT.count_request(bare, counter)
    assert total == DIALECT.count_request(with_options, counter)
    system: Message = {"role": "system", "content": "Rules."}
    shares = sum(DIALECT.message_tokens(m, counter) for m in [system, *CALLS])
    assert shares >= total - 3  # all but the reply priming, merged turns counted apart
