"""The allocator's properties, for every dialect (issue 11): whatever the provider, a fitted
request never exceeds its budget, the ledger is the request's own count, a required part
is never dropped, and a bigger budget never keeps fewer whole components. The frames are
tests/fit/test_properties.py's; each dialect computes its own need."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from compiler._base.frame import Component, ComponentKind, ContextFrame
from compiler._base.journal import Journal
from compiler._base.tokens import counter_for
from compiler.fit import FitResult, fit, floor_tokens
from compiler.providers import get_dialect
from compiler.providers.dialect import Dialect
from compiler.providers.registry import PROVIDERS
from tests.fit.test_properties import frames

COUNTER = counter_for("o200k_base")
MODELS = {
    "openai_chat": "gpt-4o",
    "openai_responses": "gpt-4o",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}
#: one provider name per dialect module
DIALECTS = sorted({module: name for name, module in PROVIDERS.items()}.values())


def model_of(dialect: Dialect) -> str:
    return MODELS.get(type(dialect).__module__.rsplit(".", 1)[-1], "gpt-4o")


def run(frame: ContextFrame, budget: int, dialect: Dialect) -> FitResult:
    return fit(
        frame,
        dialect=dialect,
        counter=COUNTER,
        model=model_of(dialect),
        budget=budget,
        journal=Journal(),
    )


def need(frame: ContextFrame, dialect: Dialect) -> int:
    whole = [
        c.model_copy(update={"strategy": "fail"}) if c.required else c for c in frame.components
    ]
    return floor_tokens(
        ContextFrame(components=whole), dialect=dialect, counter=COUNTER, model=model_of(dialect)
    )


#: Found by hypothesis for Anthropic at the floor: the required text after the chat is sent as
#: a tagged note beside the newest turn (dearer than alone), the room left after it was
#: reckoned from its count alone, the optional text took that room, and the next grant run's
#: smaller total failed the required text ("nothing of it fits").
AFTER_THE_CHAT = ContextFrame(
    components=[
        Component(
            id="000",
            kind=ComponentKind.WORKSPACE_FILE,
            source="test",
            role="system",
            inline_content="the",
        ),
        Component(
            id="001",
            kind=ComponentKind.CHAT_HISTORY,
            source="test",
            role="system",
            messages=[
                {
                    "role": "assistant",
                    "content": None,
                    "toolCalls": [{"id": "c0", "name": "chat.search", "arguments": {"q": "x"}}],
                },
                {"role": "tool", "content": "the", "toolCallId": "c0"},
                {"role": "user", "content": "the"},
            ],
        ),
        Component(
            id="002",
            kind=ComponentKind.WORKSPACE_FILE,
            source="test",
            role="system",
            required=True,
            strategy="truncate",
            inline_content="the",
        ),
    ]
)


@pytest.mark.parametrize("provider", DIALECTS)
@example(frame=AFTER_THE_CHAT, slack=0, more=1)
@given(frame=frames(), slack=st.integers(0, 600), more=st.integers(1, 400))
def test_the_allocator_holds_for_every_dialect(
    provider: str, frame: ContextFrame, slack: int, more: int
) -> None:
    dialect = get_dialect(provider)
    frame = ContextFrame(  # a required part over its own budget fails at any total
        components=[
            c.model_copy(update={"token_budget": None}) if c.required else c
            for c in frame.components
        ]
    )
    budget = need(frame, dialect) + slack
    small = run(frame, budget, dialect)
    counted = dialect.count_request(dialect.lower(small.frame, model_of(dialect)), COUNTER)
    assert counted == small.ledger.total_tokens <= budget
    kept = {c.id for c in small.frame.components}
    assert all(c.id in kept for c in frame.components if c.required)
    big = run(frame, budget + more, dialect)
    big_ids = {e.id for e in big.ledger.entries if e.action != "dropped"}
    for e in small.ledger.entries:
        if e.strategy in ("drop_optional", "fail") and e.action != "dropped":
            assert e.id in big_ids
