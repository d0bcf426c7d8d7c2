"""Property tests of the allocator over random frames and budgets (hypothesis)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.errors import BudgetError
from compiler.fit import CategoryBudgets, FitResult, fit
from compiler.frame import Component, ComponentKind, ContextFrame, Message
from compiler.journal import Journal
from compiler.lower.openai_chat import DIALECT
from compiler.tokens import counter_for

COUNTER = counter_for("o200k_base")
WORDS = ["the", "ferry", "Mira", "lantern", "river", "night", "said", "quietly", "东京", "🙂"]
SETTINGS = settings(
    max_examples=int(os.environ.get("APC_EXAMPLES", "60")),  # APC_EXAMPLES=1000 to dig deeper
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=60).map(" ".join)


@st.composite
def history(draw: st.DrawFn) -> list[Message]:
    out: list[Message] = []
    for i in range(draw(st.integers(0, 30))):
        if draw(st.integers(0, 9)) == 0:
            cid = f"c{i}"
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "toolCalls": [{"id": cid, "name": "chat.search", "arguments": {"q": "x"}}],
                }
            )
            out.append({"role": "tool", "content": draw(text), "toolCallId": cid})
        else:
            out.append({"role": "user" if i % 2 else "assistant", "content": draw(text)})
    return out


@st.composite
def component(draw: st.DrawFn, index: int) -> Component:
    kind = draw(
        st.sampled_from(
            [
                ComponentKind.PRESET_GUIDE,
                ComponentKind.WORKSPACE_FILE,
                ComponentKind.SKILL,
                ComponentKind.PLAN,
                ComponentKind.CHAT_HISTORY,
                ComponentKind.TOOL_RESULTS,
            ]
        )
    )
    fields: dict[str, Any] = {
        "id": f"{index:03d}",
        "kind": kind,
        "source": "test",
        "group": draw(st.integers(0, 2)),
        "role": draw(st.sampled_from(["system", "user"])),
        "priority": draw(st.integers(0, 2)),
    }
    if kind == ComponentKind.CHAT_HISTORY:
        fields["messages"] = draw(history())
        fields["strategy"] = draw(st.sampled_from([None, "truncate", "summarize"]))
    elif kind == ComponentKind.TOOL_RESULTS:
        msgs: list[Message] = []
        for j in range(draw(st.integers(1, 3))):
            cid = f"t{index}-{j}"
            msgs.append(
                {
                    "role": "assistant",
                    "content": None,
                    "toolCalls": [{"id": cid, "name": "workspace.read_file", "arguments": {}}],
                }
            )
            msgs.append({"role": "tool", "content": draw(text) * 3, "toolCallId": cid})
        fields["messages"] = msgs
    else:
        fields["inline_content"] = draw(text)
        if kind != ComponentKind.PRESET_GUIDE:
            fields["strategy"] = draw(
                st.sampled_from([None, "truncate", "summarize", "drop_optional"])
            )
            fields["required"] = draw(st.booleans()) and draw(st.booleans())
            fields["token_budget"] = draw(st.one_of(st.none(), st.integers(0, 120)))
    return Component(**fields)


@st.composite
def frames(draw: st.DrawFn) -> ContextFrame:
    n = draw(st.integers(1, 6))
    comps = [draw(component(i)) for i in range(n)]
    return ContextFrame(components=comps)


category_budgets = st.builds(
    CategoryBudgets,
    history=st.one_of(st.none(), st.integers(0, 600)),
    workspace_file=st.one_of(st.none(), st.integers(0, 200)),
    tool_result=st.one_of(st.none(), st.integers(0, 300)),
    skill=st.one_of(st.none(), st.integers(0, 100)),
    summary=st.one_of(st.none(), st.integers(0, 200)),
)


def run(frame: ContextFrame, budget: int, budgets: CategoryBudgets | None = None) -> FitResult:
    return fit(
        frame,
        dialect=DIALECT,
        counter=COUNTER,
        model="gpt-4o",
        budget=budget,
        journal=Journal(),
        budgets=budgets,
    )


def exact(result: FitResult) -> int:
    return DIALECT.count_request(DIALECT.lower(result.frame, "gpt-4o"), COUNTER)


@SETTINGS
@given(frames(), st.integers(0, 2500), category_budgets)
def test_never_over_budget_and_the_ledger_is_exact(
    frame: ContextFrame, budget: int, budgets: CategoryBudgets
) -> None:
    try:
        result = run(frame, budget, budgets)
    except BudgetError as exc:
        assert exc.code == "context.budget_exceeded" and "ledger" in exc.details
        return
    total = exact(result)
    assert total <= budget
    assert result.ledger.total_tokens == total
    assert result.ledger.overhead_tokens + sum(e.tokens_used for e in result.ledger.entries) == (
        total
    )
    for entry in result.ledger.entries:  # every budget that applied is respected
        if entry.action != "dropped" and entry.budget.own is not None:
            assert entry.tokens_used <= entry.budget.own or entry.strategy == "fail"
    for name, cat in result.ledger.categories.items():
        if cat.budget is not None:
            assert cat.used <= cat.budget, name


@SETTINGS
@given(frames(), st.integers(0, 2500))
def test_a_required_component_is_never_silently_dropped(frame: ContextFrame, budget: int) -> None:
    try:
        result = run(frame, budget)
    except BudgetError:
        return
    kept = {c.id for c in result.frame.components}
    for comp in frame.components:
        if comp.required:
            assert comp.id in kept
            assert result.ledger.entry(comp.id).action != "dropped"


@SETTINGS
@given(frames(), st.integers(0, 2000), st.integers(1, 800))
def test_a_bigger_budget_never_keeps_less(frame: ContextFrame, budget: int, more: int) -> None:
    try:
        small = run(frame, budget)
    except BudgetError:
        return
    big = run(frame, budget + more)  # what fits a budget fits a bigger one
    small_ids = {e.id for e in small.ledger.entries if e.action != "dropped"}
    big_ids = {e.id for e in big.ledger.entries if e.action != "dropped"}
    whole = {"drop_optional", "fail"}
    # components kept or dropped whole: the bigger budget keeps a superset
    for e in small.ledger.entries:
        if e.strategy in whole and e.id in small_ids:
            assert e.id in big_ids
    # and the request as a whole never shrinks by more than the granularity of whole units
    # (a history keeps whole messages) and a summary's rounding
    unit = max(
        [
            DIALECT.message_tokens(m, COUNTER) * 2 + 8
            for c in frame.components
            for m in (c.messages or [])
        ],
        default=8,
    )
    assert big.ledger.total_tokens + unit >= small.ledger.total_tokens


@SETTINGS
@given(frames(), st.integers(0, 2500))
def test_same_input_gives_a_byte_identical_request(frame: ContextFrame, budget: int) -> None:
    try:
        first = run(frame, budget)
    except BudgetError:
        with pytest.raises(BudgetError):
            run(frame, budget)
        return
    second = run(frame.model_copy(deep=True), budget)
    assert DIALECT.lower(first.frame, "gpt-4o") == DIALECT.lower(second.frame, "gpt-4o")
    assert first.ledger == second.ledger


@SETTINGS
@given(st.lists(text, min_size=20, max_size=60), st.integers(200, 1500))
def test_a_cut_history_uses_at_least_95_percent(chat: list[str], budget: int) -> None:
    msgs: list[Message] = [
        {"role": "user" if i % 2 else "assistant", "content": t} for i, t in enumerate(chat)
    ]
    frame = ContextFrame(
        components=[
            Component(id="a", kind=ComponentKind.PRESET_GUIDE, source="t", inline_content="Hi."),
            Component(id="h", kind=ComponentKind.CHAT_HISTORY, source="t", messages=msgs),
        ]
    )
    result = run(frame, budget)
    if result.ledger.entry("h").action != "kept":
        assert exact(result) >= 0.95 * budget
