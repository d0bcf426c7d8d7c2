"""The public API: a curated, sorted __all__ whose every name imports."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import compiler


def test_all_is_sorted_and_importable() -> None:
    assert compiler.__all__ == sorted(compiler.__all__, key=lambda n: (n[0].islower(), n))
    for name in compiler.__all__:
        assert getattr(compiler, name) is not None


def test_tool_gate_from_the_public_api() -> None:
    profile = compiler.resolve_profile(run={"tools": {"maxCallsPerTool": {"chat.search": 1}}})
    gate = compiler.ToolGate(profile)
    assert gate.check_call("chat.search") == "allowed"
    with pytest.raises(compiler.PolicyError) as info:
        gate.check_call("chat.search")
    assert info.value.code == "agent.tool_budget_exhausted"
    with pytest.raises(compiler.PolicyError) as denied:
        gate.check_call("shell.exec")
    assert denied.value.code == "tool.policy_denied"


def test_compile_takes_a_path_and_compile_string_takes_text(tmp_path: Path) -> None:
    with pytest.raises(compiler.ContextError) as info:
        compiler.compile("Hello <<agent.plan>>", context={"plan": "p"})
    assert info.value.code == "context.file_not_found"
    assert info.value.hint is not None and "compile_string" in info.value.hint
    text = compiler.compile_string("Hello <<agent.plan>>", context={"plan": "p"})
    (tmp_path / "t.txt").write_text("Hello <<agent.plan>>")
    assert compiler.compile(tmp_path / "t.txt", context={"plan": "p"}).request == text.request
    assert compiler.compile(str(tmp_path / "t.txt"), context={"plan": "p"}).request == text.request


def test_preset_text_compiles_as_a_preset_only_when_asked(tmp_path: Path) -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "content": "Be kind."},
            {"identifier": "chatHistory", "marker": True},
        ]
    }
    ctx = {"chat": [{"role": "user", "content": "hi"}]}
    as_preset = compiler.compile_string(json.dumps(preset), kind="preset", context=ctx)
    assert [m["content"] for m in as_preset.request["messages"]] == ["Be kind.", "hi"]
    as_text = compiler.compile_string(json.dumps(preset), context=ctx)  # a template: as written
    assert as_text.request["messages"][0]["content"] == json.dumps(preset)
    (tmp_path / "p.json").write_text(json.dumps(preset))
    assert compiler.compile(tmp_path / "p.json", context=ctx).request == as_preset.request
    with pytest.raises(compiler.ContextError) as info:
        compiler.compile_string("{not json", kind="preset")
    assert info.value.code == "context.invalid_json"


def test_one_options_object_with_keyword_overrides() -> None:
    from typing import get_type_hints

    from compiler.options import OptionFields

    options = compiler.CompileOptions(budget=60, model="gpt-4o-mini")
    chat = {"chat": [{"role": "user", "content": f"message {i} " * 5} for i in range(40)]}
    small = compiler.compile_string("S <<agent.chat.history>>", context=chat, options=options)
    assert small.ledger.total_tokens <= 60
    bigger = compiler.compile_string(
        "S <<agent.chat.history>>", context=chat, options=options, budget=200
    )
    assert 60 < bigger.ledger.total_tokens <= 200 and options.budget == 60  # frozen
    with pytest.raises(TypeError, match="budgte"):
        compiler.compile_string("S", options=options, budgte=3)  # type: ignore[call-arg]
    fields = {f.name for f in dataclasses.fields(compiler.CompileOptions)}
    assert set(get_type_hints(OptionFields)) == fields  # the keyword spelling cannot drift
