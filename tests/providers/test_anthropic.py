"""The Anthropic Messages dialect (issue 11): every shared frame's request is what the
official SDK's request types accept, strictly, and what its client sends byte for byte; and
the rules that would otherwise be a 400 (merging, system text inside the conversation,
tool results first, a prefill's whitespace, cache breakpoints, max_tokens)."""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler._base.frame import Component, ComponentKind, ContextFrame, Message, ToolSpec
from compiler._base.tokens import counter_for
from compiler.errors import Diagnostic, LoweringError
from compiler.providers import get_dialect
from compiler.providers.anthropic import (
    DIALECT,
    PER_REQUEST,
    claude_version,
    supports_prefill,
    tool_use_id,
)
from compiler.providers.dialect import LoweringOptions
from tests.providers.frames import CASES, TOOLS, preset_case

MODEL = "claude-sonnet-4-5"
COUNTER = counter_for("o200k_base")
HAS_SDK = importlib.util.find_spec("anthropic") is not None
needs_sdk = pytest.mark.skipif(
    not HAS_SDK, reason="the anthropic SDK is not installed (pip install -e '.[test]')"
)

#: A run that reaches every shape the dialect writes: names, system text inside the chat, a
#: tool call whose id Anthropic refuses and one reused, an error result, a final assistant
#: message (with tools: sent as user text), options that are not sent and a stop sequence.
RICH_CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "Hello.", "name": "Ann"},
    {"role": "system", "content": "Injected: keep it short."},
    {"role": "user", "content": "Roll twice."},
    {
        "role": "assistant",
        "content": "Rolling.",
        "toolCalls": [
            {"id": "call.1 x", "name": "dice.roll", "arguments": {"sides": 6}},
            {"id": "call_2", "name": "dice.roll", "arguments": {"sides": 8}},
        ],
    },
    {"role": "tool", "toolCallId": "call.1 x", "content": "the die fell off", "isError": True},
    {"role": "tool", "toolCallId": "call_2", "content": "5"},
    {"role": "user", "content": "Again."},
    {
        "role": "assistant",
        "content": None,
        "toolCalls": [{"id": "call_2", "name": "dice.roll", "arguments": {"sides": 8}}],
    },
    {"role": "tool", "toolCallId": "call_2", "content": "7"},
    {"role": "assistant", "content": "You rolled 7. "},
]


def compiled(name: str, **extra: Any) -> compiler.CompileResult:
    if name == "rich":
        return compiler.compile_string(
            "Rules.\n<<agent.tools.available>>\n<<agent.chat.history>>",
            context={"chat": RICH_CHAT, "tools": TOOLS},
            provider="anthropic",
            model=MODEL,
            max_output_tokens=1000,
            temperature=0.5,
            stop=["THE END"],
            cache_stable=True,
            **extra,
        )
    template, ctx, options = CASES[name]
    return compiler.compile_string(
        template, context=ctx, provider="anthropic", model=MODEL, **options, **extra
    )


REQUESTS = [*sorted(CASES), "rich"]


# -- (1) the SDK's request types, strictly ----------------------------------------------
def consume(value: Any) -> Any:
    """The validated value with every lazy iterable (pydantic's ValidatorIterator, what an
    ``Iterable[...]`` field becomes) consumed, so that all of it is validated."""
    if isinstance(value, dict):
        return {k: consume(v) for k, v in value.items()}
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Iterable):
        return [consume(v) for v in value]
    return value


