"""The Author's Note and the Character's Note in a SillyTavern preset compile, as SillyTavern
1.12.6 places them (issue 12, item 9): authors-note.js setFloatingPrompt (interval),
openai.js preparePromptsForChatCompletion / populationInjectionPrompts (positions, depth,
role, merging at one depth), script.js (Character's Note, persona positions) and
world-info.js (entries at positions 2/3 around the note)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.profile import resolve_profile

IDS = ["main", "personaDescription", "chatHistory", "jailbreak"]
CARD: dict[str, Any] = {"name": "Aqua", "description": "Goddess."}
CHAT = [
    {"role": "user", "content": "u1"},
    {"role": "assistant", "content": "a1"},
    {"role": "user", "content": "u2"},
    {"role": "assistant", "content": "a2"},
    {"role": "user", "content": "u3"},
]


def write_preset(tmp_path: Path, *, disabled: tuple[str, ...] = (), ids: list[str] = IDS) -> Path:
    texts = {"main": "Main.", "jailbreak": "JB."}
    prompts = [
        {"identifier": i, "role": "system", "content": texts[i]}
        if i in texts
        else {"identifier": i, "marker": True}
        for i in ids
    ]
    order = [{"identifier": i, "enabled": i not in disabled} for i in ids]
    path = tmp_path / "preset.json"
    path.write_text(json.dumps({"prompts": prompts, "prompt_order": [
        {"character_id": 100001, "order": order}
    ]}))  # fmt: skip
    return path


def run(
    tmp_path: Path,
    meta: dict[str, Any] | None = None,
    *,
    mode: str = "legacy",
    preset: Path | None = None,
    **ctx: Any,
) -> compiler.CompileResult:
    context: dict[str, Any] = {"character": CARD, "persona": {"name": "Kazuma"}, "chat": CHAT}
    if meta is not None:
        context["chatMetadata"] = meta
    context.update(ctx)
    return compiler.compile(
        preset or write_preset(tmp_path),
        context=context,
        mode=mode,  # type: ignore[arg-type]
    )


def pairs(result: compiler.CompileResult) -> list[tuple[str, str]]:
    return [(m["role"], m.get("content") or "") for m in result.request["messages"]]


def chat_part(result: compiler.CompileResult) -> list[tuple[str, str]]:
    """The messages from the first chat message to the jailbreak."""
    got = pairs(result)
    start = got.index(("user", "u1"))
    return got[start : got.index(("system", "JB."))]


@pytest.mark.parametrize("mode", ["legacy", "agent"])
def test_default_note_is_in_chat_at_depth_4_as_system(tmp_path: Path, mode: str) -> None:
    result = run(tmp_path, {"note_prompt": "Keep it short."}, mode=mode)
    got = chat_part(result)
    assert got == [
        ("user", "u1"),
        ("system", "Keep it short."),  # four messages follow it
        ("assistant", "a1"),
        ("user", "u2"),
        ("assistant", "a2"),
        ("user", "u3"),
    ]


@pytest.mark.parametrize("mode", ["legacy", "agent"])
def test_positions_after_and_before_main(tmp_path: Path, mode: str) -> None:
    after = pairs(run(tmp_path, {"note_prompt": "AN", "note_position": 0}, mode=mode))
    before = pairs(run(tmp_path, {"note_prompt": "AN", "note_position": 2}, mode=mode))
    at = after.index(("system", "Main."))
    assert after[at + 1] == ("system", "AN")
    at = before.index(("system", "Main."))
    assert before[at - 1] == ("system", "AN")
    assert ("system", "AN") not in chat_part(
        run(tmp_path, {"note_prompt": "AN", "note_position": 0})
    )


def test_beside_main_takes_the_notes_role(tmp_path: Path) -> None:
    got = pairs(run(tmp_path, {"note_prompt": "AN", "note_position": 0, "note_role": 1}))
    assert got[:2] == [("system", "Main."), ("user", "AN")]


def test_disabled_main_still_anchors_the_note(tmp_path: Path) -> None:
    """SillyTavern keeps a disabled main as an empty anchor for relative inserts."""
    preset = write_preset(tmp_path, disabled=("main",))
    got = pairs(run(tmp_path, {"note_prompt": "AN", "note_position": 2}, preset=preset))
    assert got[0] == ("system", "AN") and ("system", "Main.") not in got


def test_no_main_at_all_is_reported(tmp_path: Path) -> None:
    preset = write_preset(tmp_path, ids=["chatHistory", "jailbreak"])
    result = run(tmp_path, {"note_prompt": "AN", "note_position": 0}, preset=preset)
    assert ("system", "AN") not in pairs(result)
    assert [w.code for w in result.warnings] == ["context.note_unplaced"]


@pytest.mark.parametrize(
    ("interval", "users", "sent"),
    [
        (1, 0, True),  # interval 1: always, even before the first user message
        (1, 3, True),
        (2, 1, False),
        (2, 2, True),
        (2, 3, False),
        (3, 2, False),
        (3, 6, True),
        (0, 4, False),  # 0: never
        (-1, 4, False),
    ],
)
def test_interval_counts_user_messages(
    tmp_path: Path, interval: int, users: int, sent: bool
) -> None:
    chat: list[dict[str, str]] = []
    for i in range(users):
        chat += [{"role": "user", "content": f"u{i}"}, {"role": "assistant", "content": f"a{i}"}]
    meta = {"note_prompt": "AN", "note_interval": interval, "note_depth": 0}
    result = run(tmp_path, meta, chat=chat)
    assert (("system", "AN") in pairs(result)) is sent


def test_depth_and_role(tmp_path: Path) -> None:
    meta = {"note_prompt": "AN", "note_depth": 0, "note_role": 2}
    assert chat_part(run(tmp_path, meta))[-2:] == [("user", "u3"), ("assistant", "AN")]
    meta = {"note_prompt": "AN", "note_depth": 1, "note_role": 1}
    assert chat_part(run(tmp_path, meta))[-3:] == [
        ("assistant", "a2"),
        ("user", "AN"),
        ("user", "u3"),
    ]
    meta = {"note_prompt": "AN", "note_depth": 99}  # past the start: the top of the history
    got = pairs(run(tmp_path, meta))
    assert got[got.index(("user", "u1")) - 1] == ("system", "AN")


@pytest.mark.parametrize(
    ("meta", "path"),
    [
        ({"note_depth": 1001}, "chatMetadata.note_depth"),
        ({"note_depth": 1.5}, "chatMetadata.note_depth"),
        ({"note_role": 3}, "chatMetadata.note_role"),
        ({"note_position": 5}, "chatMetadata.note_position"),
    ],
)
def test_a_note_sillytavern_cannot_place_is_reported(
    tmp_path: Path, meta: dict[str, Any], path: str
) -> None:
    result = run(tmp_path, {"note_prompt": "AN", **meta})
    assert not any("AN" in c for _, c in pairs(result))
    warned = [w for w in result.warnings if w.code == "context.note_unplaced"]
    assert len(warned) == 1 and warned[0].path == path


def test_empty_note_sends_nothing(tmp_path: Path) -> None:
    baseline = pairs(run(tmp_path))
    assert pairs(run(tmp_path, {"note_prompt": ""})) == baseline
    assert pairs(run(tmp_path, {"note_prompt": "  \n "})) == baseline
    assert not run(tmp_path, {"note_prompt": ""}).warnings


def test_macros_in_the_note_are_filled(tmp_path: Path) -> None:
    meta = {"note_prompt": "{{char}} teases {{user}}.{{newline}}{{// hidden}}Now.", "note_depth": 0}
    ctx: dict[str, Any] = {"now": "2024-03-05T14:07:00+00:00"}
    got = chat_part(run(tmp_path, meta, **ctx))
    assert got[-1] == ("system", "Aqua teases Kazuma.\nNow.")
    meta["note_prompt"] = "{{random::a::b}} {{isodate}}"
    one, two = (chat_part(run(tmp_path, meta, seed=7, **ctx))[-1] for _ in range(2))
    assert one == two and one[1].endswith(" 2024-03-05")


def test_same_depth_merges_in_sillytavern_order(tmp_path: Path) -> None:
    """One message per role: the preset's entries, then the extension prompts sorted by key
    (2_floating_prompt, DEPTH_PROMPT, PERSONA_DESCRIPTION, customDepthWI-d-r); the roles of
    one depth end up assistant, user, system (openai.js populationInjectionPrompts)."""
    preset = json.loads(write_preset(tmp_path).read_text())
    preset["prompts"].append({
        "identifier": "inj", "role": "system", "content": "PRESET",
        "injection_position": 1, "injection_depth": 1,
    })  # fmt: skip
    preset["prompt_order"][0]["order"].append({"identifier": "inj", "enabled": True})
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(preset))
    card = {**CARD, "extensions": {"depth_prompt": {"prompt": "CN", "depth": 1}}}
    world = [
        {"content": "WI-sys", "position": 4, "depth": 1, "role": 0},
        {"content": "WI-asst", "position": 4, "depth": 1, "role": 2},
    ]
    persona = {"name": "Kazuma", "description": "P", "position": 4, "depth": 1, "role": 1}
    meta = {"note_prompt": "AN", "note_depth": 1}
    result = run(tmp_path, meta, preset=path, character=card, worldInfo=world, persona=persona)
    assert chat_part(result)[-5:] == [
        ("assistant", "a2"),
        ("assistant", "WI-asst"),
        ("user", "P"),
        ("system", "PRESET\nAN\nCN\nWI-sys"),
        ("user", "u3"),
    ]


def book(tmp_path: Path, entries: list[dict[str, Any]]) -> str:
    """A lorebook of constant entries (activation sorts them as SillyTavern does)."""
    data = {"entries": {str(i): {"uid": i, "constant": True, **e} for i, e in enumerate(entries)}}
    (tmp_path / "book.json").write_text(json.dumps(data))
    return str(tmp_path / "book.json")


def test_world_info_and_persona_wrap_the_note(tmp_path: Path) -> None:
    """top entries (ascending order), the persona above (2) or below (3) the note, the
    bottom entries: public/script.js then public/scripts/world-info.js."""
    world = book(
        tmp_path,
        [
            {"content": "top 2", "position": 2, "order": 2},
            {"content": "top 1", "position": 2, "order": 1},
            {"content": "bottom", "position": 3},
            {"content": "elsewhere", "position": 0},
        ],
    )
    meta = {"note_prompt": "AN {{user}}", "note_depth": 0}
    for position, expected in [(2, "P Kazuma\nAN Kazuma"), (3, "AN Kazuma\nP Kazuma")]:
        persona = {"name": "Kazuma", "description": "P {{user}}", "position": position}
        result = run(tmp_path, meta, worldInfo=world, persona=persona)
        assert chat_part(result)[-1] == ("system", f"top 1\ntop 2\n{expected}\nbottom")
        assert not result.warnings
        # the persona is around the note, not at the personaDescription marker
        assert not any(c == "P Kazuma" for _, c in pairs(result))


def test_world_info_wraps_an_empty_note(tmp_path: Path) -> None:
    """An empty note is still inserted (its interval fires): SillyTavern sends
    ``top\n\nbottom`` there, less one leading and one trailing newline (world-info.js
    ``ANWithWI``), trimmed in chat (getExtensionPrompt); beside main as it is, as every
    legacy preset message keeps its edges (st-oracle capture synth_whitespace)."""
    world = book(tmp_path, [{"content": "top", "position": 2}])
    got = chat_part(run(tmp_path, {"note_depth": 0}, worldInfo=world))
    assert got[-1] == ("system", "top")
    got = pairs(run(tmp_path, {"note_position": 0}, worldInfo=world))
    assert got[:2] == [("system", "Main."), ("system", "top\n")]
    world = book(tmp_path, [{"content": "bottom", "position": 3}])
    got = pairs(run(tmp_path, {"note_position": 0}, worldInfo=world))
    assert got[:2] == [("system", "Main."), ("system", "\nbottom")]


def test_nothing_wraps_a_note_that_is_not_inserted(tmp_path: Path) -> None:
    world = [{"content": "top", "position": 2, "uid": 7, "comment": "T"}]
    persona = {"name": "Kazuma", "description": "P", "position": 2}
    meta = {"note_prompt": "AN", "note_interval": 2, "note_depth": 0}
    result = run(tmp_path, meta, worldInfo=world, persona=persona)
    assert not any(c in ("top", "P", "AN") or "top" in c for _, c in pairs(result))
    assert [w.code for w in result.warnings] == ["world.author_note_absent"]
    assert "7" in result.warnings[0].message and "(T)" in result.warnings[0].message


def test_persona_at_depth_and_nowhere(tmp_path: Path) -> None:
    persona = {"name": "Kazuma", "description": "I am {{user}}.", "position": 4, "depth": 0}
    got = pairs(run(tmp_path, persona=persona))
    assert got[-3:-1] == [("user", "u3"), ("system", "I am Kazuma.")]
    assert got.count(("system", "I am Kazuma.")) == 1
    result = run(tmp_path, persona={**persona, "depth": 1001})
    assert not any("I am" in c for _, c in pairs(result))
    assert [(w.code, w.path) for w in result.warnings] == [
        ("context.note_unplaced", "persona.depth")
    ]
    persona = {**persona, "position": 9}
    assert not any("I am" in c for _, c in pairs(run(tmp_path, persona=persona)))
    persona = {**persona, "position": 1}  # deprecated AFTER_CHAR: in the prompt
    got = pairs(run(tmp_path, persona=persona))
    assert got[1] == ("system", "I am Kazuma.")


def test_character_note(tmp_path: Path) -> None:
    note = {"prompt": "  Stay {{char}}.\r\nAlways.  ", "depth": 1, "role": "user"}
    card = {**CARD, "extensions": {"depth_prompt": note}}
    got = chat_part(run(tmp_path, character=card))
    assert got[-2:] == [("user", "Stay Aqua.\nAlways."), ("user", "u3")]
    card = {**CARD, "extensions": {"depth_prompt": {"prompt": "CN"}}}  # defaults: 4, system
    assert chat_part(run(tmp_path, character=card))[1] == ("system", "CN")
    card = {**CARD, "extensions": {"depth_prompt": {"prompt": "CN", "depth": "0", "role": 2}}}
    assert chat_part(run(tmp_path, character=card))[-1] == ("assistant", "CN")


def test_character_note_sillytavern_cannot_place(tmp_path: Path) -> None:
    for bad, path in [({"prompt": 3}, ""), ({"prompt": "CN", "depth": "deep"}, ".depth")]:
        card = {**CARD, "extensions": {"depth_prompt": bad}}
        result = run(tmp_path, character=card)
        assert not any("CN" in c for _, c in pairs(result))
        assert [w.path for w in result.warnings] == [f"extensions.depth_prompt{path}"]


def test_notes_need_a_chat_history_marker(tmp_path: Path) -> None:
    preset = write_preset(tmp_path, ids=["main", "jailbreak"])
    card = {**CARD, "extensions": {"depth_prompt": {"prompt": "CN"}}}
    got = pairs(run(tmp_path, {"note_prompt": "AN"}, preset=preset, character=card))
    assert got == [("system", "Main."), ("system", "JB.")]


def test_chat_metadata_from_a_chat_file(tmp_path: Path) -> None:
    header = {"user_name": "Kazuma", "character_name": "Aqua", "chat_metadata": {
        "note_prompt": "From the file.", "note_depth": 0, "note_role": 1, "tainted": True,
    }}  # fmt: skip
    lines = [header, {"name": "Kazuma", "is_user": True, "mes": "hi"}]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    ctx = {"character": CARD, "chat": "chat.jsonl"}
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    preset = write_preset(tmp_path)
    result = compiler.compile(preset, context=tmp_path / "run.json", mode="legacy")
    assert pairs(result)[-2:] == [("user", "From the file."), ("system", "JB.")]
    # the run context's own keys win over the file's
    ctx["chatMetadata"] = {"note_role": 2}
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    result = compiler.compile(preset, context=tmp_path / "run.json", mode="legacy")
    assert pairs(result)[-2:] == [("assistant", "From the file."), ("system", "JB.")]


@pytest.mark.parametrize(
    "meta",
    [{"note_prompt": 3}, {"note_depth": "4"}, {"note_interval": True}, {"note_role": "x"}],
)
def test_bad_chat_metadata_is_a_context_error(tmp_path: Path, meta: dict[str, Any]) -> None:
    with pytest.raises(compiler.ContextError) as caught:
        run(tmp_path, meta)
    assert caught.value.code == "context.invalid_context"
    assert "chatMetadata" in str(caught.value.path)


def test_bad_chat_metadata_in_a_chat_file(tmp_path: Path) -> None:
    (tmp_path / "chat.jsonl").write_text(json.dumps({"chat_metadata": {"note_depth": "x"}}))
    with pytest.raises(compiler.ContextError) as caught:
        compiler.load_context({"chat": "chat.jsonl"}, base_dir=tmp_path)
    assert caught.value.code == "context.invalid_chat"
    assert "chat_metadata" in str(caught.value.path)


def test_hidden_inputs_send_no_notes(tmp_path: Path) -> None:
    """The profile's resource policy hides the card, the persona, the world info: the notes
    and wrappings drawn from them go too."""
    card = {**CARD, "extensions": {"depth_prompt": {"prompt": "CN"}}}
    persona = {"name": "Kazuma", "description": "PERSONA", "position": 4}
    world = [{"content": "WORLD", "position": 2}]
    hide = ["character.instructions", "user.profile", "world.activated"]
    profile = resolve_profile(run={"context": {"exclude": hide}})
    result = compiler.compile(
        write_preset(tmp_path, ids=["main", "chatHistory", "jailbreak"]),
        context={"character": card, "persona": persona, "worldInfo": world, "chat": CHAT},
        profile=profile,
        mode="legacy",
    )
    body = json.dumps(result.request)
    assert "CN" not in body and "PERSONA" not in body and "WORLD" not in body


@pytest.mark.parametrize("mode", ["legacy", "agent"])
def test_seraphina_with_the_default_preset(tmp_path: Path, corpus: Path, mode: str) -> None:
    """The corpus Seraphina card (read in place) carries an empty depth_prompt (depth 4,
    system): no Character's Note. The same card with a note there sends it four messages
    from the end, in one message with the Author's Note (``2_floating_prompt`` sorts before
    ``DEPTH_PROMPT``), and nothing else changes."""
    from compiler.inputs.cards import read_card_json

    card_path = corpus / "cards" / "Seraphina-v2v3.png"
    raw, _ = read_card_json(card_path)
    assert raw["data"]["extensions"]["depth_prompt"] == {"prompt": "", "depth": 4, "role": "system"}
    preset = corpus / "presets" / "st-default-2024.json"
    ctx: dict[str, Any] = {"character": str(card_path), "chat": CHAT, "persona": {"name": "Kazuma"}}
    plain = pairs(compiler.compile(preset, context=ctx, mode=mode))  # type: ignore[arg-type]
    raw["data"]["extensions"]["depth_prompt"]["prompt"] = "{{char}} heals {{user}}."
    (tmp_path / "seraphina.json").write_text(json.dumps(raw))
    ctx = {**ctx, "character": str(tmp_path / "seraphina.json")}
    ctx["chatMetadata"] = {"note_prompt": "Gentle tone."}
    noted = pairs(compiler.compile(preset, context=ctx, mode=mode))  # type: ignore[arg-type]
    note = ("system", "Gentle tone.\nSeraphina heals Kazuma.")
    at = noted.index(note)
    assert noted[at - 1 : at + 5] == [
        ("user", "u1"),
        note,
        *[(m["role"], m["content"]) for m in CHAT[1:]],
    ]
    assert [r for r in noted if r != note] == plain


def test_interval_counts_hidden_user_lines_of_a_chat_file(tmp_path: Path) -> None:
    """setFloatingPrompt counts every ``is_user`` message, ``/hide`` ones too."""
    lines: list[dict[str, Any]] = [{"user_name": "Kazuma", "character_name": "Aqua"}]
    lines += [
        {"name": "Kazuma", "is_user": True, "mes": "hidden", "is_system": True},
        {"name": "Aqua", "is_user": False, "mes": "a1"},
        {"name": "Kazuma", "is_user": True, "mes": "u2"},
    ]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    meta = {"note_prompt": "AN", "note_interval": 2, "note_depth": 0}
    ctx = {"character": CARD, "chat": str(tmp_path / "chat.jsonl"), "chatMetadata": meta}
    result = compiler.compile(write_preset(tmp_path), context=ctx, mode="legacy")
    assert ("system", "AN") in pairs(result)  # two user lines, one of them hidden
    ctx["chat"] = [{"role": "assistant", "content": "a1"}, {"role": "user", "content": "u2"}]
    result = compiler.compile(write_preset(tmp_path), context=ctx, mode="legacy")
    assert ("system", "AN") not in pairs(result)


def test_a_null_note_field_takes_its_default(tmp_path: Path) -> None:
    """authors-note.js loadSettings reads each field with ``??``: ``null`` is the default
    (no note, interval 1, depth 4, position 1, role 0), in a chat file's header as inline."""
    meta = {"note_prompt": "AN", "note_interval": None, "note_depth": None, "note_role": None}
    assert ("system", "AN") in chat_part(run(tmp_path, meta))
    lines = [
        {"chat_metadata": {"note_prompt": None}},
        {"name": "Kazuma", "is_user": True, "mes": "u1"},
    ]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    result = run(tmp_path, chat=str(tmp_path / "chat.jsonl"))
    assert ("user", "u1") in pairs(result) and result.warnings == []


