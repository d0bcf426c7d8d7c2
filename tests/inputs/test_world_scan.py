"""The world info scan, rule by rule, as SillyTavern 1.12.6's checkWorldInfo (issue 12, item 6)."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.inputs.lorebook import WorldEntry, parse_decorators, read_lorebook
from compiler.st.world.scan import (
    Character,
    ScanResult,
    ScanSettings,
    probability_roll,
    scan,
)

PLAIN = ScanSettings(depth=2, match_whole_words=True, recursive=True)


def lore(*entries: dict[str, Any], world: str = "w") -> list[WorldEntry]:
    """Entries of one world file (uids 0..n-1, comment = uid), named ``world``."""
    raw = {str(i): {"uid": i, "comment": str(i), **e} for i, e in enumerate(entries)}
    book = read_lorebook({"entries": raw})
    return [e.model_copy(update={"world": world}) for e in book.entries]


def run(
    entries: list[WorldEntry], chat: list[str], settings: ScanSettings = PLAIN, **kw: Any
) -> ScanResult:
    return scan(entries, chat, settings, **kw)


def uids(result: ScanResult) -> list[Any]:
    return sorted(e.uid for e in result.entries)


# --- probability -------------------------------------------------------------------------


def test_probability_is_rolled_only_with_use_probability_and_below_100() -> None:
    entries = lore(
        {"constant": True, "probability": 0, "useProbability": False},
        {"constant": True, "probability": 100, "useProbability": True},
        {"constant": True, "probability": 0, "useProbability": True},
    )
    assert uids(run(entries, ["x"])) == [0, 1]


def test_probability_rolls_are_seeded_and_reproducible() -> None:
    entries = lore(*({"constant": True, "probability": 50, "useProbability": True},) * 40)
    first = uids(run(entries, ["x"], seed=7))
    assert first == uids(run(entries, ["x"], seed=7))
    assert 5 < len(first) < 35  # about half pass
    assert first != uids(run(entries, ["x"], seed=8))
    # the roll is documented: seed, world, uid, number of scanned messages
    expect = [e.uid for e in entries if probability_roll(7, e, 1) <= 50]
    assert first == expect


def test_a_longer_chat_rolls_again() -> None:
    entries = lore(*({"constant": True, "probability": 50, "useProbability": True},) * 40)
    assert uids(run(entries, ["x"], seed=7)) != uids(run(entries, ["x", "y"], seed=7))


# --- inclusion groups --------------------------------------------------------------------


def test_group_override_wins_by_highest_order() -> None:
    entries = lore(
        {"constant": True, "group": "g", "order": 5},
        {"constant": True, "group": "g", "groupOverride": True, "order": 1},
        {"constant": True, "group": "g", "groupOverride": True, "order": 3},
        {"constant": True, "group": "other"},
    )
    assert uids(run(entries, ["x"])) == [2, 3]


def test_group_weighted_roll_picks_one_seeded() -> None:
    entries = lore(
        {"constant": True, "group": "g", "groupWeight": 1},
        {"constant": True, "group": "g", "groupWeight": 1000},
    )
    picks = [uids(run(entries, ["x"], seed=s)) for s in range(20)]
    assert all(len(p) == 1 for p in picks)
    assert sum(p == [1] for p in picks) >= 18
    assert picks == [uids(run(entries, ["x"], seed=s)) for s in range(20)]


def test_group_may_be_a_comma_list() -> None:
    entries = lore(
        {"constant": True, "group": "a, b", "groupOverride": True},
        {"constant": True, "group": "a"},
        {"constant": True, "group": "b"},
    )
    assert uids(run(entries, ["x"], ScanSettings(recursive=False))) == [0]
    # SillyTavern's quirk, kept: "already activated" compares the whole group text, so a
    # recursion pass finds the losers again and groups "a" and "b" let them in
    assert uids(run(entries, ["x"])) == [0, 1, 2]


def test_group_scoring_keeps_the_best_match() -> None:
    entries = lore(
        {"key": ["dragon"], "group": "g"},
        {"key": ["dragon", "fire"], "group": "g", "groupOverride": False},
    )
    scored = ScanSettings(depth=2, use_group_scoring=True)
    assert uids(run(entries, ["a dragon breathes fire"], scored)) == [1]
    per_entry = lore(
        {"key": ["dragon"], "group": "g", "useGroupScoring": True},
        {"key": ["dragon", "fire"], "group": "g", "useGroupScoring": True},
    )
    assert uids(run(per_entry, ["a dragon breathes fire"])) == [1]


def test_a_group_already_activated_drops_new_members() -> None:
    entries = lore(
        {"key": ["castle"], "content": "a moat", "group": "g"},
        {"key": ["moat"], "group": "g"},
    )
    assert uids(run(entries, ["the castle"])) == [0]


def test_sticky_group_members_win() -> None:
    entries = lore(
        {"constant": True, "group": "g", "groupOverride": True},
        {"key": ["x"], "group": "g", "sticky": 3},
    )
    state = {"sticky": {"w.1": {"hash": 0, "start": 1, "end": 4, "protected": False}}}
    assert uids(run(entries, ["a", "b"], state=state)) == [1]


# --- timed effects -----------------------------------------------------------------------


def test_sticky_starts_and_keeps_an_entry_without_its_keys() -> None:
    entries = lore({"key": ["dragon"], "sticky": 2})
    first = run(entries, ["a dragon"])
    assert uids(first) == [0]
    effect = first.state["sticky"]["w.0"]
    assert (effect["start"], effect["end"], effect["protected"]) == (1, 3, False)
    # two messages later the key is out of the scan depth, the entry stays (sticky)
    second = run(entries, ["a dragon", "b", "c"][:2], state=first.state)
    assert uids(second) == [0]
    # at the end of the span it ends
    third = run(entries, ["a dragon", "b", "c"], ScanSettings(depth=1), state=second.state)
    assert uids(third) == [] and third.state["sticky"] == {}


def test_cooldown_blocks_and_follows_sticky() -> None:
    entries = lore({"key": ["dragon"], "cooldown": 2})
    first = run(entries, ["dragon"])
    assert uids(first) == [0] and "w.0" in first.state["cooldown"]
    assert uids(run(entries, ["dragon", "dragon"], state=first.state)) == []
    assert uids(run(entries, ["dragon"] * 3, state=first.state)) == [0]  # ended
    both = lore({"key": ["dragon"], "sticky": 1, "cooldown": 2})
    state = run(both, ["dragon"]).state
    after = run(both, ["dragon", "dragon"], state=state)  # sticky ends: cooldown at once
    assert uids(after) == [] and after.state["cooldown"]["w.0"]["protected"] is True


def test_delay_waits_for_enough_messages() -> None:
    entries = lore({"constant": True, "delay": 3})
    assert uids(run(entries, ["a", "b"])) == []
    assert uids(run(entries, ["a", "b", "c"])) == [0]


def test_a_regenerated_turn_drops_unprotected_effects() -> None:
    entries = lore({"key": ["dragon"], "sticky": 5})
    state = run(entries, ["dragon", "x"]).state
    again = run(entries, ["no", "x"], state=state)  # same length: the chat did not advance
    assert uids(again) == [] and again.state["sticky"] == {}


def test_bad_state_values_are_dropped() -> None:
    entries = lore({"key": ["dragon"], "sticky": 2})
    state: dict[str, Any] = {"sticky": {"w.0": 5, "x": None}, "cooldown": []}
    result = run(entries, ["x"], state=state)
    assert result.state == {"sticky": {}, "cooldown": {}}


# --- recursion ---------------------------------------------------------------------------


def test_delay_until_recursion_levels_run_in_order() -> None:
    entries = lore(
        {"key": ["castle"], "content": "moat"},
        {"key": ["moat"], "content": "eels", "delayUntilRecursion": 2},
        {"key": ["moat"], "content": "fish", "delayUntilRecursion": 1},
        {"key": ["castle"], "delayUntilRecursion": True},
    )
    assert uids(run(entries, ["castle"])) == [0, 1, 2, 3]
    no_recursion = ScanSettings(depth=2, recursive=False)
    # delayed levels still run as recursion passes (SillyTavern), with the new text
    assert uids(run(entries, ["castle"], no_recursion)) == [0, 1, 2, 3]


def test_exclude_and_prevent_recursion() -> None:
    entries = lore(
        {"key": ["castle"], "content": "moat eels"},
        {"key": ["moat"], "excludeRecursion": True},
        {"key": ["eels"], "content": "castle", "preventRecursion": True},
        {"key": ["castle"], "constant": False, "order": 1},
    )
    assert uids(run(entries, ["castle"])) == [0, 2, 3]


def test_max_recursion_steps_and_min_activations() -> None:
    entries = lore(
        {"key": ["alpha"], "content": "beta"},
        {"key": ["beta"], "content": "gamma"},
        {"key": ["gamma"]},
    )
    capped = ScanSettings(depth=2, max_recursion_steps=2)
    assert uids(run(entries, ["alpha"], capped)) == [0, 1]
    deep = lore({"key": ["old"]}, {"key": ["older"]})
    chat = ["older", "old", "x", "y", "z"]
    assert uids(run(deep, chat)) == []
    wanted = ScanSettings(depth=2, min_activations=1)
    assert uids(run(deep, chat, wanted)) == [0]  # depth 4 reaches 'old' (whole words)
    both = ScanSettings(depth=2, min_activations=2)
    assert uids(run(deep, chat, both)) == [0, 1]
    capped_depth = ScanSettings(depth=2, min_activations=2, min_activations_depth_max=2)
    assert uids(run(deep, chat, capped_depth)) == []


# --- per-entry overrides, filters, decorators --------------------------------------------


def test_scan_depth_case_and_whole_word_overrides() -> None:
    entries = lore(
        {"key": ["old"], "scanDepth": 3},
        {"key": ["Rome"], "caseSensitive": True},
        {"key": ["cat"], "matchWholeWords": False},
        {"key": ["dog"], "scanDepth": 0, "constant": False},
    )
    assert uids(run(entries, ["old", "dog", "x"])) == [0]
    assert uids(run(entries, ["rome concatenate", "Rome"])) == [1, 2]


def test_whole_words_treat_non_ascii_letters_as_boundaries() -> None:
    entries = lore({"key": ["кот"]}, {"key": ["cat"]})
    assert uids(run(entries, ["коты", "écat"])) == [0, 1]  # JavaScript's ASCII \W
    assert uids(run(entries, ["cats"])) == []


def test_disabled_entries_never_activate() -> None:
    assert uids(run(lore({"constant": True, "disable": True}), ["x"])) == []


def test_character_filter_names_and_tags() -> None:
    entries = lore(
        {"constant": True, "characterFilter": {"names": ["Seraphina"]}},
        {"constant": True, "characterFilter": {"names": ["Seraphina"], "isExclude": True}},
        {"constant": True, "characterFilter": {"tags": ["fantasy"]}},
        {"constant": True, "characterFilter": {"tags": ["fantasy"], "isExclude": True}},
    )
    sera = Character("Seraphina", ("fantasy",))
    assert uids(run(entries, ["x"], character=sera)) == [0, 2]
    other = Character("Aqua", ())
    assert uids(run(entries, ["x"], character=other)) == [1, 3]
    assert uids(run(entries, ["x"])) == [1, 2, 3]  # no character: tags are not checked


def test_decorators_are_cut_and_applied() -> None:
    assert parse_decorators("@@activate\nText") == (["@@activate"], "Text")
    assert parse_decorators("@@@@activate\nText") == ([], "Text")
    assert parse_decorators("@@unknown\nText") == ([], "Text")
    assert parse_decorators("plain @@activate") == ([], "plain @@activate")
    entries = lore(
        {"key": ["never"], "content": "@@activate\nalways"},
        {"constant": True, "content": "@@dont_activate\nnever"},
    )
    result = run(entries, ["x"])
    assert [e.content for e in result.entries] == ["always"]


def test_prompt_order_is_ascending_order_ties_in_reverse_activation() -> None:
    entries = lore(
        {"constant": True, "order": 5},
        {"constant": True, "order": 1},
        {"constant": True, "order": 5},
    )
    assert [e.uid for e in run(entries, ["x"]).entries] == [1, 2, 0]


@pytest.mark.parametrize("depth", [-1])
def test_negative_depth_is_refused(depth: int) -> None:
    with pytest.raises(ValueError):
        run(lore({"constant": True}), ["x"], ScanSettings(depth=depth))


# --- hostile books -----------------------------------------------------------------------


def test_a_chain_of_entries_is_bounded_in_work_and_says_so() -> None:
    from compiler.st.world.scan import MAX_ENTRY_CHECKS

    n = 3000
    chain = lore(*({"key": [f"k{i}"], "content": f"k{i + 1}"} for i in range(n)))
    result = run(chain, ["k0"])
    assert 0 < len(result.entries) < n
    assert [w.code for w in result.warnings] == ["world.scan_budget"]
    assert f"{MAX_ENTRY_CHECKS:,}" in result.warnings[0].message
    short = run(chain[:50], ["k0"])
    assert len(short.entries) == 50 and short.warnings == []


class Recorded(list[str]):
    """A chat that records which messages the scan reads."""

    def __init__(self, items: list[str]) -> None:
        super().__init__(items)
        self.read: set[int] = set()

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int):
            self.read.add(index % len(self))
        return super().__getitem__(index)


def test_a_scan_reads_only_the_messages_its_depth_reaches() -> None:
    """A long chat scanned at depth 2 has its 2 newest messages read (a runtime's chat is
    made into scan text as the scan reads it), and an entry's own deeper scanDepth reads as
    deep as it goes; what matches is what a scan of every message finds."""
    chat = Recorded([f"message {i}" for i in range(5000)])
    entries = lore({"key": ["message 4999"]}, {"key": ["message 4990"], "scanDepth": 10})
    result = run(entries, chat)
    assert uids(result) == [0, 1]
    assert chat.read == set(range(4990, 5000))
    assert uids(run(entries, list(chat))) == [0, 1]
    shallow = Recorded(list(chat))
    assert uids(run(lore({"key": ["message 4990"]}), shallow)) == []
    assert shallow.read == {4998, 4999}
