"""The run-time tool gate: the one enforcement point of the tool policy while a run calls tools.

Internal: the public names are :class:`compiler.ToolGate` and :class:`compiler.PlatformPolicy`.

Which tools are visible is computed by :func:`~compiler.profile.tool_catalogue.visible_tools`;
the gate reads only the tool fields of a resolved profile (:class:`GatedProfile`), so this
module does not depend on :mod:`compiler.profile`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from compiler.errors import PolicyError, did_you_mean
from compiler.profile.tool_catalogue import ToolRules, to_provider_name, visible_tools

if TYPE_CHECKING:
    from compiler._base.frame import ToolSpec

__all__ = ["GatedProfile", "GatedTools", "ToolCallStatus", "ToolGate"]

ToolCallStatus = Literal["allowed", "approval_required"]


class GatedTools(ToolRules, Protocol):
    """The tool fields of a resolved profile the gate reads (``ResolvedToolPolicy``)."""

    @property
    def visible(self) -> Sequence[str]: ...
    @property
    def user_allow(self) -> Sequence[str] | None: ...
    @property
    def max_calls_per_run(self) -> int | None: ...
    @property
    def max_calls_per_tool(self) -> Mapping[str, int]: ...


class GatedProfile(Protocol):
    """What the gate reads of a resolved profile (``ResolvedAgentProfile`` has it)."""

    @property
    def tools(self) -> GatedTools: ...


class ToolGate:
    """The run-time check of every tool call against a resolved profile's tool policy.

    ``ToolGate(resolved)`` admits the profile's concrete ``visible`` tools; ``ToolGate(resolved,
    tools=offered)`` admits exactly the ``offered`` tool definitions (what a compiled request
    gave the model, see :meth:`compiler.CompileResult.tool_gate`), under their dotted names
    and the provider aliases the model saw. Either way a tool is admitted only when
    :func:`visible_tools` over the profile's policy also shows it, so a hand-edited list cannot
    widen the policy. ``maxCallsPerRun`` / ``maxCallsPerTool`` come from the profile. Every
    admitted call is counted; a gate lives for one run.
    """

    def __init__(self, resolved: GatedProfile, *, tools: Sequence[ToolSpec] | None = None) -> None:
        policy = resolved.tools
        if tools is None:
            listed = {name: to_provider_name(name) for name in policy.visible}
            marked: set[str] = set()
        else:
            listed = {t["name"]: t["alias"] for t in tools}
            marked = {t["name"] for t in tools if t.get("requireApproval")}
        result = visible_tools(policy, listed)
        allowed = set(result.visible)
        self.visible: tuple[str, ...] = tuple(name for name in listed if name in allowed)
        self.aliases: dict[str, str] = {listed[name]: name for name in self.visible}
        self.approval_required: frozenset[str] = frozenset(
            name for name in self.visible if name in marked or name in result.approval_required
        )
        self.max_calls_per_run: int | None = policy.max_calls_per_run
        self.max_calls_per_tool: dict[str, int] = dict(policy.max_calls_per_tool)
        self.calls: Counter[str] = Counter()

    @property
    def total_calls(self) -> int:
        """Calls counted so far in this run."""
        return sum(self.calls.values())

    def _name(self, tool: str) -> str | None:
        if tool in self.visible:
            return tool
        return self.aliases.get(tool)

    def check_call(self, tool: str) -> ToolCallStatus:
        """Admit one call of ``tool`` (dotted or provider alias) and count it.

        Raises :class:`PolicyError` ``tool.policy_denied`` for a tool that is not visible, and
        ``agent.tool_budget_exhausted`` when the run or per-tool budget is spent.
        """
        name = self._name(tool)
        if name is None:
            raise PolicyError(
                code="tool.policy_denied",
                message=f"tool '{tool}' is not visible to this profile",
                hint=did_you_mean(tool, [*self.visible, *self.aliases]),
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
