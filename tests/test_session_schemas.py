"""A session checks a run tool's parameter schema once (issue 14): a later turn with the same
tools gives what a one-shot compile gives, and a schema it has not seen valid is checked
again, with the same error."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

import compiler
from compiler.context.tool_schemas import SchemaMemo
from compiler.errors import APCError

TEMPLATE = "<<agent.tools.available>>\n<<agent.chat.history>>"
GOOD = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
BAD = {"type": "object", "properties": {"path": {"type": 7}}}


def run(schema: dict[str, Any], n: int = 2) -> dict[str, Any]:
    chat = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]
    tool = {"name": "files.read", "description": "Read a file.", "parameters": schema}
    return {"chat": chat, "tools": [tool]}


def outcome(compile_: Any, context: dict[str, Any]) -> Any:
    try:
        out = compile_(context)
    except APCError as exc:
        return (exc.code, exc.message, exc.path)
    return (out.request, [t["name"] for t in out.tools])


def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    check = jsonschema.Draft202012Validator.check_schema

    def spy(schema: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        check(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", spy)
    return calls


def test_same_tools_checked_once_per_session(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counted(monkeypatch)
    session = compiler.Session.from_string(TEMPLATE, budget=4000)
    one_shot = lambda c: compiler.compile_string(TEMPLATE, context=c, budget=4000)  # noqa: E731
    for n in (2, 3, 4):
        assert outcome(session.compile, run(GOOD, n)) == outcome(one_shot, run(GOOD, n))
    assert len(calls) == 1 + 3  # the session's first turn; every one-shot compile


def test_an_invalid_schema_is_refused_every_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=4000)
    one_shot = lambda c: compiler.compile_string(TEMPLATE, context=c, budget=4000)  # noqa: E731
    session.compile(run(GOOD))
    expected = outcome(one_shot, run(BAD))
    assert expected[0] == "context.invalid_context"
    assert outcome(session.compile, run(BAD)) == expected
    assert outcome(session.compile, run(BAD, 3)) == expected
    # a valid schema differing only in a value's JSON type is its own key
    assert SchemaMemo.key({"minItems": 1}) != SchemaMemo.key({"minItems": True})
    assert outcome(session.compile, run({**GOOD, "minProperties": True})) == outcome(
        one_shot, run({**GOOD, "minProperties": True})
    )
    assert outcome(session.compile, run({**GOOD, "minProperties": 1}))[0] != (
        "context.invalid_context"
    )


def test_the_memo_is_bounded() -> None:
    memo = SchemaMemo()
    for i in range(SchemaMemo.LIMIT + 5):
        memo.add(f"k{i}")
    assert len(memo._valid) <= SchemaMemo.LIMIT
    assert f"k{SchemaMemo.LIMIT + 4}" in memo
    assert SchemaMemo.key({1j: 1}) is None  # not JSON: never kept
