"""Compiling SillyTavern presets: corpus inputs, agent and legacy modes, the marker check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.errors import APCError, TemplateError
from compiler.inputs.cards import read_card
from compiler.profile import resolve_profile

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
DEFAULT = CORPUS / "presets" / "st-default-2024.json"
WORLD = CORPUS / "worlds" / "Eldoria.json"
CARDS = sorted((CORPUS / "cards").glob("*.png")) if (CORPUS / "cards").is_dir() else []
needs_corpus = pytest.mark.skipif(
    not (DEFAULT.is_file() and WORLD.is_file() and CARDS),
    reason="../shared/corpus is absent",
)

PERSONA = {"name": "Ann", "description": "Ann is a cartographer from the south."}
CHAT = [
    {"role": "assistant", "content": "The forest is quiet tonight."},
    {"role": "user", "content": "Tell me about Eldoria, its magic and the glade."},
]
AGENT_PROMPT = "You are the agent. Follow the plan."


def contents(result: compiler.CompileResult) -> list[str]:
    return [str(m.get("content") or "") for m in result.request["messages"]]


def index_of(texts: list[str], needle: str) -> int:
    for i, t in enumerate(texts):
        if needle in t:
            return i
    raise AssertionError(f"{needle[:60]!r} not in the request")


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def small_preset(*prompts: dict[str, Any], order: list[str] | None = None) -> dict[str, Any]:
    ids = order or [p["identifier"] for p in prompts]
    return {
        "prompts": list(prompts),
        "prompt_order": [
            {"character_id": 100001, "order": [{"identifier": i, "enabled": True} for i in ids]}
        ],
    }


def with_agent_entries(preset: dict[str, Any]) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(preset))
    copy["prompts"] += [
        {"identifier": "agentSystemPrompt", "name": "Agent", "role": "system", "marker": True},
        {"identifier": "agentTask", "name": "Task", "role": "user", "marker": True},
        {"identifier": "agentResults", "name": "Results", "role": "system", "marker": True},
    ]
    for order in copy["prompt_order"]:
        order["order"].insert(0, {"identifier": "agentSystemPrompt", "enabled": True})
        ids = [e["identifier"] for e in order["order"]]
        at = ids.index("chatHistory") if "chatHistory" in ids else len(ids)
        order["order"].insert(at, {"identifier": "agentTask", "enabled": True})
        order["order"].append({"identifier": "agentResults", "enabled": True})
    return copy


@needs_corpus
@pytest.mark.parametrize("card", CARDS, ids=lambda p: p.name)
def test_corpus_preset_compiles_with_each_card(card: Path) -> None:
    ctx = {"character": str(card), "persona": PERSONA, "worldInfo": str(WORLD), "chat": CHAT}
    result = compiler.compile(DEFAULT, context=ctx, mode="legacy")
    texts = contents(result)
    parsed = read_card(card)
    world = json.loads(WORLD.read_text(encoding="utf-8"))["entries"]
    glade = next(e["content"] for e in world.values() if "glade" in e["key"])
    # the 100001 order: worldInfoBefore, personaDescription, charDescription, ..., chatHistory
    char = parsed.nickname or parsed.name

    # world entries are creator content: SillyTavern fills {{user}} / {{char}} in them
    def fill(text: str) -> str:
        return text.replace("{{user}}", PERSONA["name"]).replace("{{char}}", char)

    at_world = index_of(texts, fill(glade).strip()[:60])
    assert "{{user}}" not in json.dumps(result.request)
    at_persona = index_of(texts, PERSONA["description"])
    at_desc = index_of(texts, fill(parsed.description).strip()[:60])
    at_chat = index_of(texts, CHAT[-1]["content"])
    assert at_world < at_persona < at_desc < at_chat
    assert texts[-2:] == [c["content"] for c in CHAT]  # jailbreak is empty, history is last
    name = parsed.nickname or parsed.name
    assert texts[0] == f"Write {name}'s next reply in a fictional chat between {name} and Ann."


@needs_corpus
def test_legacy_mode_carries_no_agent_content(tmp_path: Path) -> None:
    preset = with_agent_entries(json.loads(DEFAULT.read_text(encoding="utf-8")))
    preset["prompts"][0]["content"] += " <<agent.plan>> <<agent.tools.available>>"
    path = write(tmp_path, "preset.json", preset)
    ctx = {
        "character": str(CARDS[0]),
        "chat": CHAT,
        "task": "Write chapter two.",
        "plan": ["outline", "draft"],
        "toolResults": [{"callId": "c1", "tool": "dice.roll", "content": "17"}],
    }
    profile = resolve_profile()
    result = compiler.compile(path, context=ctx, mode="legacy", profile=profile)
    body = json.dumps(result.request)
    for agent_text in (profile.effective_system_prompt()[:40], "Write chapter two", "outline"):
        assert agent_text not in body
    assert "<<agent." not in body and "tools" not in result.request
    assert "17" not in body
    kinds = {c.kind.value for c in result.frame.components}
    assert not kinds & {"SystemInstruction", "ToolResults", "Plan", "ToolDefinitions"}


@needs_corpus
def test_agent_mode_places_the_profile_prompt_at_its_entry(tmp_path: Path) -> None:
    preset = json.loads(DEFAULT.read_text(encoding="utf-8"))
    preset = with_agent_entries(preset)
    preset["agent"] = {"enabled": True}  # an agent schema makes agent mode the default
    path = write(tmp_path, "preset.json", preset)
    profile = resolve_profile(
        run={"id": "custom", "instructions": {"agentSystemPrompt": AGENT_PROMPT}}
    )
    ctx = {"character": str(CARDS[0]), "chat": CHAT, "task": "Write chapter two."}
    result = compiler.compile(path, context=ctx, profile=profile)  # agent: the default
    messages = result.request["messages"]
    assert messages[0] == {"role": "system", "content": AGENT_PROMPT}
    task_at = index_of(contents(result), "Write chapter two.")
    assert messages[task_at]["role"] == "user"
    assert contents(result)[task_at + 1] == "[Start a new Chat]"  # new_chat_prompt, then chat
    assert task_at == index_of(contents(result), CHAT[0]["content"]) - 2  # default order


def test_agent_mode_keeps_the_entry_role_and_disabled_state(tmp_path: Path) -> None:
    agent = {"identifier": "agentSystemPrompt", "role": "user", "marker": True}
    main = {"identifier": "main", "role": "system", "content": "Main text."}
    path = write(tmp_path, "p.json", small_preset(agent, main))
    result = compiler.compile(path, mode="agent")
    first = result.request["messages"][0]
    assert first["role"] == "user"
    assert first["content"] == resolve_profile().effective_system_prompt().strip()
    data = small_preset(agent, main)
    data["prompt_order"][0]["order"][0]["enabled"] = False
    off = compiler.compile(write(tmp_path, "off.json", data), mode="agent")
    assert off.request["messages"] == [{"role": "system", "content": "Main text."}]


def test_agent_mode_inserts_the_agent_entries_a_preset_lacks(tmp_path: Path) -> None:
    """Issue 12: TauriTavern's PromptManager adds the Agent entries at run time, so a preset
    without them still runs in agent mode: they are inserted where TauriTavern puts them
    (agentSystemPrompt first, agentTask before chatHistory), each with a warning, and the
    request offers the profile's tools."""
    preset = small_preset(
        {"identifier": "main", "content": "Hi."},
        {"identifier": "chatHistory", "marker": True},
    )
    path = write(tmp_path, "p.json", preset)
    ctx = {"chat": CHAT, "task": "Write chapter two."}
    result = compiler.compile(path, context=ctx, mode="agent")
    texts = contents(result)
    assert texts[0] == resolve_profile().effective_system_prompt().strip()
    assert texts[1] == "Hi."
    assert texts.index("Write chapter two.") < texts.index(CHAT[0]["content"])
    inserted = [w for w in result.warnings if w.code == "agent.prompt_entry_inserted"]
    assert len(inserted) == 3
    assert "workspace_finish" in {t["function"]["name"] for t in result.request["tools"]}
    legacy = compiler.compile(path, context=ctx, mode="legacy")
    assert legacy.request["messages"][0]["content"] == "Hi." and "tools" not in legacy.request
    assert [w.code for w in legacy.warnings] == ["agent.task_ignored"]  # never silent


