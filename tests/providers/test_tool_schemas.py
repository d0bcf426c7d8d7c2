"""Tool parameter schemas a provider refuses as written (compiler/providers/tool_params.py): a
non-object top is wrapped, property keys outside Anthropic's or Gemini's rule are renamed
(nested ones too, collision-free), each change is the warning lower.tool_schema_rewritten
(an error when strict), the table maps the model's arguments back, and each lowered body
is what the official SDK accepts and sends. Also: tool definitions are counted at least
at the tokens of their JSON."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from compiler._base.frame import Component, ComponentKind, ContextFrame, ToolSpec
from compiler._base.tokens import counter_for
from compiler.errors import Diagnostic, LoweringError
from compiler.providers import get_dialect
from compiler.providers.dialect import LoweringOptions
from compiler.providers.gemini_schema import check_json_parameters, json_schema_model
from compiler.providers.openai_chat import cookbook_function_tokens, function_tokens
from compiler.providers.tool_params import (
    ANTHROPIC_KEYS,
    GEMINI_KEYS,
    restore_arguments,
    sent_arguments,
    sent_tool,
)
from tests.providers.sdk import needs_openai, validate_strictly, wire_body

COUNTER = counter_for("o200k_base")
TOOLS = ComponentKind.TOOL_DEFINITIONS
ODD = {"type": "string"}
NESTED = {
    "type": "object",
    "properties": {
        "filter[bundleId]": {"type": "string", "description": "Bundle."},
        "Account Number": {"type": "string"},
        "路径": {"type": "string"},
        "$meta": {
            "type": "object",
            "properties": {"a b": {"type": "string"}, "a_b": {"type": "integer"}},
            "required": ["a b", "a_b"],
        },
        "rows": {
            "type": "array",
            "items": {"type": "object", "properties": {"x y": {"type": "string"}}},
        },
        "plain": {"type": "boolean"},
    },
    "required": ["filter[bundleId]", "路径", "$meta"],
}
#: arguments in the tool's own names
ORIGINAL = {
    "filter[bundleId]": "com.x",
    "Account Number": "42",
    "路径": "/tmp",
    "$meta": {"a b": "s", "a_b": 1},
    "rows": [{"x y": "1"}, {"x y": "2"}],
    "plain": True,
}
CASES: dict[str, dict[str, Any]] = {
    "non-object": {"type": "string", "description": "What to say."},
    "array top": {"type": "array", "items": {"type": "integer"}},
    "nested odd keys": NESTED,
}
PROVIDERS = ["openai", "openai-responses", "anthropic", "gemini"]
MODELS = {
    "openai": "gpt-4o",
    "openai-responses": "gpt-4o",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}


def tool(parameters: dict[str, Any], name: str = "asc.list") -> ToolSpec:
    return {
        "name": name,
        "alias": name.replace(".", "_"),
        "description": "A tool.",
        "parameters": parameters,
        "requireApproval": False,
    }


def lowered(
    provider: str, parameters: dict[str, Any], model: str | None = None, strict: bool = False
) -> tuple[dict[str, Any], list[Diagnostic]]:
    dialect = get_dialect(provider)
    frame = ContextFrame(
        components=[
            Component(
                id="tools",
                kind=ComponentKind.TOOL_DEFINITIONS,
                source="t",
                tools=[tool(parameters)],
            ),
            Component(
                id="h",
                kind=ComponentKind.CHAT_HISTORY,
                source="t",
                messages=[{"role": "user", "content": "hi"}],
            ),
        ]
    )
    report: list[Diagnostic] = []
    options = LoweringOptions(max_output_tokens=100, strict=strict)
    request = dialect.lower(frame, model or MODELS[provider], options, report)
    dialect.check(request)
    return request, report


def sent_schema(provider: str, request: dict[str, Any]) -> dict[str, Any]:
    if provider == "openai":
        return dict(request["tools"][0]["function"]["parameters"])
    if provider == "openai-responses":
        return dict(request["tools"][0]["parameters"])
    if provider == "anthropic":
        return dict(request["tools"][0]["input_schema"])
    declaration = request["tools"][0]["functionDeclarations"][0]
    return dict(declaration.get("parametersJsonSchema") or declaration["parameters"])


def keys(schema: Any) -> list[str]:
    """Every property key of ``schema``."""
    found: list[str] = []
    if isinstance(schema, dict):
        found += list((schema.get("properties") or {}).keys())
        for value in schema.values():
            found += keys(value)
    elif isinstance(schema, list):
        for value in schema:
            found += keys(value)
    return found


# -- the official SDKs accept and send each case ---------------------------------------------
def sdk_accepts(provider: str, request: dict[str, Any]) -> None:
    if provider == "openai":
        from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

        validate_strictly(CompletionCreateParamsNonStreaming, request)
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
        _, body = wire_body(lambda c: c.chat.completions.create(**request), reply)
        assert body == request
    elif provider == "openai-responses":
        from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

        validate_strictly(ResponseCreateParamsNonStreaming, request)
    elif provider == "anthropic":
        from anthropic.types import ToolParam
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

        from tests.providers.test_anthropic import send, strictly

        strictly(MessageCreateParamsNonStreaming, request)
        for t in request["tools"]:
            strictly(ToolParam, t)
        assert send(request) == request
    else:
        from google.genai import types

        from tests.providers.test_gemini import assert_sent_unchanged, strict

        for t in request["tools"]:
            strict(types.Tool, t)
        assert_sent_unchanged(request)


@needs_openai
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_case_is_an_object_with_keys_the_provider_takes(provider: str, case: str) -> None:
    pytest.importorskip("anthropic")
    pytest.importorskip("google.genai")
    request, report = lowered(provider, CASES[case])
    schema = sent_schema(provider, request)
    assert schema["type"] == "object" and schema["properties"]
    rule = {"anthropic": ANTHROPIC_KEYS, "gemini": GEMINI_KEYS}.get(provider)
    if rule is not None:
        assert all(rule.fullmatch(k) for k in keys(schema)), keys(schema)
    if rule is None and case == "nested odd keys":  # OpenAI takes any key: sent as written
        assert schema == NESTED and not report
    else:
        assert [d.code for d in report] == ["lower.tool_schema_rewritten"]
        assert "asc.list" in report[0].message
    sdk_accepts(provider, request)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_strict_makes_a_rewrite_an_error(provider: str) -> None:
    with pytest.raises(LoweringError) as err:
        lowered(provider, ODD, strict=True)
    assert err.value.code == "lower.tool_schema_rewritten"


def test_a_schema_the_providers_take_is_sent_as_written() -> None:
    plain = {"type": "object", "properties": {"a.b-c_1": {"type": "string"}}}
    for provider in ("openai", "anthropic"):
        request, report = lowered(provider, plain)
        assert sent_schema(provider, request) == plain and not report


def test_keys_are_renamed_deterministically_and_without_collision() -> None:
    sent, table = sent_tool(tool(NESTED), ANTHROPIC_KEYS)
    again, same = sent_tool(tool(NESTED), ANTHROPIC_KEYS)
    assert sent == again and table == same
    props = sent["parameters"]["properties"]
    assert list(props) == ["filter_bundleId_", "Account_Number", "__", "_meta", "rows", "plain"]
    meta = props["_meta"]
    # "a_b" fits and keeps its name; "a b" becomes "a_b" too: it takes "a_b_2"
    assert list(meta["properties"]) == ["a_b_2", "a_b"]
    assert meta["required"] == ["a_b_2", "a_b"]
    assert meta["properties"]["a_b_2"]["title"] == "a b"  # the model still reads the name
    assert sent["parameters"]["required"] == ["filter_bundleId_", "__", "_meta"]
    assert table.as_json() == {
        "/filter_bundleId_": "/filter[bundleId]",
        "/Account_Number": "/Account Number",
        "/__": "/路径",
        "/_meta": "/$meta",
        "/_meta/a_b_2": "/$meta/a b",
        "/rows/*/x_y": "/rows/*/x y",
    }
    assert not table.wrapped


def test_gemini_names_start_with_a_letter_or_underscore_and_take_no_dots() -> None:
    schema = {"type": "object", "properties": {"1st": {}, "a.b": {}, "a-b": {}, "ok_1": {}}}
    sent, table = sent_tool(tool(schema), GEMINI_KEYS)
    assert list(sent["parameters"]["properties"]) == ["_1st", "a_b", "a_b_2", "ok_1"]
    assert table.as_json() == {"/_1st": "/1st", "/a_b": "/a.b", "/a_b_2": "/a-b"}


@pytest.mark.parametrize("rule", [ANTHROPIC_KEYS, GEMINI_KEYS], ids=["anthropic", "gemini"])
def test_the_table_round_trips_the_arguments(rule: re.Pattern[str]) -> None:
    _, table = sent_tool(tool(NESTED), rule)
    sent = sent_arguments(ORIGINAL, table)
    assert all(rule.fullmatch(k) for k in _arg_keys(sent))
    assert restore_arguments(sent, table) == ORIGINAL
    assert table.restore(table.sent(ORIGINAL)) == ORIGINAL


def test_a_wrapped_schema_takes_its_value_under_value() -> None:
    sent, table = sent_tool(tool(ODD), ANTHROPIC_KEYS)
    assert sent["parameters"] == {
        "type": "object",
        "properties": {"value": ODD},
        "required": ["value"],
    }
    assert table.wrapped and table.as_json() == {"/value": ""}
    assert table.restore({"value": "hello"}) == "hello"
    assert table.sent("hello") == {"value": "hello"}
    nested = {"type": "array", "items": {"type": "object", "properties": {"a b": {}}}}
    _, table = sent_tool(tool(nested), ANTHROPIC_KEYS)
    assert table.as_json() == {"/value": "", "/value/*/a_b": "/*/a b"}
    assert table.restore({"value": [{"a_b": 1}]}) == [{"a b": 1}]


def test_history_calls_are_sent_under_the_renamed_keys() -> None:
    dialect = get_dialect("anthropic")
    call = {"id": "call_1", "name": "asc.list", "arguments": ORIGINAL}
    frame = ContextFrame(
        components=[
            Component(
                id="t", kind=ComponentKind.TOOL_DEFINITIONS, source="t", tools=[tool(NESTED)]
            ),
            Component(
                id="h",
                kind=ComponentKind.CHAT_HISTORY,
                source="t",
                messages=[
                    {"role": "user", "content": "list"},
                    {"role": "assistant", "content": None, "toolCalls": [call]},
                    {"role": "tool", "toolCallId": "call_1", "content": "[]"},
                ],
            ),
        ]
    )
    request = dialect.lower(frame, "claude-sonnet-4-5", LoweringOptions(max_output_tokens=10))
    (use,) = [b for m in request["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert all(ANTHROPIC_KEYS.fullmatch(k) for k in _arg_keys(use["input"]))
    _, table = sent_tool(tool(NESTED), ANTHROPIC_KEYS)
    assert table.restore(use["input"]) == ORIGINAL


def _arg_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in _arg_keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in _arg_keys(v)]
    return []


# -- Gemini: the full JSON Schema where the model takes it --------------------------------
def test_gemini_2_5_and_later_get_parameters_json_schema_older_the_subset() -> None:
    assert json_schema_model("gemini-2.5-flash") and json_schema_model("models/gemini-3-pro")
    assert not json_schema_model("gemini-2.0-flash") and not json_schema_model("gemini-1.5-pro")
    assert not json_schema_model("gemini-flash-latest")  # no version: the subset
    rich = {
        "type": "object",
        "properties": {"n": {"type": ["integer", "null"], "exclusiveMinimum": 0}},
    }
    request, report = lowered("gemini", rich)
    (declaration,) = request["tools"][0]["functionDeclarations"]
    assert declaration["parametersJsonSchema"] == rich and not report  # nothing lost
    old, notes = lowered("gemini", rich, model="gemini-2.0-flash")
    (declaration,) = old["tools"][0]["functionDeclarations"]
    assert "parameters" in declaration and [d.code for d in notes] == ["lower.unsupported"]


def test_the_gemini_check_refuses_a_bad_parameters_json_schema() -> None:
    for bad in (
        {"parametersJsonSchema": {"type": "string"}},
        {"parametersJsonSchema": {"type": "object", "properties": {"a b": {}}}},
        {"parametersJsonSchema": {"type": "object"}, "parameters": {"type": "OBJECT"}},
    ):
        with pytest.raises(LoweringError) as err:
            check_json_parameters("f", bad)
        assert err.value.code == "lower.invalid_tool_schema"


# -- counting -------------------------------------------------------------------------------
DEEP = {
    "type": "object",
    "properties": {
        "query": {
            "type": "object",
            "description": "The query.",
            "properties": {
                "filters": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "field": {"type": "string", "description": "Field to filter on."},
                            "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt", "in"]},
                            "value": {"type": ["string", "number", "boolean"]},
                        },
                        "required": ["field", "op", "value"],
                    },
                },
                "sort": {
                    "type": "object",
                    "properties": {
                        "by": {"type": "string", "description": "The field to sort by."},
                        "descending": {"type": "boolean", "description": "Largest first."},
                    },
                },
                "page": {"type": "integer", "minimum": 1, "description": "Page number."},
            },
        }
    },
    "required": ["query"],
}


@pytest.mark.parametrize("provider", ["openai", "openai-responses"])
def test_a_nested_schema_counts_at_least_its_json(provider: str) -> None:
    fn = {"name": "search", "description": "Search records.", "parameters": DEEP}
    compact = json.dumps(fn, ensure_ascii=False, separators=(",", ":"))
    assert cookbook_function_tokens(fn, COUNTER) < COUNTER.count(compact)  # the cookbook under
    assert function_tokens([fn], COUNTER) >= COUNTER.count(compact)
    dialect = get_dialect(provider)
    spec = tool(DEEP, name="search")
    assert dialect.tools_tokens([spec], COUNTER) >= COUNTER.count(compact)
    request, _ = lowered(provider, DEEP)
    tools_json = json.dumps(request["tools"], ensure_ascii=False, separators=(",", ":"))
    messages_only = dialect.count_request({**request, "tools": []}, COUNTER)
    assert dialect.count_request(request, COUNTER) - messages_only >= COUNTER.count(
        json.dumps(sent_schema(provider, request), separators=(",", ":"))
    )
    assert tools_json  # the request carries them


# -- the compile result, the CLI and the service report the table ---------------------------
def test_the_compile_result_reports_and_applies_the_table() -> None:
    import compiler

    odd = [{"name": "chat.search", "description": "Search.", "parameters": NESTED}]
    result = compiler.compile_string(
        "S.\n<<agent.tools.available>>\n<<agent.chat.history>>",
        context={"chat": [{"role": "user", "content": "hi"}], "tools": odd},
        provider="anthropic",
        model="claude-sonnet-4-5",
    )
    assert "lower.tool_schema_rewritten" in {w.code for w in result.warnings}
    table = result.tool_arguments["chat_search"]
    (row,) = [t for t in result.tools_json() if t["alias"] == "chat_search"]
    assert row["argumentNames"] == table.as_json()
    json.dumps(row)  # plain JSON
    sent = table.sent(ORIGINAL)
    assert result.restore_arguments("chat_search", sent) == ORIGINAL
    assert result.restore_arguments("chat.search", sent) == ORIGINAL
    assert result.restore_arguments("other", {"a": 1}) == {"a": 1}
