"""The seams' neighbours (:class:`compiler.fit.costs.Neighbours`): the same answers as a scan
of every item, found without one, so a frame of many components fits in linear time."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

import compiler
from compiler.fit.costs import Neighbours
from compiler.fit.items import Item, Outcome
from compiler.frame import MESSAGE_KINDS, Component, ComponentKind

KINDS = (ComponentKind.PRESET_GUIDE, ComponentKind.CHAT_HISTORY, ComponentKind.TOOL_DEFINITIONS)


def scan(items: list[Item], index: int, step: int) -> Component | None:
    """The nearest inline text by looking at every item (what the grant loop did)."""
    j = index + step
    while 0 <= j < len(items):
        out = items[j].outcome.out
        if out is not None:
            if out.kind in MESSAGE_KINDS:
                return None
            if out.kind != ComponentKind.TOOL_DEFINITIONS and out.inline_content:
                return out
        j += step
    return None


def item(index: int, kind: ComponentKind, text: str) -> Item:
    comp = Component(
        id=f"c{index}",
        kind=kind,
        source="t",
        inline_content=text if kind == ComponentKind.PRESET_GUIDE else None,
        messages=[{"role": "user", "content": "m"}] if kind == ComponentKind.CHAT_HISTORY else None,
    )
    return Item(index=index, comp=comp, strategy="truncate", category=None, fixed=False)


state = st.lists(
    st.tuples(st.sampled_from(KINDS), st.sampled_from(["", "text"]), st.booleans()),
    min_size=1,
    max_size=30,
)


@given(state, st.lists(st.integers(0, 29), max_size=30))
def test_the_same_neighbours_as_a_scan(
    shape: list[tuple[ComponentKind, str, bool]], turns: list[int]
) -> None:
    items = [item(i, kind, text) for i, (kind, text, _) in enumerate(shape)]
    for i, (_, _, present) in enumerate(shape):  # present from the start (fixed, empty)
        if present:
            items[i].outcome = Outcome(out=items[i].comp)
    near = Neighbours(items)
    for t in turns:  # the grant loop: an item's turn sets its outcome (kept or dropped)
        it = items[t % len(items)]
        it.outcome = Outcome(out=None if it.outcome.out is not None else it.comp)
        near.update(it)
        for i in range(len(items)):
            for step in (-1, 1):
                assert near.of(i, step) is scan(items, i, step)


def test_a_frame_of_many_components_fits_in_linear_time() -> None:
    """20,000 macros (40 KB of a 2 MiB template): about 20 s when each grant scanned the
    items not yet granted (quadratic), about 2 s now."""
    started = time.monotonic()
    result = compiler.compile_string("<<agent.plan>>" * 20_000, context={"plan": "go"})
    assert time.monotonic() - started < 10
    assert len(result.request["messages"][0]["content"]) == 2 * 20_000
