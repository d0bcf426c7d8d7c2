"""The seams' neighbours (:class:`compiler.fit.costs.Neighbours`): the same answers as a scan
of every item, found without one, so a frame of many components fits in linear time."""

from __future__ import annotations

import os
import sys
from types import FrameType

from hypothesis import given
from hypothesis import strategies as st

import compiler
from compiler._base.frame import MESSAGE_KINDS, Component, ComponentKind
from compiler.fit.costs import Neighbours
from compiler.fit.items import Item, Outcome

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


def fit_lines(macros: int) -> int:
    """Lines the fit stage (compiler/fit) runs to compile a template of ``macros`` macros:
    a count of work that the machine's load does not change, unlike a time."""
    lines = 0

    def local(frame: FrameType, event: str, arg: object) -> object:
        nonlocal lines
        lines += event == "line"
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> object:
        return local if f"compiler{os.sep}fit{os.sep}" in frame.f_code.co_filename else None

    sys.settrace(tracer)
    try:
        result = compiler.compile_string("<<agent.plan>>" * macros, context={"plan": "go"})
    finally:
        sys.settrace(None)
    assert len(result.request["messages"][0]["content"]) == 2 * macros
    return lines


def test_a_frame_of_many_components_fits_in_linear_time() -> None:
    """Four times the macros, about four times the fit's work (a grant that scanned the
    items not yet granted made it quadratic: sixteen times; 40,000 macros took 75 s)."""
    small, large = fit_lines(400), fit_lines(1600)
    assert large < 6 * small