@functools.cache
def adapter(kind: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


def strictly(kind: Any, value: Any) -> None:
    """``value`` validates as ``kind`` in strict mode and nothing of it is dropped (the SDK's
    TypedDicts ignore unknown keys: a key they do not know would vanish here). The adapter
    must outlive the lazy iterables it returns (else pydantic-core panics): it is cached."""
    assert consume(adapter(kind).validate_python(value, strict=True)) == value


@needs_sdk
@pytest.mark.parametrize("name", REQUESTS)
def test_the_request_is_what_the_sdk_request_types_accept(name: str) -> None:
    from anthropic.types import (
        CacheControlEphemeralParam,
        ContentBlockParam,
        TextBlockParam,
        ToolParam,
        ToolResultBlockParam,
        ToolUseBlockParam,
    )
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    request = compiled(name).request
    strictly(MessageCreateParamsNonStreaming, request)
    by_type = {"text": TextBlockParam, "tool_use": ToolUseBlockParam}
    by_type["tool_result"] = ToolResultBlockParam
    for block in request.get("system", []):
        strictly(TextBlockParam, block)
    for tool in request.get("tools", []):
        strictly(ToolParam, tool)
    for msg in request["messages"]:
        assert set(msg) == {"role", "content"} and msg["role"] in ("user", "assistant")
        for block in msg["content"]:
            strictly(ContentBlockParam, block)
            strictly(by_type[block["type"]], block)
    marks = [b["cache_control"] for b in _blocks(request) if "cache_control" in b]
    for mark in marks:
        strictly(CacheControlEphemeralParam, mark)


@needs_sdk
def test_the_corpus_preset_is_what_the_sdk_accepts_and_sends() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    case = preset_case()
    if case is None:
        pytest.skip("../shared/corpus is absent")
    path, ctx = case
    request = compiler.compile(path, context=ctx, provider="anthropic", model=MODEL).request
    strictly(MessageCreateParamsNonStreaming, request)
    assert send(request) == request


# -- (2) the official client sends it as it is -------------------------------------------
def send(request: dict[str, Any]) -> Any:
    """What the official client puts on the wire for ``request``."""
    return json.loads(sent_request(request).content)


def sent_request(arguments: dict[str, Any]) -> Any:
    """The one HTTP request the official client sends for ``messages.create(**arguments)``
    (an httpx2 MockTransport: the SDK sends through httpx2, as anthropic._base_client
    imports it)."""
    import anthropic
    import httpx2

    sent: list[httpx2.Request] = []

    def handler(req: httpx2.Request) -> httpx2.Response:
        sent.append(req)
        reply = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": arguments["model"],
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return httpx2.Response(200, json=reply)

    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    client = anthropic.Anthropic(api_key="test", http_client=http, max_retries=0)
    message = client.messages.create(**arguments)
    assert message.content[0].type == "text"
    assert len(sent) == 1 and sent[0].method == "POST" and sent[0].url.path == "/v1/messages"
    return sent[0]


@needs_sdk
@pytest.mark.parametrize("name", REQUESTS)
def test_the_sdk_client_sends_the_request_unchanged(name: str) -> None:
    request = compiled(name).request
    assert send(request) == request


@needs_sdk
@pytest.mark.parametrize(
    "model", ["claude-opus-4-20250514", "claude-opus-4-1", "claude-sonnet-4-5", "claude-3-haiku"]
)
def test_the_default_max_tokens_needs_no_streaming(model: str) -> None:
    """The SDK refuses a non-streaming call that may run over 10 minutes (a max_tokens over
    21,333, or over 8,192 for Opus 4): the default stays under it."""
    template, ctx, _ = CASES["plain chat"]
    request = compiler.compile_string(template, context=ctx, provider="anthropic", model=model)
    assert send(request.request) == request.request


# -- (3) the rules ---------------------------------------------------------------------
def frame(*messages: Message, system: str = "Rules.", tools: bool = False) -> ContextFrame:
    comps = []
    if system:
        comps.append(
            Component(
                id="sys", kind=ComponentKind.SYSTEM_INSTRUCTION, source="t", inline_content=system
            )
        )
    if tools:
        specs: list[ToolSpec] = [
            {
                "name": t["name"],
                "alias": t["name"].replace(".", "_"),
                "description": t["description"],
                "parameters": t["parameters"],
                "requireApproval": False,
            }
            for t in TOOLS
        ]
        comps.append(
            Component(id="tools", kind=ComponentKind.TOOL_DEFINITIONS, source="t", tools=specs)
        )
    comps.append(
        Component(id="chat", kind=ComponentKind.CHAT_HISTORY, source="t", messages=list(messages))
    )
    return ContextFrame(components=comps)


def lower(
    f: ContextFrame, model: str = MODEL, **options: Any
) -> tuple[dict[str, Any], list[Diagnostic]]:
    report: list[Diagnostic] = []
    request = DIALECT.lower(f, model, LoweringOptions(**options), report)
    DIALECT.check(request)
    return request, report


def _blocks(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        *request.get("tools", []),
        *request.get("system", []),
        *(b for m in request["messages"] for b in m["content"]),
    ]


def user(text: str, **kw: Any) -> Message:
    return {"role": "user", "content": text, **kw}  # type: ignore[typeddict-item]


def assistant(text: str | None, *calls: tuple[str, dict[str, Any]]) -> Message:
    msg: Message = {"role": "assistant", "content": text}
    if calls:
        msg["toolCalls"] = [{"id": i, "name": "dice.roll", "arguments": a} for i, a in calls]
    return msg


def result(call_id: str, text: str, *, error: bool = False) -> Message:
    msg: Message = {"role": "tool", "toolCallId": call_id, "content": text}
    if error:
        msg["isError"] = True
    return msg


def system(text: str) -> Message:
    return {"role": "system", "content": text}


def test_it_is_registered_with_its_facts() -> None:
    dialect = get_dialect("anthropic")
    assert dialect is DIALECT and not dialect.exact_counts and dialect.safety_margin > 0
    assert dialect.encoding("claude-3-haiku-20240307") == "o200k_base"
    for model in ("claude-sonnet-4-5", "claude-opus-4-20250514", "claude-3-5-sonnet-latest"):
        assert dialect.window(model) == 200_000
    assert dialect.window("gpt-4o") is None
    assert dialect.budget_for(1000) == 950  # the 5% safety margin over the script estimate


def test_consecutive_same_role_messages_are_merged_into_one_turn() -> None:
    request, report = lower(
        frame(user("One."), user("Two."), assistant("A."), assistant("B."), user("Three."))
    )
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "user"]
    assert [b["text"] for b in request["messages"][0]["content"]] == ["One.", "Two."]
    assert [b["text"] for b in request["messages"][1]["content"]] == ["A.", "B."]
    assert report == []