def test_macros_in_entries_expand_and_errors_point_into_the_preset(tmp_path: Path) -> None:
    good = small_preset(
        {"identifier": "main", "content": "Plan:\n<<agent.plan>>"},
        {"identifier": "chatHistory", "marker": True},
    )
    ctx = {"plan": ["look", "leap"], "chat": CHAT}
    result = compiler.compile(write(tmp_path, "good.json", good), context=ctx, mode="legacy")
    assert "look" not in json.dumps(result.request)  # legacy: no agent content
    agent = small_preset(
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": "Plan:\n<<agent.plan>>"},
        {"identifier": "chatHistory", "marker": True},
    )
    expanded = compiler.compile(write(tmp_path, "agent.json", agent), context=ctx, mode="agent")
    assert "Plan:\n1. look\n2. leap" in contents(expanded)
    bad = small_preset(
        {"identifier": "main", "content": 'ok\n  <<agent.fiel "x">>'},
        {"identifier": "x1", "content": "<<agent.plan budget=-1>>"},
    )
    path = write(tmp_path, "bad.json", bad)
    with pytest.raises(TemplateError) as info:
        compiler.compile(path, mode="legacy")
    where = [d.span.file for d in info.value.diagnostics if d.span]
    assert where == [f"{path}#prompts[0].content", f"{path}#prompts[1].content"]
    first = info.value.diagnostics[0]
    assert first.span is not None and (first.span.line, first.span.column) == (2, 3)


