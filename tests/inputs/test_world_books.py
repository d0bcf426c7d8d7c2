"""Several lorebooks (issue 12, item 8): global, the character's, the chat's and the
persona's, merged by the character strategy, each loaded once; a card's embedded
character_book is the character's lorebook; a card is not a lorebook."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from compiler.errors import CODES, ContextError
from compiler.inputs.lorebooks import MAX_LOREBOOKS
from compiler.inputs.run import load_context
from compiler.st.world.run import activated_world

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
ELDORIA = CORPUS / "worlds" / "Eldoria.json"
SERAPHINA = CORPUS / "cards" / "Seraphina-v2v3.png"
needs_corpus = pytest.mark.skipif(
    not (ELDORIA.is_file() and SERAPHINA.is_file()),
    reason="../shared/corpus is absent (Eldoria.json / Seraphina-v2v3.png not available)",
)


def write_book(tmp_path: Path, name: str, *entries: dict[str, Any]) -> str:
    raw = {str(i): {"uid": i, **e} for i, e in enumerate(entries)}
    (tmp_path / f"{name}.json").write_text(json.dumps({"entries": raw}), "utf-8")
    return f"{name}.json"


def contents(tmp_path: Path, run: dict[str, Any], chat: list[str] | None = None) -> list[str]:
    ctx = load_context(run, tmp_path)
    return [str(e["content"]) for e in activated_world(ctx, chat or ["x"], [])]


def card(name: str = "Mira", book: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "description": "d", "first_mes": "hello"}
    if book is not None:
        data["character_book"] = book
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}


def test_strategies_order_global_and_character_entries(tmp_path: Path) -> None:
    from compiler.st.world.run import scan_run

    glob = write_book(tmp_path, "G", {"constant": True, "content": "G7", "order": 7})
    char = write_book(
        tmp_path,
        "C",
        {"constant": True, "content": "C9", "order": 9},
        {"constant": True, "content": "C1", "order": 1},
    )
    run: dict[str, Any] = {"lorebooks": {"global": [glob], "character": char}}
    # the prompt is in ascending order whatever the strategy ...
    assert contents(tmp_path, run) == ["C1", "G7", "C9"]
    # ... the strategy decides the candidate order, seen when the budget stops the scan
    # (25 % of 52 = 13 characters: two entries of 3, and the 6 SillyTavern adds)
    for strategy, kept in ((0, ["G7", "C9"]), (1, ["C1", "C9"]), (2, ["G7", "C9"])):
        run["worldInfoSettings"] = {"world_info_character_strategy": strategy}
        got = scan_run(load_context(run, tmp_path), ["x"], count=len, max_context=52)
        assert [e["content"] for e in got.entries] == kept, strategy
    run["worldInfoSettings"] = {"world_info_character_strategy": 2}
    glob2 = write_book(tmp_path, "G2", {"constant": True, "content": "G3", "order": 3})
    run["lorebooks"]["global"] = [glob, glob2]
    got = scan_run(load_context(run, tmp_path), ["x"], count=len, max_context=52)
    assert [e["content"] for e in got.entries] == ["G3", "G7"]  # global first: G7, G3


def test_candidate_order_chat_then_persona_then_strategy(tmp_path: Path) -> None:
    from compiler.inputs.lorebooks import sorted_entries

    books = {
        kind: write_book(tmp_path, kind, {"constant": True, "content": kind, "order": 1})
        for kind in ("global", "character", "chat", "persona")
    }
    ctx = load_context({"lorebooks": {k: [v] for k, v in books.items()}}, tmp_path)
    order = [e.content for e in sorted_entries(ctx.lorebooks_loaded, 1)]
    assert order == ["chat", "persona", "character", "global"]
    assert [e.content for e in sorted_entries(ctx.lorebooks_loaded, 2)][2:] == [
        "global",
        "character",
    ]


def test_world_info_path_is_a_global_book_and_duplicates_load_once(tmp_path: Path) -> None:
    path = write_book(tmp_path, "W", {"constant": True, "content": "once"})
    shutil.copy(tmp_path / path, tmp_path / "copy.json")
    run = {
        "worldInfo": path,
        "lorebooks": {"chat": [path], "character": ["./W.json", "copy.json"], "persona": path},
    }
    ctx = load_context(run, tmp_path)
    assert [(b.kind, b.name) for b in ctx.lorebooks_loaded] == [("global", "W")]
    assert contents(tmp_path, run) == ["once"]


def test_inline_lorebooks_are_accepted(tmp_path: Path) -> None:
    inline = {"name": "Inline", "entries": {"0": {"uid": 0, "constant": True, "content": "in"}}}
    assert contents(tmp_path, {"lorebooks": {"chat": inline}}) == ["in"]
    with pytest.raises(ContextError) as info:
        load_context({"lorebooks": {"global": [{"entries": {"0": {"key": "x"}}}]}}, tmp_path)
    assert (info.value.code, info.value.path) == (
        "context.invalid_world",
        "lorebooks.global[0].entries.0.key",
    )


def test_embedded_character_book_is_the_characters_lorebook(tmp_path: Path) -> None:
    book = {"name": "Mira's book", "entries": [{"keys": ["x"], "content": "EMBEDDED"}]}
    (tmp_path / "mira.json").write_text(json.dumps(card(book=book)), "utf-8")
    assert contents(tmp_path, {"character": "mira.json"}) == ["EMBEDDED"]
    assert contents(tmp_path, {"character": card(book=book)}) == ["EMBEDDED"]
    off = {"character": "mira.json", "useCharacterBook": False}
    assert contents(tmp_path, off) == []
    ctx = load_context({"character": card(name="Mira", book={"entries": []})}, tmp_path)
    assert [b.name for b in ctx.lorebooks_loaded] == ["Mira's Lorebook"]


def test_a_given_world_with_the_embedded_books_name_replaces_it(tmp_path: Path) -> None:
    book = {"name": "Lore", "entries": [{"keys": ["x"], "content": "OLD"}]}
    write_book(tmp_path, "Lore", {"key": ["x"], "content": "EDITED"})
    run = {"character": card(book=book), "lorebooks": {"character": ["Lore.json"]}}
    assert contents(tmp_path, run) == ["EDITED"]


def test_a_card_is_not_a_lorebook(tmp_path: Path) -> None:
    (tmp_path / "card.json").write_text(json.dumps(card()), "utf-8")
    (tmp_path / "card.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    v1 = {"name": "A", "description": "d", "first_mes": "hi", "personality": ""}
    (tmp_path / "v1.json").write_text(json.dumps(v1), "utf-8")
    for run in (
        {"worldInfo": "card.json"},
        {"worldInfo": "card.png"},
        {"lorebooks": {"global": ["v1.json"]}},
        {"lorebooks": {"chat": [card()]}},
    ):
        with pytest.raises(ContextError) as info:
            load_context(run, tmp_path)
        assert info.value.code == "context.lorebook_is_card", run
        assert "not UTF-8" not in info.value.message


def test_books_and_entries_are_bounded(tmp_path: Path) -> None:
    inline = [
        {"name": f"b{i}", "entries": {"0": {"uid": 0, "content": str(i)}}}
        for i in range(MAX_LOREBOOKS + 1)
    ]
    with pytest.raises(ContextError) as info:
        load_context({"lorebooks": {"global": inline}}, tmp_path)
    assert info.value.code == "context.too_many_lorebooks"
    huge = {"entries": {str(i): {"uid": i} for i in range(10_001)}}
    with pytest.raises(ContextError) as info:
        load_context({"lorebooks": {"global": [huge]}}, tmp_path)
    assert info.value.code == "context.invalid_world" and "10000" in info.value.message


def test_unknown_lorebook_kinds_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ContextError):
        load_context({"lorebooks": {"globals": ["x.json"]}}, tmp_path)


@needs_corpus
def test_seraphinas_embedded_book_and_eldoria_load_once() -> None:
    run = {"character": str(SERAPHINA), "worldInfo": str(ELDORIA)}
    ctx = load_context(run, Path.cwd())
    # the embedded book is named "Eldoria", as the world file: SillyTavern loads it once
    assert [(b.kind, b.name) for b in ctx.lorebooks_loaded] == [("global", "Eldoria")]
    alone = load_context({"character": str(SERAPHINA)}, Path.cwd())
    assert [(b.kind, b.name) for b in alone.lorebooks_loaded] == [("character", "Eldoria")]
    greeting = alone.card.first_mes if alone.card else ""
    active = activated_world(alone, [greeting], [])
    # forest (0), beasts (1), magic (3) from the greeting; glade (2) from their content
    # (recursion, SillyTavern's shipped setting)
    assert [e["uid"] for e in active] == [2, 3, 1, 0]
    assert {e["world"] for e in active} == {"Eldoria"}


@needs_corpus
def test_eldoria_file_and_embedded_book_activate_alike() -> None:
    chat = ["Tell me of the shadowfangs", "and the forest glade"]
    from_file = activated_world(load_context({"worldInfo": str(ELDORIA)}, Path.cwd()), chat, [])
    embedded = activated_world(load_context({"character": str(SERAPHINA)}, Path.cwd()), chat, [])
    assert [e["uid"] for e in from_file] == [e["uid"] for e in embedded]
    assert {0, 2} <= {e["uid"] for e in from_file}


@needs_corpus
def test_a_card_png_as_world_info_is_a_clear_error() -> None:
    with pytest.raises(ContextError) as info:
        load_context({"worldInfo": str(SERAPHINA)}, Path.cwd())
    assert info.value.code == "context.lorebook_is_card"


def test_compile_reports_a_card_given_as_a_lorebook_from_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "card.json").write_text(json.dumps(card()), "utf-8")
    (tmp_path / "run.json").write_text(json.dumps({"worldInfo": "card.json"}), "utf-8")
    (tmp_path / "t.apc").write_text("<<agent.world.activated>>", "utf-8")
    from compiler.cli import main

    code = main(["compile", str(tmp_path / "t.apc"), "--context", str(tmp_path / "run.json")])
    assert code != 0
    assert "context.lorebook_is_card" in capsys.readouterr().err
    assert CODES["context.lorebook_is_card"] is ContextError


PRESET = CORPUS / "presets" / "st-default-2024.json"


@needs_corpus
@pytest.mark.skipif(not PRESET.is_file(), reason="the corpus preset is absent")
def test_seraphinas_book_reaches_a_preset_compile_within_its_budget(tmp_path: Path) -> None:
    import compiler

    chat = [
        {"role": "assistant", "content": "Welcome."},
        {"role": "user", "content": "What lurks in this forest? Are there beasts?"},
    ]
    run = {"character": str(SERAPHINA), "persona": {"name": "Alice"}, "chat": chat}
    result = compiler.compile(PRESET, context=run, mode="legacy")
    text = json.dumps(result.request, ensure_ascii=False)
    assert 'Alice: \\"What is Eldoria?\\"' in text  # the forest entry, {{user}} filled
    off = compiler.compile(PRESET, context={**run, "useCharacterBook": False}, mode="legacy")
    assert "What is Eldoria?" not in json.dumps(off.request, ensure_ascii=False)
    # the preset's context (4095 - 300) gives a 949-token world info budget: not all four
    # long entries fit, and the scan stops at the first that does not
    run["worldInfoSettings"] = {"world_info_overflow_alert": True}
    capped = compiler.compile(PRESET, context=run, mode="legacy")
    assert [w.code for w in capped.warnings if w.code.startswith("world.")] == [
        "world.budget_reached"
    ]
    assert "949 tokens" in next(w.message for w in capped.warnings if w.code.startswith("world."))


def test_the_entry_bound_stops_the_reading_at_the_book_past_it(tmp_path: Path) -> None:
    """64 books of 10,000 entries each took 36 s and 1.9 GB before the total was refused:
    the bound is checked as each book is kept, and the books after it are never read."""
    full = [
        {
            "name": f"b{j}",
            "entries": [{"uid": i, "key": ["a"], "content": "c"} for i in range(10_000)],
        }
        for j in range(6)
    ]
    never_read = ["missing.json", {"entries": "not entries"}]
    with pytest.raises(ContextError) as info:
        load_context({"lorebooks": {"global": [*full, *never_read]}}, tmp_path)
    assert info.value.code == "context.too_many_lorebooks"
    assert "50000" in info.value.message