def test_blank_messages_are_left_out_not_sent_empty() -> None:
    request, _ = lower(frame(user("Hi."), assistant("  \n"), user(" "), user("There.")))
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": t} for t in ("Hi.", "There.")]}
    ]


def test_leading_system_text_is_the_system_field() -> None:
    request, report = lower(frame(system("Also this."), user("Hi.")))
    assert request["system"] == [
        {"type": "text", "text": "Rules."},
        {"type": "text", "text": "Also this."},
    ]
    assert report == []


def test_system_text_inside_the_conversation_is_a_tagged_user_block_and_reported() -> None:
    chat = (user("Hi."), assistant("Hello."), system("Be brief."), user("Go on."))
    request, report = lower(frame(*chat))
    assert request["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "[System note]\nBe brief."},
            {"type": "text", "text": "Go on."},
        ],
    }
    assert [d.code for d in report] == ["lower.unsupported"]
    assert "system text inside the conversation" in report[0].message
    assert report[0].severity == "warning"
    with pytest.raises(LoweringError) as info:
        lower(frame(*chat), strict=True)
    assert info.value.code == "lower.unsupported"


def test_system_text_after_the_chat_joins_the_last_user_turn() -> None:
    result_ = compiled("system text mid-conversation")
    last = result_.request["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][-1]["text"] == "[System note]\nAfter the chat: stay in character."
    assert any("system text" in w.message for w in result_.warnings)


def test_a_name_is_a_prefix_of_the_text_and_reported() -> None:
    request, report = lower(frame(user("Hi.", name="Ann")))
    assert request["messages"][0]["content"][0]["text"] == "Ann: Hi."
    assert [d.code for d in report] == ["lower.unsupported"] and "name" in report[0].message


def test_tool_results_come_first_in_one_user_turn() -> None:
    chat = (
        user("Roll."),
        assistant("Sure.", ("a", {"sides": 6}), ("b", {"sides": 8})),
        result("a", "3"),
        result("b", "no die", error=True),
        system("Note."),
        user("And?"),
    )
    request, _ = lower(frame(*chat, tools=True))
    call, answer = request["messages"][1], request["messages"][2]
    assert [b["type"] for b in call["content"]] == ["text", "tool_use", "tool_use"]
    assert call["content"][1] == {
        "type": "tool_use",
        "id": "a",
        "name": "dice_roll",
        "input": {"sides": 6},
    }
    assert [b["type"] for b in answer["content"]] == ["tool_result", "tool_result", "text", "text"]
    assert answer["content"][0] == {"type": "tool_result", "tool_use_id": "a", "content": "3"}
    assert answer["content"][1]["is_error"] is True
    assert request["tools"] == [
        {"name": "dice_roll", "description": "Roll dice.", "input_schema": TOOLS[0]["parameters"]}
    ]


def test_tool_use_ids_are_made_safe_and_unique_and_still_pair() -> None:
    chat = (
        user("Roll."),
        assistant(None, ("call.1 x", {})),
        result("call.1 x", "1"),
        user("Again."),
        assistant(None, ("call.1 x", {})),
        result("call.1 x", "2"),
    )
    request, _ = lower(frame(*chat, tools=True))  # tool blocks need tool definitions
    first, again = request["messages"][1]["content"][0]["id"], request["messages"][3]["content"][0]
    assert first == tool_use_id("call.1 x") != "call.1 x" and first.startswith("call_1_x_")
    assert again["id"] == first + "_2"
    assert request["messages"][2]["content"][0]["tool_use_id"] == first
    assert request["messages"][4]["content"][0]["tool_use_id"] == again["id"]
    assert tool_use_id("call.1 x") == tool_use_id("call.1 x") != tool_use_id("call_1 x")


def test_a_prefill_loses_its_trailing_whitespace() -> None:
    request, report = lower(frame(user("Hi."), assistant("Once upon a time \n")))
    assert request["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Once upon a time"}],
    }
    assert report == []