def test_tavern_macros_fill_preset_text_but_never_data(tmp_path: Path) -> None:
    preset = small_preset(
        {"identifier": "main", "content": "{{char}} talks to {{USER}}. {{unknown}}"},
        {"identifier": "chatHistory", "marker": True},
    )
    card = {"name": "Sera", "description": "A healer."}
    chat = [{"role": "user", "content": "Hello {{char}}"}]
    ctx = {"character": card, "persona": PERSONA, "chat": chat}
    result = compiler.compile(write(tmp_path, "p.json", preset), context=ctx, mode="legacy")
    assert contents(result) == [
        "Sera talks to Ann. {{unknown}}",
        "[Start a new Chat]",
        "Hello {{char}}",
    ]


def test_card_overrides_main_and_jailbreak_with_original(tmp_path: Path) -> None:
    preset = small_preset(
        {"identifier": "main", "content": "MAIN for {{char}}"},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "jailbreak", "content": "JB", "forbid_overrides": True},
    )
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Sera",
            "system_prompt": "Card says: {{original}} (as {{char}})",
            "post_history_instructions": "card PHI",
        },
    }
    ctx = {"character": card, "chat": CHAT}
    result = compiler.compile(write(tmp_path, "p.json", preset), context=ctx, mode="legacy")
    texts = contents(result)
    assert texts[0] == "Card says: MAIN for Sera (as Sera)"
    assert texts[-1] == "JB"


def test_in_chat_injections_are_placed_at_their_depth(tmp_path: Path) -> None:
    preset = small_preset(
        {"identifier": "chatHistory", "marker": True},
        {
            "identifier": "note",
            "role": "system",
            "content": "Remember {{char}}.",
            "injection_position": 1,
            "injection_depth": 1,
        },
    )
    ctx = {"character": {"name": "Sera"}, "chat": CHAT}
    result = compiler.compile(write(tmp_path, "p.json", preset), context=ctx, mode="legacy")
    assert contents(result)[1:] == [CHAT[0]["content"], "Remember Sera.", CHAT[1]["content"]]