def test_interval_counts_the_user_messages_of_a_json_chat_file(tmp_path: Path) -> None:
    """A ``.json`` chat file (an array of messages) counts its user messages, as the same
    chat given inline does (it has no ``is_user`` lines of its own)."""
    meta = {"note_prompt": "AN", "note_interval": 3, "note_depth": 0}
    (tmp_path / "chat.json").write_text(json.dumps(CHAT))  # three user messages
    for chat in (CHAT, str(tmp_path / "chat.json")):
        assert ("system", "AN") in pairs(run(tmp_path, meta, chat=chat))


def test_a_replayed_turn_counts_the_user_lines_up_to_it(tmp_path: Path) -> None:
    """``apc bench`` replays a ``.jsonl`` chat turn by turn: each turn's interval counts
    the user lines up to that turn (hidden ones too), not the whole file's."""
    lines: list[dict[str, Any]] = [{"user_name": "Kazuma", "character_name": "Aqua"}]
    lines += [{"name": "Kazuma", "is_user": True, "mes": "hidden", "is_system": True}]
    for i in range(4):
        lines += [
            {"name": "Kazuma", "is_user": True, "mes": f"u{i}"},
            {"name": "Aqua", "is_user": False, "mes": f"a{i}"},
        ]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    meta = {"note_prompt": "AN", "note_interval": 3, "note_depth": 0}
    ctx = compiler.load_context({"chat": "chat.jsonl", "chatMetadata": meta}, base_dir=tmp_path)
    assert ctx.user_messages == 5
    turns = [ctx.model_copy(update={"chat": ctx.messages[:k]}) for k in (1, 3, 5, 8)]
    assert [t.user_messages for t in turns] == [2, 3, 4, 5]
    preset = write_preset(tmp_path)
    noted = [("system", "AN") in pairs(compiler.compile(preset, context=t)) for t in turns]
    assert noted == [False, True, False, False]