@pytest.mark.parametrize(
    ("model", "tools"), [("claude-sonnet-4-6", False), ("claude-opus-5", False), (MODEL, True)]
)
def test_a_prefill_the_model_refuses_becomes_user_text(model: str, tools: bool) -> None:
    request, report = lower(frame(user("Hi."), assistant("Once upon "), tools=tools), model)
    assert request["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Hi."},
                {"type": "text", "text": "[Begin your reply with this text]\nOnce upon"},
            ],
        }
    ]
    assert [d.code for d in report] == ["lower.prefill_unsupported"]
    assert "prefill" in report[0].message


def test_which_models_take_a_prefill() -> None:
    assert claude_version("claude-3-5-sonnet-20241022") == (3, 5)
    assert claude_version("claude-sonnet-4-20250514") == (4, 0)
    assert claude_version("anthropic/claude-opus-4-1") == (4, 1)
    assert claude_version("claude-3-haiku-20240307") == (3, 0)
    assert claude_version("gpt-4o") is None
    assert supports_prefill("claude-sonnet-4-5-20250929") and supports_prefill("claude-3-opus")
    assert not supports_prefill("claude-opus-4-6") and not supports_prefill("mystery")


def test_cache_breakpoints_end_the_stable_prefix_and_never_exceed_four() -> None:
    chat = (user("A."), assistant("B."), user("C."), assistant("D."), user("E."))
    plain, _ = lower(frame(*chat, tools=True))
    cached, _ = lower(frame(*chat, tools=True), cache_stable=True)
    assert not any("cache_control" in b for b in _blocks(plain))
    marked = [b for b in _blocks(cached) if "cache_control" in b]
    assert marked == [  # the newest user turn too: the next request reads all of this one
        cached["tools"][-1],
        cached["system"][-1],
        cached["messages"][-2]["content"][-1],
        cached["messages"][-1]["content"][-1],
    ]
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in marked)
    assert DIALECT.count_request(plain, COUNTER) == DIALECT.count_request(cached, COUNTER)
    one, _ = lower(frame(user("A."), system=""), cache_stable=True)
    assert [b for b in _blocks(one) if "cache_control" in b] == one["messages"][0]["content"]
    result_ = compiled("cache stable")
    assert 1 <= sum("cache_control" in b for b in _blocks(result_.request)) <= 4


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5", 16_384),
        ("claude-sonnet-4-5-20250929", 16_384),
        ("claude-opus-4-20250514", 8_192),
        ("claude-opus-4-1", 8_192),
        ("claude-opus-4-5", 16_384),
        ("claude-3-5-sonnet-20241022", 8_192),
        ("claude-3-haiku-20240307", 4_096),
        ("claude-next", 8_192),
        ("gpt-4o", 8_192),
    ],
)
def test_max_tokens_is_never_missing(model: str, expected: int) -> None:
    request, _ = lower(frame(user("Hi.")), model)
    assert request["max_tokens"] == expected == DIALECT.default_output_tokens(model)
    given, _ = lower(frame(user("Hi.")), model, max_output_tokens=123)
    assert given["max_tokens"] == 123


