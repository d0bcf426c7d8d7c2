"""Policies the pipeline stages call: tool policy (and, later, resources, plan, switch)."""

from __future__ import annotations

from compiler.policy.tools import (
    KNOWN_TOOLS,
    RUNTIME_ONLY_TOOLS,
    ToolCallStatus,
    ToolGate,
    ToolPolicyResult,
    evaluate_tool_policy,
    from_provider_name,
    matches,
    matches_any,
    to_provider_name,
)

__all__ = [
    "KNOWN_TOOLS",
    "RUNTIME_ONLY_TOOLS",
    "ToolCallStatus",
    "ToolGate",
    "ToolPolicyResult",
    "evaluate_tool_policy",
    "from_provider_name",
    "matches",
    "matches_any",
    "to_provider_name",
]