@pytest.mark.parametrize("position", [0, 1])
def test_a_note_never_assembles_an_agent_macro(tmp_path: Path, position: int) -> None:
    """The note's own ``<<agent.`` text is its author's (sent as written); one that
    SillyTavern's macros assemble is refused, beside main and in chat alike."""
    meta = {"note_prompt": "<<agent.plan>> as written", "note_position": position}
    assert any(
        "<<agent.plan>> as written" in c for _, c in pairs(run(tmp_path, meta, mode="agent"))
    )
    meta["note_prompt"] = "<{{noop}}<agent.plan>>"
    with pytest.raises(compiler.PolicyError) as caught:
        run(tmp_path, meta, mode="agent")
    assert caught.value.code == "agent.prompt_marker_unmaterialized"


def test_a_template_compile_has_no_authors_note(tmp_path: Path) -> None:
    """Without a preset there is no Author's Note: entries at 2/3 stay reported."""
    world = [{"content": "AN top", "position": 2}, {"content": "B", "position": 0}]
    result = compiler.compile_string(
        "<<agent.world.activated position=before>>",
        context={"worldInfo": world, "chatMetadata": {"note_prompt": "AN"}},
    )
    assert [w.code for w in result.warnings] == ["world.position_unsupported"]
    assert "preset" in result.warnings[0].message


