"""Tool policy: the known tools, glob patterns over dotted names, visibility and the run gate.

Patterns are globs over dotted tool names. ``*`` matches any run of characters *including*
dots, so ``workspace.*`` matches ``workspace.read_file`` and ``mcp.*`` matches the nested
``mcp.github.search``; ``?`` matches one character; every other character is literal
(``[`` included). Matching is case-sensitive; tool names are lowercase.

Evaluation (seed section 6): deny beats allow; ``requireApproval`` is not deny; in the
conservative mode (the default) a tool no allow pattern matches is invisible, in the
permissive mode every known tool not denied is visible. An allow pattern that matches no known
tool is a warning (``agent.profile_unknown_tool``); a deny or approval pattern that matches
nothing is fine (defensive).

The one run-time enforcement point is :meth:`ToolGate.check_call`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from compiler.errors import Diagnostic, PolicyError, did_you_mean

if TYPE_CHECKING:
    from compiler.profile.resolve import ResolvedAgentProfile

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

KNOWN_TOOLS: tuple[str, ...] = (
    "agent.list",
    "agent.delegate",
    "agent.handoff",
    "agent.await",
    "chat.search",
    "chat.read_messages",
    "worldinfo.read_activated",
    "dice.roll",
    "skill.list",
    "skill.search",
    "skill.read",
    "workspace.list_files",
    "workspace.search_files",
    "workspace.read_file",
    "workspace.write_file",
    "workspace.apply_patch",
    "workspace.commit",
    "workspace.finish",
)
"""The tools a profile may list, in catalogue order (the order of ``visible``)."""

RUNTIME_ONLY_TOOLS: frozenset[str] = frozenset({"task.return"})
"""Tools the runtime adds itself; a profile may not list them."""

ToolCallStatus = Literal["allowed", "approval_required"]


@functools.lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    parts = ["[^\n]*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern]
    return re.compile("".join(parts))


def matches(pattern: str, tool: str) -> bool:
    """True when the glob ``pattern`` matches the whole dotted ``tool`` name."""
    return _compile(pattern).fullmatch(tool) is not None


def matches_any(patterns: Iterable[str], tool: str) -> bool:
    """True when any of ``patterns`` matches ``tool``."""
    return any(matches(p, tool) for p in patterns)


def to_provider_name(tool: str) -> str:
    """The provider-facing alias: providers reject dots, so ``.`` becomes ``_``."""
    return tool.replace(".", "_")


def from_provider_name(alias: str, known: Iterable[str] = KNOWN_TOOLS) -> str | None:
    """The dotted tool name behind a provider alias (or a dotted name), or None if unknown."""
    for tool in known:
        if alias in (tool, to_provider_name(tool)):
            return tool
    return None


@dataclass(frozen=True)
class ToolPolicyResult:
    """The concrete outcome of a tool policy over a set of known tools."""

    visible: tuple[str, ...]
    approval_required: tuple[str, ...]
    warnings: tuple[Diagnostic, ...] = ()


def evaluate_tool_policy(
    *,
    allow: Sequence[str],
    deny: Sequence[str],
    require_approval: Sequence[str] = (),
    mode: Literal["conservative", "permissive"] = "conservative",
    known: Sequence[str] = KNOWN_TOOLS,
    path: str = "tools",
    file: str | None = None,
) -> ToolPolicyResult:
    """Visible and approval-required tools (in ``known`` order) and the allow warnings."""
    warnings: list[Diagnostic] = []
    for index, pattern in enumerate(allow):
        if not any(matches(pattern, tool) for tool in known):
            warnings.append(
                Diagnostic(
                    code="agent.profile_unknown_tool",
                    message=f"allow pattern '{pattern}' matches no known tool",
                    severity="warning",
                    hint=did_you_mean(pattern, list(known)),
                    path=f"{path}.allow[{index}]",
                    file=file,
                )
            )
    visible = tuple(
        tool
        for tool in known
        if not matches_any(deny, tool) and (mode == "permissive" or matches_any(allow, tool))
    )
    approval = tuple(tool for tool in visible if matches_any(require_approval, tool))
    return ToolPolicyResult(visible=visible, approval_required=approval, warnings=tuple(warnings))


class ToolGate:
    """The run-time check of every tool call against a resolved profile's tool policy.

    ``ToolGate(resolved)`` takes the profile's concrete ``visible`` and ``approvalRequired``
    tool lists and its ``maxCallsPerRun`` / ``maxCallsPerTool`` budgets. Every admitted call is
    counted; a gate lives for one run.
    """

    def __init__(self, resolved: ResolvedAgentProfile) -> None:
        tools = resolved.tools
        self.visible: tuple[str, ...] = tuple(tools.visible)
        self.approval_required: frozenset[str] = frozenset(tools.approval_required)
        self.max_calls_per_run: int | None = tools.max_calls_per_run
        self.max_calls_per_tool: dict[str, int] = dict(tools.max_calls_per_tool)
        self.calls: Counter[str] = Counter()

    @property
    def total_calls(self) -> int:
        """Calls counted so far in this run."""
        return sum(self.calls.values())

    def check_call(self, tool: str) -> ToolCallStatus:
        """Admit one call of ``tool`` (dotted or provider alias) and count it.

        Raises :class:`PolicyError` ``tool.policy_denied`` for a tool that is not visible, and
        ``agent.tool_budget_exhausted`` when the run or per-tool budget is spent.
        """
        name = from_provider_name(tool, self.visible)
        if name is None:
            raise PolicyError(
                code="tool.policy_denied",
                message=f"tool '{tool}' is not visible to this profile",
                hint=did_you_mean(tool, list(self.visible)),
            )
        if self.max_calls_per_run is not None and self.total_calls >= self.max_calls_per_run:
            raise PolicyError(
                code="agent.tool_budget_exhausted",
                message=f"the run has used all {self.max_calls_per_run} tool calls",
                path="tools.maxCallsPerRun",
            )
        limit = self.max_calls_per_tool.get(name)
        if limit is not None and self.calls[name] >= limit:
            raise PolicyError(
                code="agent.tool_budget_exhausted",
                message=f"tool '{name}' has used all {limit} of its calls",
                path=f'tools.maxCallsPerTool["{name}"]',
            )
        self.calls[name] += 1
        return "approval_required" if name in self.approval_required else "allowed"
