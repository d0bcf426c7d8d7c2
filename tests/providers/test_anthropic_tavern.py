"""A SillyTavern preset's Anthropic request, as SillyTavern 1.12.6 sends Claude
(src/prompt-converters.js ``convertClaudeMessages``, ``sendClaudeRequest``): the system
prompt as a string or none, example speakers named, system text as plain user text, turns
joined into strings, the opening user turn, the prefill, and the samplers of the models that
take them. The frames carry the preset's Claude settings (``compiler._base.frame.CLAUDE``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler
from compiler._base.frame import CLAUDE, Component, ComponentKind, ContextFrame, Message, Role
from compiler._base.journal import Journal
from compiler._base.tokens import counter_for
from compiler.errors import Diagnostic
from compiler.fit import fit, floor_tokens
from compiler.providers.anthropic import DIALECT, create_arguments
from compiler.providers.anthropic_tavern import takes_samplers
from compiler.providers.dialect import LoweringOptions
from compiler.tavern.preset import DEFAULT_HUMAN_SYSPROMPT
from tests.fit.test_properties import frames
from tests.providers.frames import TOOLS
from tests.providers.test_anthropic import sent_request
from tests.tavern.test_preset_settings import write_preset

COUNTER = counter_for("o200k_base")
OLD, NEW = "claude-3-opus-20240229", "claude-sonnet-4-5"
HAS_SDK = importlib.util.find_spec("anthropic") is not None
needs_sdk = pytest.mark.skipif(not HAS_SDK, reason="the anthropic SDK is not installed")


def claude(**kw: Any) -> dict[str, Any]:
    return {
        "useSysPrompt": True,
        "opening": "Begin.",
        "prefill": "",
        "user": "Lin",
        "char": "科里",
    } | kw


def sys(text: str, name: str | None = None) -> Message:
    m: Message = {"role": "system", "content": text}
    if name:
        m["name"] = name
    return m


def user(text: str, **kw: Any) -> Message:
    return {"role": "user", "content": text, **kw}  # type: ignore[typeddict-item]


def bot(text: str | None, **kw: Any) -> Message:
    return {"role": "assistant", "content": text, **kw}  # type: ignore[typeddict-item]


def frame(*messages: Message, tools: bool = False, **settings_: Any) -> ContextFrame:
    comps = [
        Component(id="chat", kind=ComponentKind.CHAT_HISTORY, source="t", messages=list(messages))
    ]
    if tools:
        specs = [
            {
                "name": t["name"],
                "alias": t["name"].replace(".", "_"),
                "description": "",
                "parameters": t["parameters"],
                "requireApproval": False,
            }
            for t in TOOLS
        ]
        comps.insert(
            0, Component(id="tools", kind=ComponentKind.TOOL_DEFINITIONS, source="t", tools=specs)
        )
    return ContextFrame(components=comps, metadata={CLAUDE: claude(**settings_)})


def lower(
    f: ContextFrame, model: str = OLD, **options: Any
) -> tuple[dict[str, Any], list[Diagnostic]]:
    report: list[Diagnostic] = []
    request = DIALECT.lower(f, model, LoweringOptions(**options), report)
    DIALECT.check(request)
    return request, report


EXAMPLES = [
    sys("Main prompt.  "),
    sys("[Example Chat]"),
    sys("Hi there.", "example_user"),
    sys("科里: Hello.", "example_assistant"),
]


def test_the_leading_system_messages_are_the_system_string_examples_named_once() -> None:
    request, report = lower(frame(*EXAMPLES, bot("Greeting."), user("Hi.")))
    assert request["system"] == "Main prompt.  \n\n[Example Chat]\n\nLin: Hi there.\n\n科里: Hello."
    assert request["messages"] == [
        {"role": "user", "content": "Begin."},
        {"role": "assistant", "content": "Greeting."},
        {"role": "user", "content": "Hi."},
    ]
    assert report == []


def test_the_opening_is_start_a_new_chat_when_empty_and_absent_when_the_chat_opens_with_user() -> (
    None
):
    request, _ = lower(frame(sys("Main."), bot("Greeting."), opening=" "))
    assert request["messages"][0] == {"role": "user", "content": "[Start a new chat]"}
    request, _ = lower(frame(sys("Main."), user("Hi.")))
    assert request["messages"] == [{"role": "user", "content": "Hi."}]
    request, _ = lower(frame(sys("Main.")))  # nothing but the system prompt
    assert request["messages"] == [{"role": "user", "content": "Begin."}]


def test_without_the_system_prompt_every_system_message_is_user_text() -> None:
    request, report = lower(frame(*EXAMPLES, bot("Greeting."), user("Hi."), useSysPrompt=False))
    assert "system" not in request and report == []
    assert request["messages"] == [
        {
            "role": "user",
            "content": "Main prompt.  \n\n[Example Chat]\n\nexample_user: Lin: Hi there.\n\n"
            "example_assistant: 科里: 科里: Hello.",
        },
        {"role": "assistant", "content": "Greeting."},
        {"role": "user", "content": "Hi."},
    ]


def test_system_text_in_the_chat_is_plain_user_text_joined_with_a_blank_line() -> None:
    chat = [sys("Main."), user("Hi."), sys("Note."), user("More."), bot("Ok."), sys("After.")]
    request, report = lower(frame(*chat))
    assert request["messages"] == [
        {"role": "user", "content": "Hi.\n\nNote.\n\nMore."},
        {"role": "assistant", "content": "Ok."},
        {"role": "user", "content": "After."},
    ]
    assert report == []  # SillyTavern sends it so: nothing to report


def test_names_are_written_by_sillytaverns_rule_and_speakers_kept_apart() -> None:
    chat = [user("Hi.", name="Mira Vale"), bot("Yo.", name="Аня"), user("Hey.", name="Оля")]
    request, _ = lower(frame(sys("Main."), *chat))
    assert [m["content"] for m in request["messages"]] == [
        "Mira_Vale: Hi.",
        "Аня: Yo.",
        "Оля: Hey.",
    ]


def test_the_prefill_is_the_final_assistant_turn_trimmed_and_joined() -> None:
    request, _ = lower(frame(sys("Main."), user("Hi."), prefill="*Mira smiles* \n"))
    assert request["messages"][-1] == {"role": "assistant", "content": "*Mira smiles*"}
    request, _ = lower(frame(sys("Main."), user("Hi."), bot("Well"), prefill="then"))
    assert request["messages"][-1] == {"role": "assistant", "content": "Well\n\nthen"}
    request, report = lower(frame(sys("Main."), user("Hi."), prefill="Sure"), "claude-sonnet-4-6")
    assert request["messages"] == [
        {"role": "user", "content": "Hi.\n\n[Begin your reply with this text]\nSure"}
    ]
    assert [d.code for d in report] == ["lower.prefill_unsupported"]


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        ("claude-3-haiku-20240307", True),
        ("claude-3-5-sonnet-20240620", True),
        ("claude-3-7-sonnet-latest", True),
        ("claude-sonnet-4-20250514", True),
        ("claude-opus-4-20250514", True),
        ("claude-opus-4-1", False),
        ("claude-sonnet-4-5", False),
        ("claude-haiku-4-5", False),
        ("claude-opus-4-7", False),
        ("claude-next", False),
    ],
)
def test_which_models_take_the_samplers(model: str, takes: bool) -> None:
    assert takes_samplers(model) is takes
    request, _ = lower(frame(sys("Main."), user("Hi.")), model, temperature=0.5, top_p=0.9)
    assert ("temperature" in request) is takes and ("top_k" in request) is takes


def test_the_samplers_as_sillytavern_sends_them() -> None:
    quiet = frozenset({"temperature", "top_p", "top_k"})
    request, report = lower(
        frame(sys("Main."), user("Hi.")), temperature=1.5, top_p=1.0, quiet=quiet
    )
    assert (request["temperature"], request["top_p"], request["top_k"]) == (1, 1.0, 0)
    assert [d.code for d in report] == ["lower.sampler_clamped"]  # Claude's 0 to 1
    request, _ = lower(frame(sys("Main."), user("Hi.")), temperature=0.2, top_p=0.8, top_k=40)
    assert (request["temperature"], request["top_p"], request["top_k"]) == (0.2, 0.8, 40)


def test_a_template_frame_keeps_its_own_layout() -> None:
    f = frame(sys("Main."), user("Hi."), sys("Note."))
    f = f.model_copy(update={"metadata": {}})
    request, _ = lower(f, temperature=0.5)
    assert request["system"] == [{"type": "text", "text": "Main."}]
    assert request["messages"][0]["content"][1]["text"].startswith("[System note]")
    assert "temperature" not in request


def test_cache_breakpoints_turn_strings_into_blocks() -> None:
    request, _ = lower(
        frame(sys("Main."), user("Hi."), bot("Yo."), user("Go on.")), cache_stable=True
    )
    mark = {"cache_control": {"type": "ephemeral"}}
    assert request["system"] == [{"type": "text", "text": "Main."} | mark]
    assert request["messages"][1]["content"] == [{"type": "text", "text": "Yo."} | mark]
    assert request["messages"][2]["content"] == [{"type": "text", "text": "Go on."} | mark]
    # a prefill is the final assistant turn: the mark stays on the user turn before it
    request, _ = lower(frame(sys("Main."), user("Hi."), prefill="Sure"), cache_stable=True)
    assert request["messages"][-2]["content"] == [{"type": "text", "text": "Hi."} | mark]
    assert request["messages"][-1] == {"role": "assistant", "content": "Sure"}


def test_tool_turns_keep_their_blocks_and_the_apis_rules() -> None:
    chat = [
        sys("Main."),
        user("Roll."),
        bot("Rolling.", toolCalls=[{"id": "c1", "name": "dice.roll", "arguments": {"sides": 6}}]),
        {"role": "tool", "toolCallId": "c1", "content": "4"},
        sys("Note."),
        user("Again?"),
    ]
    request, _ = lower(frame(*chat, tools=True), NEW)
    assert request["messages"][1]["content"][0] == {"type": "text", "text": "Rolling."}
    assert request["messages"][1]["content"][1]["type"] == "tool_use"
    assert request["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "4"},
        {"type": "text", "text": "Note.\n\nAgain?"},
    ]


def test_the_count_is_what_is_sent() -> None:
    request, _ = lower(frame(*EXAMPLES, bot("Greeting."), user("Hi."), prefill="Sure"))
    blocks = {
        **request,
        "system": [{"type": "text", "text": request["system"]}],
        "messages": [
            {"role": m["role"], "content": [{"type": "text", "text": m["content"]}]}
            for m in request["messages"]
        ],
    }
    assert DIALECT.count_request(request, COUNTER) == DIALECT.count_request(blocks, COUNTER)


def _required(cid: str, role: Role) -> Component:
    return Component(
        id=cid,
        kind=ComponentKind.WORKSPACE_FILE,
        source="test",
        role=role,
        required=True,
        strategy="truncate",
        inline_content="the",
    )


#: Found by hypothesis at the floor: with no user text the layout opens with the placeholder
#: user turn ("Begin.", 2 tokens), dearer than the one-token required text that replaces it,
#: so leaving out what can be cut is not the least (the floor said 13 for a 12-token request)
#: and a required part counted before the one that replaces the placeholder looked over.
USER_TEXT_ONLY = ContextFrame(components=[_required("000", "user")])
SYSTEM_THEN_USER = ContextFrame(components=[_required("000", "system"), _required("001", "user")])


@settings(max_examples=60, deadline=None)
@example(f=USER_TEXT_ONLY, use=True, prefill="", slack=0)
@example(f=SYSTEM_THEN_USER, use=True, prefill="", slack=0)
@given(
    f=frames(),
    use=st.booleans(),
    prefill=st.sampled_from(["", "Sure", "  "]),
    slack=st.integers(0, 400),
)
def test_the_fit_holds_with_sillytaverns_layout(
    f: ContextFrame, use: bool, prefill: str, slack: int
) -> None:
    f = ContextFrame(
        components=[c.model_copy(update={"token_budget": None}) for c in f.components],
        metadata={CLAUDE: claude(useSysPrompt=use, prefill=prefill)},
    )
    whole = [c.model_copy(update={"strategy": "fail"}) if c.required else c for c in f.components]
    need = floor_tokens(
        ContextFrame(components=whole, metadata=f.metadata),
        dialect=DIALECT,
        counter=COUNTER,
        model=OLD,
    )
    result = fit(
        f, dialect=DIALECT, counter=COUNTER, model=OLD, budget=need + slack, journal=Journal()
    )
    counted = DIALECT.count_request(DIALECT.lower(result.frame, OLD), COUNTER)
    assert counted == result.ledger.total_tokens <= need + slack
    kept = {c.id for c in result.frame.components}
    assert all(c.id in kept for c in f.components if c.required)


# -- a preset compiled ---------------------------------------------------------------------
def test_a_presets_claude_settings_reach_the_request(tmp_path: Path) -> None:
    path = write_preset(
        tmp_path,
        claude_use_sysprompt=True,
        human_sysprompt_message="{{user}} begins.",
        assistant_prefill="{{char}}:",
    )
    run = {
        "character": {"name": "Mira"},
        "persona": {"name": "Lin"},
        "chat": [{"role": "assistant", "content": "Welcome."}],
    }
    result = compiler.compile(path, context=run, mode="legacy", provider="anthropic", model=OLD)
    req = result.request
    assert req["system"] == "You are a helpful narrator.\n\n[Start a new Chat]"
    assert req["messages"] == [
        {"role": "user", "content": "Lin begins."},
        {"role": "assistant", "content": "Welcome.\n\nMira:"},
    ]


def test_a_preset_without_them_sends_sillytaverns_defaults(tmp_path: Path) -> None:
    path = write_preset(tmp_path)
    chat = {"chat": [{"role": "assistant", "content": "Welcome."}]}
    req = compiler.compile(
        path, context=chat, mode="legacy", provider="anthropic", model=OLD
    ).request
    assert "system" not in req  # claude_use_sysprompt: off
    opening = "You are a helpful narrator.\n\n[Start a new Chat]"
    assert req["messages"][0] == {"role": "user", "content": opening}
    on = write_preset(tmp_path, claude_use_sysprompt=True)
    req = compiler.compile(on, context=chat, mode="legacy", provider="anthropic", model=OLD).request
    assert req["messages"][0] == {"role": "user", "content": DEFAULT_HUMAN_SYSPROMPT}
    assert (req["temperature"], req["top_p"], req["top_k"]) == (1.0, 1.0, 0)


def test_a_wrong_type_is_a_coded_error(tmp_path: Path) -> None:
    path = write_preset(tmp_path, assistant_prefill=["no"])
    with pytest.raises(compiler.ContextError) as info:
        compiler.compile(path, context={"chat": []}, provider="anthropic")
    assert info.value.code == "context.invalid_preset"


# -- the SDK ---------------------------------------------------------------------------
def _wire(request: dict[str, Any]) -> tuple[dict[str, Any], str]:
    sent = sent_request(create_arguments(request))
    return json.loads(sent.content), sent.headers["anthropic-version"]


@needs_sdk
@pytest.mark.parametrize("model", [OLD, NEW])
def test_the_sdk_sends_the_body_unchanged(model: str) -> None:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
    from pydantic import TypeAdapter

    request, _ = lower(
        frame(*EXAMPLES, bot("Greeting."), user("Hi."), prefill="Sure"),
        model,
        temperature=0.5,
        top_p=1.0,
    )
    body, version = _wire(request)
    assert body == request
    if model == OLD:  # the samplers: SillyTavern's API version, which takes them
        assert version == "2023-06-01" and body["top_k"] == 0
    else:
        TypeAdapter(MessageCreateParamsNonStreaming).validate_python(request, strict=True)


@pytest.mark.parametrize("mode", ["legacy", "agent"])
@pytest.mark.parametrize(
    ("key", "text", "provider"),
    [
        ("assistant_prefill", "<<agent.plan>>", "anthropic"),
        ("assistant_prefill", "<{{noop}}<agent.plan>>", "anthropic"),
        ("human_sysprompt_message", "<{{trim}}<agent.system_prompt>>", "anthropic"),
        ("custom_stopping_strings", json.dumps(["<{{noop}}<agent.plan>>"]), "anthropic"),
        ("new_chat_prompt", "<{{noop}}<agent.plan>>", "gemini"),
    ],
)
def test_a_setting_text_never_sends_an_agent_macro(
    tmp_path: Path, mode: str, key: str, text: str, provider: str
) -> None:
    path = write_preset(tmp_path, claude_use_sysprompt=True, **{key: text})
    run = {"persona": {"name": "Lin"}, "chat": [{"role": "assistant", "content": "Welcome."}]}
    with pytest.raises(compiler.PolicyError) as info:
        compiler.compile(path, context=run, mode=mode, provider=provider)
    assert info.value.code == "agent.prompt_marker_unmaterialized"
    assert key in str(info.value)


def test_a_setting_text_may_carry_a_variables_agent_text(tmp_path: Path) -> None:
    path = write_preset(tmp_path, claude_use_sysprompt=True, assistant_prefill="{{getvar::x}}")
    run = {"variables": {"x": "<<agent.plan>>"}, "chat": [{"role": "user", "content": "Hi."}]}
    req = compiler.compile(path, context=run, mode="legacy", provider="anthropic", model=OLD)
    assert req.request["messages"][-1] == {"role": "assistant", "content": "<<agent.plan>>"}


def test_a_presets_whitespace_stop_is_left_out_quietly_even_when_strict(tmp_path: Path) -> None:
    path = write_preset(tmp_path, custom_stopping_strings=json.dumps(["\n", "END"]))
    run = {"chat": [{"role": "user", "content": "Hi."}]}
    result = compiler.compile(path, context=run, provider="anthropic", model=OLD, strict=True)
    assert result.request["stop_sequences"] == ["END"]
    assert not result.warnings
    caller = compiler.compile(path, context=run, provider="anthropic", model=OLD, stop=["\n"])
    assert "stop_sequences" not in caller.request
    assert [w.code for w in caller.warnings] == ["lower.unsupported"]
