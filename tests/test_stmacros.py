"""SillyTavern {{macro}} substitution."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.inputs.cards import read_card
from compiler.st.macros import card_values, substitute

VALUES = {
    "char": "Seraphina",
    "user": "Alice",
    "persona": "A lost traveller.",
    "description": "A guardian.",
    "personality": "kind",
    "scenario": "A glade.",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{char}} greets {{user}}.", "Seraphina greets Alice."),
        ("{{CHAR}} / {{User}}", "Seraphina / Alice"),
        (
            "{{persona}}|{{description}}|{{personality}}|{{scenario}}",
            "A lost traveller.|A guardian.|kind|A glade.",
        ),
        ("a{{newline}}b", "a\nb"),
        ("a{{noop}}b", "ab"),
        ("a\n\n{{trim}}\r\nb", "ab"),
        ("a  {{trim}}  b", "a    b"),
        ("keep {{// a note\nover lines}}this", "keep this"),
        (
            "{{agent.plan}} and {{ char }} and {{random}}",
            "{{agent.plan}} and {{ char }} and {{random}}",
        ),
        ("<<agent.plan>> {{char}", "<<agent.plan>> {{char}"),
        ("no macros", "no macros"),
    ],
)
def test_substitute(text: str, expected: str) -> None:
    assert substitute(text, VALUES) == expected


def test_known_name_without_a_value_is_left_alone() -> None:
    assert substitute("{{scenario}}", {"char": "x"}) == "{{scenario}}"


def test_original_expands_once() -> None:
    values = {**VALUES, "original": "Write the reply."}
    assert substitute("{{original}} Then {{original}}.", values) == "Write the reply. Then ."


def test_values_are_not_scanned_again() -> None:
    values = {"char": "{{user}}", "user": "Alice", "description": "{{// x}}{{trim}}"}
    assert substitute("{{char}} {{description}}", values) == "{{user}} {{// x}}{{trim}}"


def test_macro_names_cannot_contain_dots() -> None:
    with pytest.raises(ValueError, match="macro name"):
        substitute("{{agent.plan}}", {"agent.plan": "x"})


def test_card_values_prefer_the_nickname() -> None:
    card = read_card(
        {
            "spec": "chara_card_v3",
            "data": {"name": "Seraphina", "nickname": "Sera", "scenario": "s"},
        }
    )
    values = card_values(card, user="Alice", persona="p")
    assert values == {
        "user": "Alice",
        "persona": "p",
        "char": "Sera",
        "description": "",
        "personality": "",
        "scenario": "s",
        "mesExamples": "",
        "charVersion": "",
        "char_version": "",
    }
    assert card_values(None)["char"] == ""


_OLD_TRIM = re.compile(r"(?:\r?\n)*\{\{trim\}\}(?:\r?\n)*", re.IGNORECASE)
_OLD_COMMENT = re.compile(r"\{\{//[\s\S]*?\}\}")
_PIECES = st.sampled_from(["\n", "\r", "\r\n", "{{trim}}", "{{TRIM}}", "{{//", "}}", "a", " ", "{"])


@given(st.lists(_PIECES, max_size=30).map("".join))
@settings(max_examples=300, deadline=None)
def test_linear_trim_and_comments_match_the_regex_definition(text: str) -> None:
    """The one-pass {{trim}} and comment removal do what SillyTavern's regexes do."""
    assert substitute(text, {}) == _OLD_TRIM.sub("", _OLD_COMMENT.sub("", text))


def _work(text: str) -> tuple[str, int, int]:
    """:func:`substitute` of ``text``, with the lines it runs in compiler/st/macros.py and the
    bytes it allocates there, step by step (the growth of the traced memory's peak over each
    line, summed): counts of work the machine's load does not change, unlike a time. A line
    that copies a whole string or list is one line but many bytes."""
    import sys
    import tracemalloc
    from types import FrameType

    lines = allocated = 0
    base = 0

    def local(frame: FrameType, event: str, arg: object) -> object:
        nonlocal lines, allocated, base
        peak = tracemalloc.get_traced_memory()[1]
        allocated += max(0, peak - base)
        lines += event == "line"
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> object:
        return local if frame.f_code.co_filename.endswith("stmacros.py") else None

    tracemalloc.start()
    sys.settrace(tracer)
    try:
        out = substitute(text, {})
    finally:
        sys.settrace(None)
        tracemalloc.stop()
    return out, lines, allocated


@pytest.mark.parametrize(
    ("make", "expect"),
    [
        (lambda n: "{{//" * n, lambda n: "{{//" * n),  # unclosed comments (and macros)
        (lambda n: "a" + "\n" * n + "{{trim}}" + "\n" * n + "b", lambda n: "ab"),
        (
            lambda n: "{{trim}}" + "\r\n" * n + "{{TRIM}}" + "x\n" * n + "{{trim}}",
            lambda n: "x\n" * (n - 1) + "x",
        ),
        (lambda n: "\n" * n + "x", lambda n: "\n" * n + "x"),
    ],
)
def test_trim_and_unclosed_comments_are_linear(
    make: Callable[[int], str], expect: Callable[[int], str]
) -> None:
    """Four times the text, about four times the work: quadratic before (a list rebuilt
    for each unclosed macro, a string cut one newline at a time around ``{{trim}}``),
    50,000 unclosed comments took 11.7 s."""
    counts = []
    for n in (2_000, 8_000):
        out, lines, allocated = _work(make(n))
        assert out == expect(n)
        counts.append((lines, allocated))
    (lines, allocated), (lines4, allocated4) = counts
    assert lines4 <= 5 * lines + 100
    assert allocated4 <= 5 * allocated + 100_000


def test_macros_never_fill_in_more_than_the_limit() -> None:
    import json

    import compiler
    from compiler.errors import TemplateError
    from compiler.st.macros import MAX_FILLED_CHARS, substitute

    long = "x" * 100_000
    ok = substitute("{{description}}" * 100, {"description": long})
    assert len(ok) == 100 * len(long)
    with pytest.raises(TemplateError) as err:  # 200 MB, refused at the limit
        substitute("{{description}}" * 2_000, {"description": long})
    assert err.value.diagnostics[0].code == "template.too_large"
    assert str(MAX_FILLED_CHARS) not in err.value.diagnostics[0].message  # written 16,777,216
    preset = {"prompts": [{"identifier": "main", "content": "{{description}}" * 2_000}]}
    card = {"name": "Mira", "description": long}
    with pytest.raises(TemplateError):
        compiler.compile_string(
            json.dumps(preset), kind="preset", context={"character": card}, mode="legacy"
        )
