"""World info: reading both lorebook forms, and SillyTavern's activation rules (our subset)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.errors import ContextError
from compiler.inputs.cards import read_card
from compiler.inputs.lorebook import Lorebook, SelectiveLogic, read_lorebook
from compiler.st.macros import card_values, substitute
from compiler.st.world.scan import activate

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
ELDORIA = CORPUS / "worlds" / "Eldoria.json"
needs_corpus = pytest.mark.skipif(
    not ELDORIA.is_file(), reason="../shared/corpus is absent (Eldoria.json not available)"
)


def book(*entries: dict[str, Any]) -> Lorebook:
    """A world file with the given entries, uids 0..n-1."""
    return read_lorebook({"entries": {str(i): {"uid": i, **e} for i, e in enumerate(entries)}})


def uids(
    lore: Lorebook,
    messages: list[str],
    depth: int = 4,
    *,
    macros: dict[str, str] | None = None,
    **kw: Any,
) -> list[Any]:
    """The uids ``activate`` returns; ``macros`` fill SillyTavern macros in the keys (the
    ``rewrite_key`` a caller passes)."""
    if macros is not None:
        kw["rewrite_key"] = lambda key: substitute(key, macros)
    return [e.uid for e in activate(lore, messages, depth, **kw)]


@needs_corpus
def test_eldoria_reads_entries_in_uid_order() -> None:
    lore = read_lorebook(ELDORIA)
    assert [e.uid for e in lore.entries] == [0, 1, 2, 3]
    first = lore.entries[0]
    assert first.keys == ["eldoria", "wood", "forest", "magical forest"]
    assert first.position == "before" and first.position_raw == 0
    assert first.selective and first.selective_logic is SelectiveLogic.AND_ANY
    assert first.role is None and first.order == 100 and not first.disabled
    assert "displayIndex" in first.extra


@needs_corpus
def test_eldoria_activation_scans_only_recent_messages() -> None:
    lore = read_lorebook(ELDORIA)
    chat = ["Tell me of the MAGIC here.", "ok", "ok", "Is this a forest?", "What are Shadowfangs?"]
    # 'magic' is five messages back: outside scan depth 4, inside depth 5.
    assert uids(lore, chat) == [1, 0]
    assert uids(lore, chat, 5) == [3, 1, 0]
    assert uids(lore, chat, 0) == []


def test_constant_disabled_and_keyless() -> None:
    lore = book(
        {"constant": True, "content": "always"},
        {"key": ["dragon"], "disable": True},
        {"key": [], "content": "never"},
        {"key": ["dragon"], "constant": True, "disable": True},
    )
    assert uids(lore, ["a dragon!"]) == [0]


def test_sorted_by_order_ascending_ties_in_reverse_book_order() -> None:
    lore = book(
        {"key": ["x"], "order": 50},
        {"key": ["x"], "order": 10},
        {"key": ["x"], "order": 50},
        {"key": ["x"], "order": 200},
    )
    assert uids(lore, ["x"]) == [1, 2, 0, 3]


@pytest.mark.parametrize(
    ("logic", "text", "expected"),
    [
        (SelectiveLogic.AND_ANY, "king and crown", True),
        (SelectiveLogic.AND_ANY, "king alone", False),
        (SelectiveLogic.NOT_ALL, "king crown throne", False),
        (SelectiveLogic.NOT_ALL, "king crown", True),
        (SelectiveLogic.NOT_ANY, "king crown", False),
        (SelectiveLogic.NOT_ANY, "king alone", True),
        (SelectiveLogic.AND_ALL, "king crown throne", True),
        (SelectiveLogic.AND_ALL, "king crown", False),
    ],
)
def test_selective_logic(logic: SelectiveLogic, text: str, expected: bool) -> None:
    lore = book(
        {
            "key": ["king"],
            "keysecondary": ["crown", "throne"],
            "selective": True,
            "selectiveLogic": int(logic),
        }
    )
    assert uids(lore, [text]) == ([0] if expected else [])


def test_non_selective_entry_ignores_secondary_keys() -> None:
    lore = book({"key": ["king"], "keysecondary": ["crown"], "selective": False})
    assert uids(lore, ["the king"]) == [0]


def test_case_sensitivity_whole_words_and_regex_keys() -> None:
    lore = book(
        {"key": ["Rome"], "caseSensitive": True},
        {"key": ["cat"], "matchWholeWords": True},
        {"key": ["/dra(gon|ke)s?/i"]},
        {"key": ["/Upper/"]},
        {"key": ["/unterminated(/"]},
    )
    assert uids(lore, ["rome has a drake"]) == [2]
    assert uids(lore, ["Rome. concatenate"]) == [0]
    assert uids(lore, ["my cat."]) == [1]
    # As in SillyTavern 1.12.6 (matchKeys), a regex key sees the text as it is.
    assert uids(lore, ["Upper"]) == [3]
    assert uids(lore, ["upper"]) == []
    assert uids(lore, ["an /unterminated(/ key"]) == [4]


def test_entry_scan_depth_and_macros_in_keys() -> None:
    lore = book({"key": ["old"], "scanDepth": 3}, {"key": ["{{char}}"]})
    assert uids(lore, ["old", "b", "c"], 1) == [0]
    assert uids(lore, ["Seraphina smiles"], macros={"char": "Seraphina"}) == [1]
    assert uids(lore, ["{{char}} smiles"]) == [1]  # no macros given: the key is literal


def test_recursion() -> None:
    lore = book(
        {"key": ["castle"], "content": "The castle has a moat.", "order": 1},
        {"key": ["moat"], "content": "Eels live in the moat.", "order": 2},
        {"key": ["eels"], "content": "x", "excludeRecursion": True, "order": 3},
        {"key": ["moat"], "content": "delayed", "delayUntilRecursion": True, "order": 4},
    )
    assert uids(lore, ["the castle"]) == [0]
    assert uids(lore, ["the castle"], recursive=True) == [0, 1, 3]


def test_character_book_form() -> None:
    lore = read_lorebook(
        {
            "name": "B",
            "scan_depth": 3,
            "entries": [
                {
                    "keys": ["a"],
                    "content": "A",
                    "insertion_order": 5,
                    "enabled": True,
                    "position": "after_char",
                    "secondary_keys": [],
                },
                {"keys": ["b"], "content": "B", "enabled": False, "position": "before_char"},
                {
                    "id": 9,
                    "keys": ["c"],
                    "content": "C",
                    "position": "before_char",
                    "extensions": {"position": 4, "depth": 2, "role": 1, "selectiveLogic": 3},
                },
            ],
        }
    )
    a, b, c = lore.entries
    assert (lore.name, lore.scan_depth) == ("B", 3)
    assert (a.uid, a.order, a.position, a.position_raw) == (0, 5, "after", 1)
    assert b.disabled
    assert (c.uid, c.position, c.position_raw, c.depth, c.role) == (9, "at_depth", 4, 2, "user")
    assert c.selective_logic is SelectiveLogic.AND_ALL
    assert c.extra["extensions"]["depth"] == 2
    # SillyTavern's convertCharacterBook: useProbability on, role system, no position = after
    assert a.use_probability and a.role == "system"


def test_unknown_position_is_other_with_raw_kept() -> None:
    (entry,) = book({"key": ["x"], "position": 42}).entries
    assert (entry.position, entry.position_raw) == ("other", 42)


def test_world_file_keys_in_javascript_order() -> None:
    lore = read_lorebook({"entries": {"10": {"uid": 10}, "b": {}, "2": {"uid": 2}, "01": {}}})
    assert [e.uid for e in lore.entries] == [2, 10, "b", "01"]


def test_entry_round_trips_through_camel_case_wire_format() -> None:
    (entry,) = book({"key": ["x"], "keysecondary": ["y"], "selectiveLogic": 2}).entries
    wire = entry.model_dump(by_alias=True, mode="json")
    assert wire["secondaryKeys"] == ["y"] and wire["selectiveLogic"] == 2
    assert type(entry).model_validate(wire) == entry


def test_missing_entries(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"name": "w"}), "utf-8")
    with pytest.raises(ContextError) as info:
        read_lorebook(path)
    assert (info.value.code, info.value.file) == ("context.invalid_world", str(path))


def test_bad_entry_field_names_its_path() -> None:
    with pytest.raises(ContextError) as info:
        read_lorebook({"entries": {"0": {"key": ["a"]}, "3": {"key": "a"}}}, origin="RUN.json")
    assert (info.value.code, info.value.path) == ("context.invalid_world", "entries.3.key")
    assert info.value.file == "RUN.json"


def test_broken_world_json(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{"entries": {,}}', "utf-8")
    with pytest.raises(ContextError) as info:
        read_lorebook(path)
    assert info.value.code == "context.invalid_json" and "line 1, column 14" in info.value.message


def test_union_field_error_path_stops_at_the_input() -> None:
    with pytest.raises(ContextError) as info:
        read_lorebook({"entries": {"0": {"uid": [1]}}})
    assert info.value.path == "entries.0.uid"
    assert "world entry field 'uid'" in info.value.message


def test_prevent_recursion_keeps_content_out_of_the_scan() -> None:
    lore = book(
        {"key": ["castle"], "content": "a moat", "preventRecursion": True, "order": 1},
        {"key": ["moat"], "content": "eels", "order": 2},
    )
    assert uids(lore, ["the castle"], recursive=True) == [0]


@needs_corpus
def test_seraphina_greeting_activates_her_own_book() -> None:
    card = read_card(CORPUS / "cards" / "Seraphina-v2v3.png")
    assert card.character_book is not None
    active = activate(card.character_book, [card.first_mes])
    # forest (0), beasts (1), magic (3); no glade/refuge/safe haven (2) in the greeting.
    assert [e.uid for e in active] == [3, 1, 0]
    text = substitute(active[-1].content, card_values(card, user="Alice"))
    assert text.startswith('Alice: "What is Eldoria?"\nSeraphina: *Seraphina turns')
