"""A bigger budget never keeps less: the cases that broke it, and the exact-count re-run."""

from __future__ import annotations

from typing import Any

import pytest

from compiler._base.frame import Component, ComponentKind, ContextFrame, Message, Strategy
from compiler._base.journal import Journal
from compiler._base.tokens import counter_for
from compiler.fit import FitResult, fit, floor_tokens
from compiler.fit.allocator import _Allocator
from compiler.providers.openai_chat import DIALECT

COUNTER = counter_for("o200k_base")


def text(
    cid: str, content: str, kind: ComponentKind = ComponentKind.WORKSPACE_FILE, **kw: Any
) -> Component:
    return Component(id=cid, kind=kind, source="t", inline_content=content, **kw)


def run(frame: ContextFrame, budget: int, journal: Journal | None = None) -> FitResult:
    result = fit(
        frame,
        dialect=DIALECT,
        counter=COUNTER,
        model="gpt-4o",
        budget=budget,
        journal=journal or Journal(),
    )
    assert result.total_tokens == DIALECT.count_request(
        DIALECT.lower(result.frame, "gpt-4o"), COUNTER
    )
    assert result.total_tokens <= budget
    return result


def kept(result: FitResult) -> set[str]:
    return {e.id for e in result.ledger.entries if e.action != "dropped"}


def test_two_small_components_in_two_messages_are_kept_in_grant_order() -> None:
    # the old repair pass kept one at budgets 8-10, none at 11 (an empty request), one at 12
    frame = ContextFrame(components=[text("a", "the"), text("b", "the", role="user")])
    seen = {b: kept(run(frame, b)) for b in range(3, 20)}
    assert all(seen[b] == set() for b in range(3, 8))
    assert all(seen[b] == {"a"} for b in range(8, 13))  # 3 priming + 4 framing + 1
    assert all(seen[b] == {"a", "b"} for b in range(13, 20))


@pytest.mark.parametrize("strategy", ["truncate", "summarize"])
def test_a_history_cut_to_fit_hands_no_rounding_down_to_a_whole_component(
    strategy: Strategy,
) -> None:
    # a priority-1 history takes what it needs first; the old allocator let a 1-token file
    # use whatever the history's whole-message cut happened to leave, so it came and went
    msgs: list[Message] = [
        {
            "role": "user" if i % 2 else "assistant",
            "content": f"Turn {i}: " + "the river at night " * (1 + i % 4),
        }
        for i in range(12)
    ]
    frame = ContextFrame(
        components=[
            text("sys", "System.", ComponentKind.PRESET_GUIDE),
            Component(
                id="h",
                kind=ComponentKind.CHAT_HISTORY,
                source="t",
                messages=msgs,
                priority=1,
                strategy=strategy,
            ),
            text("f", "x", role="user"),
        ]
    )
    flags = []
    least = floor_tokens(frame, dialect=DIALECT, counter=COUNTER, model="gpt-4o")
    for budget in range(least, 400):  # the newest turn is never cut: from the floor up
        result = run(frame, budget)
        flags.append("f" in kept(result))
        if flags[-1]:
            assert result.ledger.entry("h").action == "kept"
    first = flags.index(True)
    assert not any(flags[:first]) and all(flags[first:])  # dropped, then kept for good


def test_a_seam_the_estimate_missed_reruns_the_grant_with_a_smaller_total(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "the" + "river" is 2 tokens; "re" between them costs 1 on its own and 0 at each seam
    # as the grant loop sees them, but "thereriver" is 3 tokens: the exact count is over
    assert [COUNTER.count(s) for s in ("the", "re", "river", "theriver")] == [1, 1, 1, 2]
    assert COUNTER.count("thereriver") == 3
    frame = ContextFrame(
        components=[
            text("p", "the", ComponentKind.PRESET_GUIDE),
            text("x", "re"),
            text("n", "river", ComponentKind.PRESET_GUIDE),
        ]
    )
    floor = floor_tokens(frame, dialect=DIALECT, counter=COUNTER, model="gpt-4o")
    assert floor == 3 + 4 + 2
    runs: list[int | None] = []
    grant = _Allocator.grant

    def spy(self: _Allocator, virtual: int | None) -> None:
        runs.append(virtual)
        grant(self, virtual)

    monkeypatch.setattr(_Allocator, "grant", spy)
    journal = Journal()
    result = run(frame, floor, journal)
    assert runs == [floor, floor - 1]  # kept at the budget, 1 over, granted again at 1 less
    assert kept(result) == {"p", "n"} and result.total_tokens == floor
    skipped = [e.payload for e in journal.events if e.type == "context_component_skipped"]
    assert [p["component"] for p in skipped] == ["x"]  # only the run that stands is logged
    runs.clear()
    result = run(frame, floor + 1)
    assert runs == [floor + 1] and kept(result) == {"p", "x", "n"}
    assert result.total_tokens == floor + 1


def test_a_required_part_fits_at_exactly_its_need_when_seams_overestimate() -> None:
    """ "lantern" before "the" "the" costs 2 more tokens in one message, though the seam
    estimate says 3: the required file must still be kept whole at exactly its need."""
    from compiler._base.frame import Component, ComponentKind, ContextFrame
    from compiler._base.journal import Journal
    from compiler._base.tokens import counter_for
    from compiler.fit import fit, floor_tokens
    from compiler.providers.openai_chat import DIALECT

    counter = counter_for("o200k_base")

    def text(i: int, kind: ComponentKind, content: str, **kw: object) -> Component:
        return Component(
            id=f"{i:03d}",
            kind=kind,
            source="t",
            role="system",
            group=0,
            inline_content=content,
            **kw,  # type: ignore[arg-type]
        )

    frame = ContextFrame(
        components=[
            text(0, ComponentKind.WORKSPACE_FILE, "lantern", required=True, strategy="truncate"),
            text(1, ComponentKind.PRESET_GUIDE, "the"),
            text(2, ComponentKind.PRESET_GUIDE, "the"),
        ]
    )
    whole = ContextFrame(
        components=[
            frame.components[0].model_copy(update={"strategy": "fail"}),
            *frame.components[1:],
        ]
    )
    need = floor_tokens(whole, dialect=DIALECT, counter=counter, model="gpt-4o")
    for budget in (need, need + 1, need + 5):
        result = fit(
            frame,
            dialect=DIALECT,
            counter=counter,
            model="gpt-4o",
            budget=budget,
            journal=Journal(),
        )
        assert [e.action for e in result.ledger.entries] == ["kept", "kept", "kept"]
        assert result.ledger.total_tokens <= budget