WI_IDS = ["main", "worldInfoBefore", "personaDescription", "chatHistory", "jailbreak"]
LORE = {"entries": {"0": {"uid": 0, "key": ["lighthouse"], "content": "LORE: the lamp."}}}


def lore_run(tmp_path: Path, **ctx: Any) -> str:
    preset = write_preset(tmp_path, ids=WI_IDS)
    result = run(tmp_path, preset=preset, lorebooks={"global": LORE}, **ctx)
    return json.dumps(result.request["messages"])


def test_the_persona_at_depth_is_scanned_for_world_info(tmp_path: Path) -> None:
    persona = {"name": "Kazuma", "description": "Keeps the lighthouse.", "position": 4}
    assert "LORE: the lamp." in lore_run(tmp_path, persona=persona)
    persona["position"] = 0  # in the prompt: not an extension prompt, not scanned
    assert "LORE: the lamp." not in lore_run(tmp_path, persona=persona)


@pytest.mark.parametrize("allow", [False, True])
def test_notes_are_scanned_only_with_allow_wi_scan(tmp_path: Path, allow: bool) -> None:
    settings = {"allowWIScan": allow}
    by_note = lore_run(
        tmp_path, chatMetadata={"note_prompt": "Mind the lighthouse."}, noteSettings=settings
    )
    assert ("LORE: the lamp." in by_note) is allow
    card = {**CARD, "extensions": {"depth_prompt": {"prompt": "The {{char}} lighthouse."}}}
    by_card = lore_run(tmp_path, character=card, noteSettings=settings)
    assert ("LORE: the lamp." in by_card) is allow
    skipped = {"note_prompt": "Mind the lighthouse.", "note_interval": 2}  # 3 user messages
    assert "LORE: the lamp." not in lore_run(tmp_path, chatMetadata=skipped, noteSettings=settings)
