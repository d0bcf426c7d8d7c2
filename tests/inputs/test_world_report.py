"""The lorebook debugger at the engine: every entry the scan considered gets a reason code
(how it activated, or why not) recorded where the scan decides, with its details."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.inputs.lorebook import WorldEntry, read_lorebook
from compiler.st.world.report import MAX_REPORTED, WorldEntryDecision, WorldInfoReport
from compiler.st.world.scan import Character, ScanSettings, scan

PLAIN = ScanSettings(depth=2, match_whole_words=True, recursive=True)


def lore(*entries: dict[str, Any], world: str = "w") -> list[WorldEntry]:
    raw = {str(i): {"uid": i, "comment": f"e{i}", **e} for i, e in enumerate(entries)}
    book = read_lorebook({"entries": raw})
    return [e.model_copy(update={"world": world}) for e in book.entries]


def report(
    entries: list[WorldEntry], chat: list[str], settings: ScanSettings = PLAIN, **kw: Any
) -> dict[Any, WorldEntryDecision]:
    result = scan(entries, chat, settings, **kw)
    assert result.trace is not None
    made = WorldInfoReport(result.trace, budget=settings.budget)
    assert made.considered == len(entries)
    assert made.activated == len(result.entries)
    return {d.uid: d for d in made.entries}


def test_each_activation_cause_is_recorded() -> None:
    entries = lore(
        {"constant": True},
        {"key": ["dragon"]},
        {"content": "@@activate\nforced"},
        {"key": ["fire"], "keysecondary": ["cave"], "selectiveLogic": 0},
        {"key": ["dragon"], "content": "the word ember lives here"},
        {"key": ["ember"]},
    )
    got = report(entries, ["a dragon", "fire in the cave"])
    assert {uid: d.reason for uid, d in got.items()} == {
        0: "constant",
        1: "key",
        2: "decorator",
        3: "key",
        4: "key",
        5: "key",
    }
    assert all(d.activated for d in got.values())
    assert got[1].detail["key"] == "dragon"
    assert got[1].detail["source"] == {"kind": "message", "index": 0}
    assert got[1].why == "key 'dragon' in chat message #0 (1 before the newest)"
    assert got[3].detail["secondaryKey"] == "cave" and got[3].detail["logic"] == "AND_ANY"
    assert got[3].detail["source"] == {"kind": "message", "index": 1}
    # found in the content entry 4 activated in pass 1
    assert got[5].detail["source"] == {"kind": "recursion", "pass": 1}
    assert got[5].detail["pass"] == 2 and got[5].detail["passKind"] == "recursion"
    assert "recursion text of pass 1" in got[5].why


def test_keys_found_in_injected_prompts_name_them() -> None:
    entries = lore({"key": ["north"]}, {"key": ["lantern"]})
    got = report(
        entries,
        ["hello"],
        injected=["a traveller from the north", "carry a lantern"],
        injected_names=["persona", "authors_note"],
    )
    assert got[0].detail["source"] == {"kind": "persona"}
    assert got[0].why == "key 'north' in the persona description"
    assert got[1].detail["source"] == {"kind": "authors_note"}


def test_a_regex_key_and_the_matched_key_index() -> None:
    entries = lore({"key": ["nothing", "/dra+gon/i"]})
    got = report(entries, ["A DRAAGON!", "quiet"])
    assert got[0].detail["keyIndex"] == 1 and got[0].detail["key"] == "/dra+gon/i"
    assert got[0].detail["source"] == {"kind": "message", "index": 0}


def test_the_checks_before_the_keys() -> None:
    entries = lore(
        {"key": ["x"], "disable": True},
        {"key": ["x"], "characterFilter": {"names": ["Other"], "isExclude": False}},
        {"key": ["x"], "delay": 5},
        {"key": ["x"], "cooldown": 3},
        {"key": ["x"], "content": "@@dont_activate\ntext"},
        {"key": []},
    )
    state = {"cooldown": {"w.3": {"hash": 0, "start": 1, "end": 4, "protected": False}}}
    got = report(entries, ["x", "x"], state=state, character=Character(name="Mira"))
    assert {uid: d.reason for uid, d in got.items()} == {
        0: "disabled",
        1: "character_filter",
        2: "delay",
        3: "cooldown",
        4: "dont_activate",
        5: "no_keys",
    }
    assert not any(d.activated for d in got.values())
    assert got[1].detail == {"names": ["Other"], "tags": [], "isExclude": False}
    assert got[1].why == "character filter is only for Other"
    assert got[2].detail == {"delay": 5, "messages": 2}
    assert got[2].why == "delay: waits for message 5 (the chat has 2)"
    assert got[3].detail == {"until": 4} and got[3].why == "on cooldown until message 4"


def test_no_match_and_secondary_logic() -> None:
    entries = lore(
        {"key": ["dragon"]},
        {"key": ["fire"], "keysecondary": ["ice", "cave"], "selectiveLogic": 3},
        {"key": ["old"], "scanDepth": 1},
    )
    got = report(entries, ["old tale", "fire in the cave"])
    assert got[0].reason == "no_match" and got[0].detail["scanDepth"] == 2
    assert got[0].why == "no key matched within scan depth 2"
    assert got[1].reason == "secondary_failed" and got[1].detail["logic"] == "AND_ALL"
    assert got[2].reason == "no_match" and got[2].detail["scanDepth"] == 1


def test_probability_roll_and_threshold() -> None:
    entries = lore({"constant": True, "useProbability": True, "probability": 0})
    got = report(entries, ["x"], seed=3)[0]
    assert got.reason == "probability" and not got.activated
    assert got.detail["probability"] == 0 and got.detail["roll"] > 0
    assert got.why.startswith("probability roll ") and got.why.endswith(" > 0")


def test_inclusion_groups_name_the_winner() -> None:
    entries = lore(
        {"key": ["x"], "group": "g", "order": 10},
        {"key": ["x"], "group": "g", "order": 50, "groupOverride": True},
        {"key": ["x"], "group": "h"},
        {"key": ["y"], "group": "h"},
        {"key": ["x"], "group": "s", "useGroupScoring": True},
        {"key": ["x", "z"], "group": "s", "useGroupScoring": True},
    )
    got = report(entries, ["x z"], ScanSettings(depth=2, recursive=False))
    assert got[0].reason == "group_lost" and got[1].activated
    assert got[0].detail["how"] == "override"
    assert got[0].detail["winner"] == {"world": "w", "uid": 1, "comment": "e1"}
    assert got[0].why == "inclusion group 'g' lost to 1 (e1) (group override, higher order)"
    assert got[3].reason == "no_match"
    assert got[4].reason == "group_lost" and got[4].detail["how"] == "score"
    assert (got[4].detail["score"], got[4].detail["best"]) == (1, 2)


def test_a_group_already_activated_and_a_weighted_roll() -> None:
    entries = lore(
        {"key": ["x"], "group": "g"},
        {"key": ["y"], "group": "g", "content": "x"},
        {"key": ["a"], "group": "r"},
        {"key": ["a"], "group": "r"},
    )
    got = report(entries, ["y a"])
    assert got[1].activated and got[0].reason == "group_lost"
    assert got[0].detail["how"] == "taken" and got[0].detail["winner"]["uid"] == 1
    lost = [d for d in (got[2], got[3]) if not d.activated]
    assert len(lost) == 1 and lost[0].detail["how"] == "taken"  # the last pass's decision
    once = report(entries, ["y a"], ScanSettings(depth=2, recursive=False))
    lost = [d for d in (once[2], once[3]) if not d.activated]
    assert len(lost) == 1 and lost[0].detail["how"] == "roll"
    assert lost[0].why.endswith("(weighted roll)")


def test_the_budget_says_where_it_stopped() -> None:
    entries = lore(
        {"constant": True, "content": "one two three", "order": 3},
        {"constant": True, "content": "four five six seven eight", "order": 2},
        {"constant": True, "content": "nine", "order": 1},
    )
    count = lambda text: len(text.split())  # noqa: E731
    # each text costs 6 tokens more, as SillyTavern counts world info (a message of its own)
    got = report(entries, ["x"], ScanSettings(budget=12), count=count)
    assert got[0].activated
    assert got[1].reason == "budget" and got[2].reason == "budget"
    assert got[1].detail == {"tokens": 14, "budget": 12}
    assert got[1].why == "world info budget reached (14 of 12 tokens): the scan stopped"


def test_recursion_delayed_and_excluded() -> None:
    entries = lore(
        {"constant": True, "content": "mentions ember"},
        {"key": ["ember"], "excludeRecursion": True},
        {"key": ["ember"], "delayUntilRecursion": 2},
        {"key": ["nowhere"], "delayUntilRecursion": 1},
    )
    settings = ScanSettings(depth=2, recursive=True, max_recursion_steps=2)
    got = report(entries, ["x"], settings)
    assert got[1].reason == "recursion_excluded"
    assert got[2].reason == "recursion_delayed" and got[2].detail == {"level": 2}


def test_sticky_and_min_activations() -> None:
    entries = lore({"key": ["x"], "sticky": 3}, {"key": ["old"]})
    state = {"sticky": {"w.0": {"hash": 0, "start": 1, "end": 9, "protected": False}}}
    settings = ScanSettings(depth=1, recursive=False, min_activations=2)
    got = report(entries, ["old times", "now", "later"], settings, state=state)
    assert got[0].reason == "sticky"
    assert got[1].reason == "min_activations"
    assert got[1].detail["scanDepth"] == 3 and got[1].detail["passKind"] == "min_activations"
    assert "min activations pass, depth 3" in got[1].why


def test_reports_are_deterministic() -> None:
    entries = lore(*({"key": ["x"], "useProbability": True, "probability": 50} for _ in range(20)))
    one = scan(entries, ["x"], PLAIN, seed=9).trace
    two = scan(entries, ["x"], PLAIN, seed=9).trace
    assert one is not None and two is not None
    assert WorldInfoReport(one).as_json() == WorldInfoReport(two).as_json()


def test_a_huge_lorebook_is_listed_up_to_the_bound() -> None:
    entries = lore(
        *({"key": [f"k{i}"]} for i in range(MAX_REPORTED + 200)),
        {"key": ["x"], "disable": True},
        {"key": ["hit"]},
    )
    result = scan(entries, ["hit"], PLAIN)
    assert result.trace is not None
    made = WorldInfoReport(result.trace)
    assert made.considered == MAX_REPORTED + 202
    assert len(made.entries) == MAX_REPORTED
    assert made.entries[-1].uid == MAX_REPORTED + 201 and made.entries[-1].activated
    assert made.omitted == {"disabled": 1, "no_match": 201}
    assert made.reasons() == {"disabled": 1, "key": 1, "no_match": MAX_REPORTED + 200}
    assert "(not listed: disabled 1, no_match 201)" in made.table()


@pytest.mark.parametrize("logic", [0, 1, 2, 3])
def test_secondary_logic_outcomes_match_the_activation(logic: int) -> None:
    entries = lore({"key": ["a"], "keysecondary": ["b", "c"], "selectiveLogic": logic})
    for chat in (["a"], ["a b"], ["a b c"]):
        result = scan(entries, chat, PLAIN)
        assert result.trace is not None
        code = result.trace.why[id(entries[0])]
        assert (code == "key") == bool(result.entries)
        assert code in ("key", "secondary_failed")
