"""The one converter of validation errors (compiler/_base/validation.py): a data key spelt like
one of pydantic's union tags (``str``, ``list[x]``) keeps its path, and the union's other
members' errors name the field itself; merging a union's type errors never swallows another
diagnostic."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

import compiler
from compiler._base.validation import Codes, diagnostics_from
from compiler.errors import APCError
from compiler.inputs.run import RunContext

CODES = Codes(unknown="t.unknown", missing="t.missing", invalid="t.invalid")


def diagnostics(model: type[BaseModel], data: Any) -> list[tuple[str, str | None]]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    found = diagnostics_from(caught.value, model, codes=CODES, data=data)
    return [(d.message, d.path) for d in found]


@pytest.mark.parametrize("key", ["str", "list[x]", "dict[str,str]", "int"])
def test_a_data_key_named_like_a_tag_keeps_its_path(key: str) -> None:
    got = diagnostics(RunContext, {"skills": {key: 5}})
    assert got[0][1] == f"skills.{key}" if key.isidentifier() else f'skills["{key}"]'
    assert got[0][0] == f"field '{key}': Input should be a valid string (found 5)"
    # the str member's error is about skills itself, not about its key
    assert got[1] == ("field 'skills': Input should be a valid string", "skills")
    # a valid key spelt like a tag is not blamed for another key's error
    got = diagnostics(RunContext, {"skills": {key: "ok", "b": 5}})
    assert [path for _, path in got] == ["skills.b", "skills"]


def test_a_run_context_names_the_bad_key_not_the_union() -> None:
    with pytest.raises(APCError) as caught:
        compiler.compile_string("<<agent.chat.history>>", context={"skills": {"str": 5}})
    assert caught.value.path == "skills.str"
    assert "valid string, or" not in caught.value.message


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    need: int


class Outer(BaseModel):
    value: str | Inner | int


def test_a_union_s_merged_type_errors_keep_the_other_diagnostics() -> None:
    data = {"value": {"other": 1}}
    with pytest.raises(ValidationError) as caught:
        Outer.model_validate(data)
    found = diagnostics_from(caught.value, Outer, codes=CODES, data=data)
    # the model member's missing and unknown fields are not swallowed by the merge of the
    # str and int members' type errors (which come before and after them)
    assert sorted(d.code for d in found) == ["t.invalid", "t.invalid", "t.missing", "t.unknown"]
    assert [d.message for d in found if d.code == "t.invalid"] == [
        "field 'value': Input should be a valid string",
        "field 'value': Input should be a valid integer",
    ]
