"""The public API: a curated, sorted __all__ whose every name imports."""

from __future__ import annotations

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