def test_generation_options_under_anthropic_names_and_what_is_not_sent() -> None:
    request, report = lower(
        frame(user("Hi.")),
        temperature=0.5,
        top_p=0.9,
        frequency_penalty=0.1,
        presence_penalty=0.2,
        seed=7,
        stop=("END", "\n\n"),
    )
    assert request["stop_sequences"] == ["END"]
    for key in ("temperature", "top_p", "frequency_penalty", "presence_penalty", "seed", "stop"):
        assert key not in request
    assert len(report) == 6 and {d.code for d in report} == {"lower.unsupported"}
    assert "temperature" in report[1].message and "deprecated" in report[1].message
    with pytest.raises(LoweringError):
        lower(frame(user("Hi.")), temperature=0.5, strict=True)


def test_the_count_ignores_generation_options() -> None:
    f = frame(user("Hi."), assistant("Hello."), user("Tell me more."), tools=True)
    bare, _ = lower(f)
    full, _ = lower(f, max_output_tokens=50, temperature=0.2, stop=("X",), cache_stable=True)
    assert DIALECT.count_request(bare, COUNTER) == DIALECT.count_request(full, COUNTER)


def test_message_tokens_do_not_under_count_the_request() -> None:
    chat = [
        system("Earlier: a summary."),
        user("Hi.", name="Ann"),
        assistant("Rolling.", ("a", {"sides": 6})),
        result("a", "3"),
        system("Note."),
        user("More."),
        user("And more."),
    ]
    request, _ = lower(frame(*chat, system="", tools=True))
    spec = next(c.tools for c in frame(tools=True).components if c.tools) or []
    estimate = PER_REQUEST + DIALECT.tools_tokens(spec, COUNTER)
    estimate += sum(DIALECT.message_tokens(m, COUNTER) for m in chat)
    counted = DIALECT.count_request(request, COUNTER)
    assert counted <= estimate <= counted + 40


def check_fails(request: dict[str, Any], code: str) -> None:
    base = {"model": MODEL, "max_tokens": 100}
    with pytest.raises(LoweringError) as info:
        DIALECT.check(base | request)
    assert info.value.code == code


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def use(i: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": "f", "input": {}}


def answer(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "ok"}


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"messages": []}, "lower.empty_request"),
        (
            {"max_tokens": None, "messages": [{"role": "user", "content": "x"}]},
            "lower.missing_max_tokens",
        ),
        ({"messages": [{"role": "system", "content": "x"}]}, "lower.invalid_role"),
        ({"messages": [{"role": "user", "content": "x"}] * 2}, "lower.invalid_role"),
        ({"messages": [{"role": "user", "content": []}]}, "lower.empty_content"),
        ({"messages": [{"role": "user", "content": [text(" ")]}]}, "lower.empty_content"),
        (
            {"system": [text("")], "messages": [{"role": "user", "content": "x"}]},
            "lower.empty_content",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [use("a")]},
                ]
            },
            "lower.unanswered_tool_call",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [use("a")]},
                    {"role": "user", "content": [text("first"), answer("a")]},
                ]
            },
            "lower.unanswered_tool_call",
        ),
        ({"messages": [{"role": "user", "content": [answer("a")]}]}, "lower.orphan_tool_result"),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [use("a.b")]},
                    {"role": "user", "content": [answer("a.b")]},
                ]
            },
            "lower.invalid_tool_call",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [use("a"), use("a")]},
                    {"role": "user", "content": [answer("a")]},
                ]
            },
            "lower.invalid_tool_call",
        ),
        ({"messages": [{"role": "user", "content": [use("a")]}]}, "lower.invalid_tool_call"),
        (
            {
                "tools": [{"name": "a.b", "input_schema": {}}],
                "messages": [{"role": "user", "content": "x"}],
            },
            "lower.invalid_tool_name",
        ),
        (
            {
                "tools": [{"name": "a", "input_schema": {}}] * 2,
                "messages": [{"role": "user", "content": "x"}],
            },
            "lower.duplicate_tool_name",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": "y "},
                ]
            },
            "lower.invalid_prefill",
        ),
        (
            {
                "model": "claude-sonnet-4-6",
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": "y"},
                ],
            },
            "lower.invalid_prefill",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [text("x") | {"cache_control": {"type": "ephemeral"}}] * 5,
                    }
                ]
            },
            "lower.too_many_cache_breakpoints",
        ),
    ],
)
def test_check_refuses_what_anthropic_answers_with_a_400(
    request_: dict[str, Any], code: str
) -> None:
    check_fails(request_, code)


