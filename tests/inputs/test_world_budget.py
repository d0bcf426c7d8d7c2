"""The world info budget as SillyTavern applies it (issue 12, item 7): a share of the context,
capped; candidates in SillyTavern's order; the whole scan stops at the first entry that does
not fit, never dropping the whole block."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler._base.tokens import counter_for
from compiler.inputs.lorebook import WorldEntry, read_lorebook
from compiler.st.world.scan import FRAMING, ScanSettings, scan, world_budget


def lore(*entries: dict[str, Any]) -> list[WorldEntry]:
    raw = {str(i): {"uid": i, **e} for i, e in enumerate(entries)}
    return [e.model_copy(update={"world": "w"}) for e in read_lorebook({"entries": raw}).entries]


def chars(text: str) -> int:
    return len(text)


def test_budget_is_a_rounded_share_with_a_floor_of_one_and_a_cap() -> None:
    assert world_budget(25, 0, 3795) == 949  # 948.75 rounds up
    assert world_budget(25, 0, 2) == 1  # 0.5 rounds half up (Math.round)
    assert world_budget(1, 0, 10) == 1  # round(0.1) = 0 -> 1 (`|| 1`)
    assert world_budget(25, 500, 3795) == 500
    assert world_budget(25, 5000, 3795) == 949  # a cap above the share changes nothing
    assert world_budget(25, 0, None) is None and world_budget(25, 300, None) == 300


def test_the_scan_stops_at_the_first_entry_that_does_not_fit() -> None:
    entries = lore(
        {"constant": True, "content": "a" * 9, "order": 300},  # 10 with its \n
        {"constant": True, "content": "b" * 30, "order": 200},  # does not fit
        {"constant": True, "content": "c", "order": 100},  # would fit, not tried
    )
    result = scan(entries, ["x"], ScanSettings(budget=25), count=chars)
    assert [e.uid for e in result.entries] == [0] and result.budget_reached
    # reaching the budget exactly is over (SillyTavern: tokens >= budget): 10 and the 6
    # SillyTavern adds, counting the text as a message (FRAMING)
    exact = scan(entries[:1], ["x"], ScanSettings(budget=10 + FRAMING), count=chars)
    assert exact.entries == [] and exact.budget_reached


def test_sticky_entries_come_first_then_candidate_order() -> None:
    entries = lore(
        {"constant": True, "content": "a" * 9, "order": 300},
        {"key": ["x"], "content": "s" * 9, "order": 1, "sticky": 5},
    )
    state = {"sticky": {"w.1": {"hash": 0, "start": 0, "end": 9, "protected": False}}}
    result = scan(entries, ["x"], ScanSettings(budget=21), state=state, count=chars)
    assert [e.uid for e in result.entries] == [1]


def test_earlier_passes_recursion_text_counts() -> None:
    entries = lore(
        {"key": ["castle"], "content": "moat " + "m" * 9, "order": 2},
        {"key": ["moat"], "content": "e" * 5, "order": 1},
    )
    fits = scan(entries, ["castle"], ScanSettings(budget=40), count=chars)
    assert [e.uid for e in fits.entries] == [1, 0]
    over = scan(entries, ["castle"], ScanSettings(budget=22), count=chars)
    assert [e.uid for e in over.entries] == [0]  # 15 + 6 earlier, 6 + 6 now: 33, over 22


def test_content_is_counted_with_macros_filled() -> None:
    entries = lore({"constant": True, "content": "{{char}}"})
    fill = {"{{char}}": "x" * 50}.get
    result = scan(entries, ["x"], ScanSettings(budget=20), count=chars, fill=lambda t: fill(t) or t)
    assert result.entries == [] and result.budget_reached


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40), min_size=0, max_size=25),
    orders=st.lists(st.integers(0, 5), min_size=25, max_size=25),
    budget=st.integers(1, 400),
)
def test_budget_property_never_exceeded_and_a_prefix_of_candidate_order(
    sizes: list[int], orders: list[int], budget: int
) -> None:
    entries = lore(
        *({"constant": True, "content": "x" * n, "order": orders[i]} for i, n in enumerate(sizes))
    )
    candidates = sorted(entries, key=lambda e: -e.order)  # SillyTavern's candidate order
    result = scan(candidates, ["x"], ScanSettings(budget=budget), count=chars)
    kept = {id(e) for e in result.entries}
    assert sum(len(e.content) + 1 for e in result.entries) + FRAMING * bool(kept) < budget
    prefix = [id(e) for e in candidates[: len(kept)]]
    assert set(prefix) == kept  # no later entry was taken past one that did not fit
    if len(kept) < len(candidates):
        nxt = candidates[len(kept)]
        taken = sum(len(e.content) + 1 for e in result.entries)
        assert taken + len(nxt.content) + 1 + FRAMING >= budget


def test_exact_tokens_with_the_compile_tokenizer() -> None:
    counter = counter_for("o200k_base")
    words = ["The castle of Eldoria stands", "Shadowfangs roam", "A moat of eels"]
    entries = lore(*({"constant": True, "content": w, "order": 9 - i} for i, w in enumerate(words)))
    two = counter.count(words[0] + "\n" + words[1] + "\n")
    got = scan(entries, ["x"], ScanSettings(budget=two + FRAMING + 1), count=counter.count)
    assert [e.content for e in got.entries] == words[1::-1]
    got = scan(entries, ["x"], ScanSettings(budget=two + FRAMING), count=counter.count)
    assert [e.content for e in got.entries] == words[:1]


def _book(tmp_path: Path, n: int) -> Path:
    entries = {
        str(i): {"uid": i, "constant": True, "content": f"Fact {i}: " + "lore " * 20, "order": i}
        for i in range(n)
    }
    path = tmp_path / "book.json"
    path.write_text(json.dumps({"entries": entries}), "utf-8")
    return path


def test_a_compile_applies_the_budget_as_a_share_of_its_prompt_budget(tmp_path: Path) -> None:
    _book(tmp_path, 20)
    ctx = {"worldInfo": "book.json", "chat": [{"role": "user", "content": "hi"}]}
    (tmp_path / "run.json").write_text(json.dumps(ctx), "utf-8")
    template = "<<agent.world.activated>>\n<<agent.chat.history>>"
    small = compiler.compile_string(template, context=tmp_path / "run.json", budget=1000)
    text = json.dumps(small.request)
    kept = [i for i in range(20) if f"Fact {i}:" in text]
    # 25 % of 1,000 tokens: some entries, the highest order first, never the whole book
    assert kept and len(kept) < 20 and kept == list(range(20 - len(kept), 20))
    ctx["worldInfoSettings"] = {"world_info_budget": 100}
    (tmp_path / "run.json").write_text(json.dumps(ctx), "utf-8")
    big = compiler.compile_string(template, context=tmp_path / "run.json", budget=100_000)
    assert all(f"Fact {i}:" in json.dumps(big.request) for i in range(20))
    ctx["worldInfoSettings"] = {"world_info_budget_cap": 36, "world_info_overflow_alert": True}
    (tmp_path / "run.json").write_text(json.dumps(ctx), "utf-8")
    capped = compiler.compile_string(template, context=tmp_path / "run.json", budget=100_000)
    assert sum(f"Fact {i}:" in json.dumps(capped.request) for i in range(20)) == 1
    assert [w.code for w in capped.warnings] == ["world.budget_reached"]


def test_the_profiles_world_info_budget_cuts_entries_not_the_block(tmp_path: Path) -> None:
    from compiler.profile import resolve_profile

    _book(tmp_path, 20)
    fragment = tmp_path / "profile.json"
    fragment.write_text(json.dumps({"context": {"worldInfoBudgetTokens": 80}}), "utf-8")
    ctx = {"worldInfo": "book.json", "chat": [{"role": "user", "content": "hi"}]}
    (tmp_path / "run.json").write_text(json.dumps(ctx), "utf-8")
    result = compiler.compile_string(
        "<<agent.world.activated>>\n<<agent.chat.history>>",
        context=tmp_path / "run.json",
        budget=100_000,
        profile=resolve_profile(run=fragment),
    )
    kept = [i for i in range(20) if f"Fact {i}:" in json.dumps(result.request)]
    # the highest orders, within 80 tokens; the block is not dropped whole
    assert kept and kept == list(range(20 - len(kept), 20)) and len(kept) < 20
    assert result.ledger.categories["worldInfo"].used <= 80
