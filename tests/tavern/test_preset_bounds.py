"""A preset's entries are bounded before any is parsed: a huge inline preset through
``apc serve`` (870,000 prompts in 30 MB took 2.7 GiB and 74 s) is refused at once."""

from __future__ import annotations

import json

import pytest

import compiler
from compiler.errors import ContextError
from compiler.tavern import preset as preset_module
from compiler.tavern.preset import MAX_PROMPTS


def test_too_many_prompts_is_refused_before_any_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[int] = []
    original = preset_module._prompt
    monkeypatch.setattr(
        preset_module, "_prompt", lambda raw, i, *a: parsed.append(i) or original(raw, i, *a)
    )
    prompts = [{"identifier": f"p{i}", "content": ""} for i in range(MAX_PROMPTS + 1)]
    with pytest.raises(ContextError) as info:
        compiler.compile_string(json.dumps({"prompts": prompts}), kind="preset", context={})
    assert info.value.code == "context.preset_too_large"
    assert info.value.path == "prompts" and parsed == []


@pytest.mark.parametrize("where", ["outer", "inner"])
def test_too_long_a_prompt_order_is_refused(where: str) -> None:
    entries = [{"identifier": "main", "enabled": True}] * (MAX_PROMPTS + 1)
    order = (
        [{"character_id": 100001, "order": []}] * (MAX_PROMPTS + 1)
        if where == "outer"
        else [{"character_id": 100001, "order": entries}]
    )
    preset = {"prompts": [{"identifier": "main", "content": "Hi."}], "prompt_order": order}
    with pytest.raises(ContextError) as info:
        compiler.compile_string(json.dumps(preset), kind="preset", context={})
    assert info.value.code == "context.preset_too_large"
    assert info.value.path == ("prompt_order" if where == "outer" else "prompt_order[0].order")


def test_a_preset_at_the_bound_is_read() -> None:
    prompts = [{"identifier": f"p{i}", "content": ""} for i in range(MAX_PROMPTS)]
    prompts[0] = {"identifier": "main", "content": "Hi."}
    result = compiler.compile_string(
        json.dumps({"prompts": prompts}), kind="preset", context={"chat": []}
    )
    assert result.request["messages"]