def test_check_accepts_a_prefill_and_an_assistant_first_turn() -> None:
    DIALECT.check(
        {
            "model": MODEL,
            "max_tokens": 10,
            "messages": [
                {"role": "assistant", "content": "Welcome."},
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Well"},
            ],
        }
    )
    empty_prefill = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": ""}]
    DIALECT.check({"model": MODEL, "max_tokens": 10, "messages": empty_prefill})


def test_the_default_max_tokens_is_reserved_from_the_window(tmp_path: Path) -> None:
    template = tmp_path / "t.txt"
    template.write_text("Rules.\n<<agent.chat.history>>", encoding="utf-8")
    chat = {"chat": [{"role": "user", "content": "Hi."}]}
    opus = compiler.check_budget(
        template, context=chat, provider="anthropic", model="claude-opus-4-1"
    )
    assert opus.reserve == 8_192 and opus.budget == 200_000 - 8_192
    given = compiler.check_budget(
        template, context=chat, provider="anthropic", model=MODEL, max_output_tokens=100
    )
    assert given.reserve == 100
    result_ = compiler.compile(template, context=chat, provider="anthropic", model=MODEL)
    assert result_.ledger.budget == int((200_000 - 16_384) * (1 - DIALECT.safety_margin))
    assert result_.request["max_tokens"] == 16_384


@needs_sdk
def test_a_runtime_counts_with_the_count_tokens_endpoint_through_the_sdk() -> None:
    """A runtime with network access counts with Anthropic's count-tokens endpoint through
    the official SDK: here over a mock transport that answers one token per 3 characters.
    Each distinct text is asked once (the counter the runtime owns caches it)."""
    import anthropic
    import httpx2 as http

    from compiler._base.tokens import TokenCounter

    asked: list[str] = []

    def endpoint(request: Any) -> Any:
        body = json.loads(request.content)
        text = body["messages"][0]["content"]
        asked.append(text)
        return http.Response(200, json={"input_tokens": len(text) // 3 + 1})

    client = anthropic.Anthropic(
        api_key="test", http_client=http.Client(transport=http.MockTransport(endpoint))
    )

    def count(text: str) -> int:
        result = client.messages.count_tokens(
            model="claude-sonnet-4-5", messages=[{"role": "user", "content": text}]
        )
        return int(result.input_tokens)

    counter = TokenCounter("o200k_base", count_fn=count)
    chat = [{"role": "user", "content": f"message {i} " * 8} for i in range(40)]
    kwargs: dict[str, Any] = {"provider": "anthropic", "budget": 900, "token_counter": counter}
    first = compiler.compile_string("S <<agent.chat.history>>", context={"chat": chat}, **kwargs)
    assert asked and first.ledger.total_tokens <= 900 and first.ledger.counts == "estimate"
    calls = len(asked)
    again = compiler.compile_string("S <<agent.chat.history>>", context={"chat": chat}, **kwargs)
    assert again.request == first.request and len(asked) == calls
