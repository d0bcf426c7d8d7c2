"""The template language: literals kept byte for byte, macros, escapes, exact positions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler.errors import TemplateError
from compiler.syntax import Macro, Text, parse


def only_text(source: str) -> str:
    t = parse(source)
    assert all(isinstance(n, Text) for n in t.nodes)
    return "".join(n.value for n in t.nodes if isinstance(n, Text))


@pytest.mark.parametrize(
    "source",
    [
        "plain",
        "<< not a macro >>",
        "a stray >> here",
        "{{char}} and {{user}} and {{agent.plan}}",
        "```python\nx = a << 2 >> 1\n```",
        "<<agent",
        "<agent.plan>",
        "<<Agent.plan>>",
        "",
        "中文 <<注意>> emoji 🎉",
        "\\n and \\ backslashes \\\\",
    ],
)
def test_non_macro_text_is_kept_byte_for_byte(source: str) -> None:
    assert only_text(source) == source


def test_escape_writes_literal_open() -> None:
    assert only_text("see \\<<agent.plan>> here") == "see <<agent.plan>> here"


def test_macro_with_every_argument_form() -> None:
    t = parse(
        'x <<agent.file "out\\"put/\\n.md"\n  budget=800 required=true mode=summary '
        'strategy="fail" priority=-2 >> y'
    )
    text0, macro, text1 = t.nodes
    assert isinstance(text0, Text) and text0.value == "x "
    assert isinstance(text1, Text) and text1.value == " y"
    assert isinstance(macro, Macro)
    assert macro.name == "agent.file"
    got = {(a.key, a.value, a.kind) for a in macro.args}
    assert got == {
        (None, 'out"put/\n.md', "string"),
        ("budget", 800, "int"),
        ("required", True, "bool"),
        ("mode", "summary", "ident"),
        ("strategy", "fail", "string"),
        ("priority", -2, "int"),
    }


def test_spans_are_one_based_and_count_code_points() -> None:
    t = parse("中文\n  é <<agent.plan budget=3>>")
    macro = t.macros[0]
    assert (macro.span.line, macro.span.column) == (2, 5)
    assert (macro.span.end_line, macro.span.end_column) == (2, 28)
    assert (macro.args[0].span.line, macro.args[0].span.column) == (2, 18)
    assert t.source[macro.span.start : macro.span.end] == "<<agent.plan budget=3>>"


def test_dotted_names() -> None:
    assert parse("<<agent.workspace.tree>>").macros[0].name == "agent.workspace.tree"


def error(source: str) -> tuple[str, int, int]:
    with pytest.raises(TemplateError) as info:
        parse(source, "t.txt")
    d = info.value.diagnostics[0]
    assert d.span is not None and d.span.file == "t.txt"
    return d.code, d.span.line, d.span.column


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("ab <<agent.plan", ("template.unterminated_macro", 1, 4)),
        ('<<agent.file "x"\nmore text', ("template.unterminated_macro", 1, 1)),
        ('<<agent.file "x" <<agent.plan>>', ("template.unterminated_macro", 1, 1)),
        ('x\n<<agent.file "abc>>\nz', ("template.unterminated_string", 2, 14)),
        ('<<agent.file "abc', ("template.unterminated_string", 1, 14)),
        ("<<agent.Plan>>", ("template.syntax", 1, 1)),
        ("<<agent.skill romance>>", ("template.syntax", 1, 15)),
        ('<<agent.file "a"budget=3>>', ("template.syntax", 1, 17)),
        ("<<agent.file x= >>", ("template.syntax", 1, 16)),
        ('<<agent.file "a\\q">>', ("template.syntax", 1, 16)),
        ("<<agent.plan.>>", ("template.syntax", 1, 13)),
        ('x <<agent.file "a<<agent.b" x=1.5>>', ("template.syntax", 1, 32)),
        ('<<agent.plan\n"<<agent.>>"', ("template.unterminated_macro", 1, 1)),
        ('<<agent.plan"x">>', ("template.syntax", 1, 13)),
        ('<<agent.plan budget=1"x">>', ("template.syntax", 1, 22)),
        ("<<agent.plan\u00a0budget=1>>", ("template.syntax", 1, 13)),
    ],
)
def test_syntax_errors_have_code_and_position(source: str, expected: tuple[str, int, int]) -> None:
    assert error(source) == expected


def test_no_lark_type_escapes() -> None:
    with pytest.raises(TemplateError) as info:
        parse("<<agent.plan x=")
    assert "lark" not in type(info.value).__module__
    assert info.value.__cause__ is None


# -- properties ------------------------------------------------------------------------

text_without_open = st.text(
    alphabet=st.sampled_from(list('ab<>{}\\.\n "=agent中')), max_size=60
).filter(lambda s: "<<agent." not in s)


@given(text_without_open)
def test_text_without_macro_opener_round_trips(source: str) -> None:
    assert only_text(source) == source


names = st.sampled_from(["plan", "file", "workspace.tree", "tool_results", "x_1.y"])
strings = st.text(
    alphabet=st.characters(blacklist_characters='"\\\r\n', blacklist_categories=("Cs",)),
    max_size=12,
)


@given(
    st.lists(st.tuples(text_without_open, names, strings, st.integers(-5, 10**6))),
    text_without_open,
)
def test_generated_templates_parse_back(parts: list[tuple[str, str, str, int]], tail: str) -> None:
    source = ""
    for text, name, s, n in parts:
        text = text.rstrip("\\")  # a backslash right before <<agent. escapes it
        source += f'{text}<<agent.{name} "{s}" budget={n}>>'
    source += tail
    t = parse(source)
    assert [m.name for m in t.macros] == [f"agent.{p[1]}" for p in parts]
    for macro, (_, _, s, n) in zip(t.macros, parts, strict=True):
        assert macro.args[0].value == s
        assert macro.args[1].value == n
        assert source[macro.span.start : macro.span.end].startswith("<<agent.")


near_misses = (
    st.lists(
        st.sampled_from(
            [
                "<",
                "<<",
                "<<a",
                "<<agent",
                "<<agentx",
                "<<Agent.",
                "<<agent .",
                ">>",
                ">",
                "{{char}}",
                "{{agent.plan}}",
                "\\",
                "\n",
                "text ",
                "中",
                '"',
                "=",
                "agent.",
            ]
        ),
        max_size=20,
    )
    .map("".join)
    .filter(lambda s: "<<agent." not in s)
)


@given(near_misses)
def test_near_misses_of_the_opener_stay_literal(source: str) -> None:
    assert only_text(source) == source


def quote(value: str) -> str:
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    )
    return f'"{escaped}"'


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=30
    )
)
def test_any_string_round_trips_through_escapes(value: str) -> None:
    (macro,) = parse(f"<<agent.file {quote(value)}>>").macros
    assert macro.args[0].value == value
