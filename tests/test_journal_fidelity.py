"""What the journal and the ledger say (issue 12, item 19): unique, stable component ids; a
history sent shorter is cut, not skipped; a failure ledger does not call unprocessed
components kept; a missing run context, an empty chat or a missing card is a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import BudgetError

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"
DEFAULT = CORPUS / "presets" / "st-default-2024.json"
CARD = {"name": "Mira", "description": "Mira keeps the lighthouse.", "first_mes": "Hello."}
CHAT = [
    {"role": "user", "content": "Hi Mira."},
    {"role": "assistant", "content": "Welcome to the lighthouse."},
    {"role": "user", "content": "What is that light?"},
]
PRESET: dict[str, Any] = {
    "prompts": [
        {"identifier": "main", "content": "Write {{char}}'s next reply to {{user}}."},
        {"identifier": "worldInfoBefore", "marker": True},
        {"identifier": "charDescription", "marker": True},
        {"identifier": "charPersonality", "marker": True},
        {"identifier": "scenario", "marker": True},
        {"identifier": "worldInfoAfter", "marker": True},
        {"identifier": "chatHistory", "marker": True},
    ]
}


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def component_ids(events: list[compiler.Event]) -> list[str]:
    return [e.payload["component"] for e in events if "component" in e.payload]


def codes(result: compiler.CompileResult) -> list[str]:
    return [w.code for w in result.warnings]


def test_component_ids_are_unique_when_empty_components_are_left_out(tmp_path: Path) -> None:
    path = write(tmp_path, "p.json", PRESET)
    ctx = {"chat": CHAT, "character": CARD}  # no personality, scenario or world info
    result = compiler.compile(path, context=ctx, mode="legacy")
    ids = component_ids(result.events)
    assert len(ids) == len(set(ids)) == 8  # main, 2 world, 3 card fields, new chat, history
    assert [i.split(":")[1] for i in ids].count("character") == 3
    assert len({c.id for c in result.frame.components}) == len(result.frame.components)
    # stable: the same inputs give the same ids, and an entry's id does not depend on
    # whether the ones before it were empty
    again = compiler.compile(path, context=ctx, mode="legacy")
    assert component_ids(again.events) == ids
    full = {**CARD, "personality": "Calm.", "scenario": "A storm."}
    filled = compiler.compile(path, context={"chat": CHAT, "character": full}, mode="legacy")
    assert component_ids(filled.events) == ids
    assert [e.id for e in filled.ledger.entries][-1] == ids[-1]


@pytest.mark.skipif(not DEFAULT.is_file(), reason="../shared/corpus is absent")
def test_the_corpus_preset_journal_has_unique_ids() -> None:
    result = compiler.compile(DEFAULT, context={"chat": CHAT, "character": CARD})
    ids = component_ids(result.events)
    assert ids and len(ids) == len(set(ids))


def test_a_cut_history_is_logged_as_cut_not_skipped() -> None:
    chat = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Turn {i}. " + "w " * 30}
        for i in range(60)
    ]
    template = 'System.\n<<agent.file "notes.md" required=false>>\n<<agent.chat.history>>'
    ctx = {"chat": chat, "workspace": {"files": {"scratch/x.md": "x"}}}
    full = compiler.compile_string(template.replace("notes.md", "scratch/x.md"), context=ctx)
    big = {"chat": chat, "workspace": {"files": {"scratch/x.md": "note " * 3000}}}
    result = compiler.compile_string(
        template.replace("notes.md", "scratch/x.md"),
        context=big,
        budget=full.ledger.total_tokens // 2,
    )
    by_type: dict[str, list[dict[str, Any]]] = {}
    for e in result.events:
        by_type.setdefault(e.type, []).append(e.payload)
    (cut,) = by_type["context_component_cut"]
    assert cut["kind"] == "ChatHistory" and cut["action"] == "summarized"
    assert cut["reason"] == "budget" and cut["messagesDropped"] > 0
    (skipped,) = by_type["context_component_skipped"]  # the file is left out whole
    assert skipped["kind"] == "WorkspaceFile" and skipped["action"] == "dropped"
    history = next(e for e in result.ledger.entries if e.kind == "ChatHistory")
    assert history.action == "summarized"


def test_a_failure_ledger_says_not_reached_and_failed() -> None:
    template = "System.\n<<agent.plan required=true budget=20>>\n<<agent.diff.latest>>\n"
    template += "<<agent.chat.history>>"
    ctx = {"plan": "step " * 400, "diff": "d " * 50, "chat": CHAT}
    with pytest.raises(BudgetError) as info:  # the plan is over its own budget
        compiler.compile_string(template, context=ctx)
    ledger = compiler.BudgetLedger.model_validate(info.value.details["ledger"])
    actions = {e.kind: e.action for e in ledger.entries}
    assert actions["Plan"] == "failed"
    assert actions["DiffSummary"] == actions["ChatHistory"] == "not_reached"
    history = next(e for e in ledger.entries if e.kind == "ChatHistory")
    assert history.tokens_used == 0 and history.messages_kept == 0
    assert "not reached" in (history.reason or "")
    # the parts that cannot be cut are over the total: they were counted (kept), the rest
    # never had a turn
    with pytest.raises(BudgetError) as info:
        compiler.compile_string(template.replace(" budget=20", ""), context=ctx, budget=60)
    ledger = compiler.BudgetLedger.model_validate(info.value.details["ledger"])
    actions = {e.kind: e.action for e in ledger.entries}
    assert actions["Plan"] == "kept"
    assert actions["DiffSummary"] == actions["ChatHistory"] == "not_reached"


def test_no_run_context_is_a_warning_for_templates_and_presets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = write(tmp_path, "t.txt", "x")
    template.write_text("System.\n<<agent.chat.history>>")
    assert codes(compiler.compile(template)) == ["context.no_run_context"]
    preset = write(tmp_path, "p.json", PRESET)
    result = compiler.compile(preset, mode="legacy")
    assert codes(result) == ["context.no_run_context"]  # one warning says it all
    assert main(["compile", str(preset), "--mode", "legacy"]) == 0
    err = capsys.readouterr().err
    assert f"{preset}: warning[context.no_run_context]" in err and "--context" in err
    assert main(["compile", str(preset), "--mode", "legacy", "--strict"]) == 1
    assert "error[context.no_run_context]" in capsys.readouterr().err
    with pytest.raises(compiler.StrictError):
        compiler.compile(preset, mode="legacy", strict=True)
    # a budget check needs no run context: it counts the source alone
    assert main(["check", str(template), "--budget", "2000", "--strict"]) == 0
    assert "no_run_context" not in capsys.readouterr().err


def test_an_empty_chat_and_a_missing_card_are_warnings(tmp_path: Path) -> None:
    preset = write(tmp_path, "p.json", PRESET)
    run = write(tmp_path, "run.json", {"chat": []})
    result = compiler.compile(preset, context=run, mode="legacy")
    assert codes(result) == ["context.empty_chat", "context.no_character"]
    empty = result.warnings[0]
    assert (empty.file, empty.path, empty.severity) == (str(run), "chat", "warning")
    # with a card, an empty chat starts from its greeting, and is still said
    result = compiler.compile(preset, context={"chat": [], "character": CARD}, mode="legacy")
    assert codes(result) == ["context.empty_chat"]
    assert result.request["messages"][-1] == {"role": "assistant", "content": "Hello."}
    # an agent run may start from its task alone; a legacy compile cannot send the task
    agent = {"chat": [], "character": CARD, "task": "Describe the light."}
    assert (
        codes(compiler.compile(preset, context=agent, mode="agent"))
        == ["agent.prompt_entry_inserted"] * 3
    )
    assert "context.empty_chat" in codes(compiler.compile(preset, context=agent, mode="legacy"))
    # a chat and a card: nothing to say
    assert codes(compiler.compile(preset, context={"chat": CHAT, "character": CARD})) == []
    # a template that places no chat does not care about an empty one
    assert codes(compiler.compile_string("Plan: <<agent.plan>>", context={"plan": "p"})) == []
    empty_chat = compiler.compile_string("S.\n<<agent.chat.history>>", context={"chat": []})
    assert codes(empty_chat) == ["context.empty_chat"]
    # a preset that never says {{char}} does not need a card
    plain = write(tmp_path, "plain.json", {"prompts": [PRESET["prompts"][-1]]})
    assert "context.no_character" not in codes(compiler.compile(plain, context={"chat": CHAT}))


def test_event_ids_are_distinct_uuid4_hex() -> None:
    """An event's ``id`` (and the run's ``runId``) is a version-4 UUID's 32 hex digits, as
    ``uuid.uuid4().hex`` gives, and no two events share one."""
    import uuid

    from compiler._base.journal import Journal

    journal = Journal()
    events = [journal.emit("context_component_added", n=i) for i in range(200)]
    assert len({journal.run_id, *(e.id for e in events)}) == 201
    for value in [journal.run_id, *(e.id for e in events)]:
        parsed = uuid.UUID(hex=value)
        assert (parsed.version, parsed.variant, parsed.hex) == (4, uuid.RFC_4122, value)
