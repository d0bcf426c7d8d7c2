"""The macro catalogue: every semantic error of a file at once, in order, with hints."""

from __future__ import annotations

import pytest

from compiler._assemble.macros import CATALOGUE, MacroCall, bind
from compiler._base.frame import ComponentKind
from compiler.errors import TemplateError
from compiler.syntax import parse


def errors(source: str) -> list[tuple[str, int, int, str | None]]:
    with pytest.raises(TemplateError) as info:
        bind(parse(source, "t.txt"))
    return [(d.code, d.span.line, d.span.column, d.hint) for d in info.value.diagnostics if d.span]


def test_catalogue_has_every_macro_and_kind() -> None:
    assert {name: spec.kind for name, spec in CATALOGUE.items()} == {
        "agent.plan": ComponentKind.PLAN,
        "agent.workspace.tree": ComponentKind.WORKSPACE_TREE,
        "agent.file": ComponentKind.WORKSPACE_FILE,
        "agent.tools.available": ComponentKind.TOOL_DEFINITIONS,
        "agent.tool_results": ComponentKind.TOOL_RESULTS,
        "agent.diff.latest": ComponentKind.DIFF_SUMMARY,
        "agent.skill": ComponentKind.SKILL,
        "agent.system_prompt": ComponentKind.SYSTEM_INSTRUCTION,
        "agent.chat.history": ComponentKind.CHAT_HISTORY,
        "agent.world.activated": ComponentKind.WORLD_INFO,
        "agent.character": ComponentKind.CHARACTER_CARD,
        "agent.user": ComponentKind.USER_PROFILE,
    }


def test_all_semantic_errors_reported_in_order() -> None:
    source = (
        'Read: <<agent.fiel "output/main.md">>\n'
        '<<agent.file budget=x "a" budget=3>>\n'
        "<<agent.tool_results mode=summry requried=true>>\n"
        '<<agent.skill>> <<agent.plan "p">>'
    )
    assert errors(source) == [
        ("template.unknown_macro", 1, 7, "did you mean 'agent.file'?"),
        ("template.bad_argument", 2, 14, None),
        ("template.duplicate_argument", 2, 27, None),
        ("template.bad_argument", 3, 22, "did you mean 'summary'?"),
        ("template.unknown_argument", 3, 34, "did you mean 'required'?"),
        ("template.missing_argument", 4, 1, 'write <<agent.skill "name">>'),
        (
            "template.unknown_argument",
            4,
            30,
            "'agent.plan' takes: budget, priority, required, strategy",
        ),
    ]


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("<<agent.plan budget=-1>>", "template.bad_argument"),
        ('<<agent.plan budget="3">>', "template.bad_argument"),
        ("<<agent.plan required=yes>>", "template.bad_argument"),
        ('<<agent.plan strategy="squash">>', "template.bad_argument"),
        ("<<agent.file path=output>>", "template.bad_argument"),
        ('<<agent.file "a" path="b">>', "template.duplicate_argument"),
        ('<<agent.file path="b" "a">>', "template.duplicate_argument"),
        ('<<agent.world.activated position="middle">>', "template.bad_argument"),
        ('<<agent.character field="eyes">>', "template.bad_argument"),
    ],
)
def test_bad_arguments(source: str, code: str) -> None:
    assert errors(source)[0][0] == code


def test_positional_may_be_named_and_defaults_stay_out() -> None:
    bound = bind(parse('<<agent.file path="output/a.md" strategy=truncate>>'))
    (call,) = bound.items
    assert isinstance(call, MacroCall)
    assert call.args == {"path": "output/a.md", "strategy": "truncate"}


def test_legacy_seed_syntax_warns_with_rewrite() -> None:
    bound = bind(parse('a {{agent.file "output/main.md" budget=800}} {{char}}', "t.txt"))
    (warning,) = bound.warnings
    assert warning.code == "template.legacy_agent_macro"
    assert warning.severity == "warning"
    assert warning.span is not None and warning.span.column == 3
    assert warning.hint == 'write <<agent.file "output/main.md" budget=800>>'