def test_a_marker_left_in_preset_text_is_a_leak(tmp_path: Path) -> None:
    escaped = small_preset(
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": r"Keep this: \<<agent.plan>>"},
    )
    # an escape is the author's literal text, never a leak
    result = compiler.compile(write(tmp_path, "p.json", escaped), mode="agent")
    assert contents(result)[-1] == "Keep this: <<agent.plan>>"
    injected = small_preset(
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "n", "content": "<<agent.plan>>", "injection_position": 1},
    )
    with pytest.raises(APCError) as info:
        compiler.compile(write(tmp_path, "i.json", injected), context={"chat": CHAT}, mode="agent")
    assert info.value.code == "agent.prompt_marker_unmaterialized"


def test_data_containing_agent_macros_passes_through(tmp_path: Path) -> None:
    (tmp_path / "ws" / "output").mkdir(parents=True)
    (tmp_path / "ws" / "output" / "notes.md").write_text("see <<agent.plan>>", encoding="utf-8")
    preset = small_preset(
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "content": 'File: <<agent.file "output/notes.md">>'},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "agentResults", "marker": True},
    )
    run = {
        "workspace": "ws",
        "chat": [{"role": "user", "content": "What is <<agent.plan>>?"}],
        "character": {"name": "X", "description": "<<agent.plan>> in a card"},
        "toolResults": [{"callId": "c1", "tool": "dice.roll", "content": "<<agent.plan>>!"}],
        "plan": ["SECRET-PLAN-STEP"],
    }
    ctx = write(tmp_path, "run.json", run)
    result = compiler.compile(write(tmp_path, "p.json", preset), context=ctx, mode="agent")
    texts = contents(result)
    assert "File: see <<agent.plan>>" in texts
    assert "What is <<agent.plan>>?" in texts
    assert "<<agent.plan>>!" in texts
    assert "SECRET-PLAN-STEP" not in json.dumps(result.request)


def test_run_context_reads_a_sillytavern_chat_file(tmp_path: Path) -> None:
    lines = [
        {"user_name": "Ann", "character_name": "Sera"},
        {"name": "Sera", "is_user": False, "mes": "Hello."},
        {"name": "Ann", "is_user": True, "mes": "Hi <<agent.plan>>"},
    ]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines), "utf-8")
    preset = small_preset({"identifier": "chatHistory", "marker": True})
    ctx = write(tmp_path, "run.json", {"chat": "chat.jsonl"})
    result = compiler.compile(write(tmp_path, "p.json", preset), context=ctx, mode="legacy")
    assert [(m["role"], m["content"]) for m in result.request["messages"]] == [
        ("system", "[Start a new Chat]"),
        ("assistant", "Hello."),
        ("user", "Hi <<agent.plan>>"),
    ]


def test_plain_preset_defaults_to_legacy_and_agent_schema_to_agent(tmp_path: Path) -> None:
    plain = small_preset({"identifier": "main", "content": "Hello."})
    assert contents(compiler.compile(write(tmp_path, "plain.json", plain))) == ["Hello."]
    agent = {**plain, "agent": {"enabled": True}}
    as_agent = compiler.compile(write(tmp_path, "agent.json", agent))  # agent mode: entries
    assert contents(as_agent)[0] == resolve_profile().effective_system_prompt().strip()


@needs_corpus
def test_corpus_preset_frames_examples_new_chat_and_greeting(tmp_path: Path) -> None:
    """Issue 12, items 10 and 11 on st-default-2024 and a corpus card: named example
    messages after [Example Chat], [Start a new Chat] right before the chat, and an empty
    chat starting with the card's first_mes."""
    from compiler.inputs.cards import read_card

    card = read_card(CARDS[0])
    ctx = {"character": str(CARDS[0]), "persona": PERSONA, "chat": []}
    messages = compiler.compile(DEFAULT, context=ctx, mode="legacy").request["messages"]
    at = [m["content"] for m in messages].index("[Start a new Chat]")
    assert messages[at + 1]["role"] == "assistant"
    assert messages[at + 1]["content"].startswith(card.first_mes.replace("\r\n", "\n")[:20])
    named = [m for m in messages if "name" in m]
    if card.mes_example.strip():
        assert named and {m["name"] for m in named} <= {"example_user", "example_assistant"}
        assert all(m["role"] == "system" for m in named)
        assert messages[messages.index(named[0]) - 1]["content"] == "[Example Chat]"
