"""The Chat Completions dialect ('openai', 'openai-chat'): every shared frame's request is
what the official SDK accepts and sends unchanged; system text goes under the role
"developer" to o1, o3, o4 and gpt-5 models."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler._base.tokens import counter_for
from compiler.providers import get_dialect
from compiler.providers.openai_chat import REPLY_PRIMING, system_role
from tests.providers.frames import CASES, preset_case
from tests.providers.sdk import needs_openai, validate_strictly, wire_body

OPTIONS: dict[str, Any] = {
    "max_output_tokens": 256,
    "temperature": 0.7,
    "top_p": 0.9,
    "frequency_penalty": 0.5,
    "presence_penalty": 0.1,
    "seed": 7,
    "stop": ("END",),
}
REPLY = {"id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o", "choices": []}


def requests() -> list[Any]:
    """Each shared frame with every option, for gpt-4o and for o3 (system as developer)."""
    out = []
    for model in ("gpt-4o", "o3"):
        for name, (template, ctx, options) in CASES.items():
            out.append(
                pytest.param(
                    lambda t=template, c=ctx, o=options, m=model: (
                        compiler.compile_string(
                            t, context=c, provider="openai", model=m, **o, **OPTIONS
                        ).request
                    ),
                    id=f"{model}: {name}",
                )
            )
    case = preset_case()
    if case is not None:
        path, ctx = case
        out.append(
            pytest.param(
                lambda: compiler.compile(path, context=ctx, provider="openai", **OPTIONS).request,
                id="gpt-4o: corpus preset",
            )
        )
    return out


@needs_openai
@pytest.mark.parametrize("make", requests())
def test_the_sdk_type_accepts_the_request_strictly(make: Any) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    validate_strictly(CompletionCreateParamsNonStreaming, make())


@needs_openai
@pytest.mark.parametrize("make", requests())
def test_the_sdk_sends_the_request_unchanged(make: Any) -> None:
    request = make()
    path, body = wire_body(lambda client: client.chat.completions.create(**request), REPLY)
    assert path == "/v1/chat/completions"
    assert body == request


@needs_openai
def test_strict_validation_catches_a_key_the_sdk_does_not_know() -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    template, ctx, options = CASES["plain chat"]
    request = compiler.compile_string(template, context=ctx, **options).request
    request["messages"][0]["toolCallId"] = "x"
    with pytest.raises(AssertionError, match=r"messages\[0\]\.toolCallId"):
        validate_strictly(CompletionCreateParamsNonStreaming, request)


@pytest.mark.parametrize(
    "model",
    [
        "o1",
        "o1-2024-12-17",
        "o3",
        "o3-mini",
        "o4-mini",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5.1",
        "openai/gpt-5-2025-08-07",
    ],
)
def test_reasoning_models_take_system_text_as_developer(model: str) -> None:
    assert system_role(model) == "developer"


@pytest.mark.parametrize(
    "model", ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-3.5-turbo", "gpt-oss-120b", "o10x"]
)
def test_other_models_keep_system(model: str) -> None:
    assert system_role(model) == "system"


@pytest.mark.parametrize(("model", "role"), [("o3", "developer"), ("gpt-4o", "system")])
def test_the_request_says_developer_where_the_model_wants_it(model: str, role: str) -> None:
    template, ctx, options = CASES["system text mid-conversation"]
    result = compiler.compile_string(template, context=ctx, model=model, **options)
    roles = [m["role"] for m in result.request["messages"]]
    assert roles[0] == role and roles[-1] == role  # leading and trailing system text
    assert ({"system", "developer"} - {role}).isdisjoint(roles)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_both_role_names_cost_the_same(encoding: str) -> None:
    """message_tokens has no model: it prices system text as 'system', which must be what
    'developer' costs in the request."""
    counter = counter_for(encoding)
    assert counter.count("system") == counter.count("developer")
    dialect = get_dialect("openai")
    for role in ("system", "developer"):
        assert dialect.message_tokens({"role": role, "content": "Rules."}, counter) == (
            dialect.message_tokens({"role": "system", "content": "Rules."}, counter)
        )


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "Hello there."},
        {"role": "assistant", "content": ""},
        {"role": "system", "content": "Rules."},
        {"role": "developer", "content": "Rules."},
        {"role": "tool", "content": "42"},
        {"role": "user", "content": None},
        {"role": "user", "content": "Hi.", "name": "Sam"},
        {"role": "tool", "content": "42", "toolCallId": "call_1"},
    ],
)
def test_message_cost_is_its_wire_message_cost(message: Any) -> None:
    """The history walk prices a role-and-text message without building its wire form; the
    price is the wire message's, whatever the message holds."""
    counter = counter_for("o200k_base")
    dialect = get_dialect("openai")
    wire = dialect.message(message)  # type: ignore[attr-defined]
    expected = dialect._wire_message_tokens(wire, counter)  # type: ignore[attr-defined]
    assert dialect.message_tokens(message, counter) == expected


@pytest.mark.parametrize("model", ["gpt-4o", "o3-mini"])
def test_plain_messages_are_sent_as_their_wire_form_and_not_shared(model: str) -> None:
    """A conversation of roles and texts is lowered by copying each message (system text
    under the model's role), and the request shares no message with the frame."""
    history = [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "Note."},
    ]
    result = compiler.compile_string(
        "Rules.\n<<agent.chat.history>>", context={"chat": history}, model=model
    )
    sent = result.request["messages"]
    role = system_role(model)
    assert sent == [{"role": role, "content": "Rules."}] + [
        {**m, "role": role if m["role"] == "system" else m["role"]} for m in history
    ]
    sent[1]["content"] = "changed"
    kept = next(c for c in result.frame.components if c.messages)
    assert kept.messages is not None and kept.messages[0]["content"] == "Hi."


_WIRE_TEXT = st.one_of(st.none(), st.text(max_size=12), st.integers(0, 3))
_WIRE_MESSAGE = st.dictionaries(
    st.sampled_from(["role", "content", "name", "tool_call_id"]),
    st.one_of(_WIRE_TEXT, st.sampled_from(["user", "assistant", "system"])),
    max_size=3,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WIRE_MESSAGE, max_size=6))
def test_request_count_is_the_sum_of_its_wire_messages(messages: list[dict[str, Any]]) -> None:
    """A request of role-and-text messages is counted at C speed: the count is the one the
    per-message rule gives, whatever the messages hold (other keys, other value types)."""
    counter = counter_for("o200k_base")
    dialect = get_dialect("openai")
    request = {"model": "gpt-4o", "messages": messages}
    expected = REPLY_PRIMING + sum(
        dialect._wire_message_tokens(m, counter)  # type: ignore[attr-defined]
        for m in messages
    )
    assert dialect.count_request(request, counter) == expected


def test_a_caller_s_count_fn_counts_a_request_message_by_message() -> None:
    """With a caller's ``count_fn`` a request's texts are asked in the per-message order (each
    message's role then its text, the tools after), as before batch counting."""
    from compiler._base.tokens import TokenCounter

    asked: list[str] = []

    def fn(text: str) -> int:
        asked.append(text)
        return len(text)

    request: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "tools": [{"type": "function", "function": {"name": "f", "description": "d"}}],
    }
    get_dialect("openai").count_request(request, TokenCounter("o200k_base", count_fn=fn))
    assert asked[:4] == ["user", "hi", "assistant", "yo"]
