"""Tool policy: the known tools, glob patterns over tool names, visibility and the run gate.

Patterns are globs over dotted tool names. ``*`` matches any run of characters *including*
dots, so ``workspace.*`` matches ``workspace.read_file`` and ``mcp.*`` matches the nested
``mcp.github.search``; ``?`` matches one character; every other character is literal
(``[`` included). Matching is case-sensitive; tool names are lowercase.

A tool's identity is the provider name the model sees and calls (``.`` becomes ``_``), so a
tool pattern is compared by its provider form too (:func:`tool_matches`): ``.`` and ``_`` are
the same character in a tool pattern. ``workspace_write_file`` denies ``workspace.write_file``,
``workspace_*`` covers every ``workspace.*`` tool, and ``mcp.*`` covers a run tool named
``mcp_search``; a deny written with the provider alias never misses. (Resource and skill
patterns use the plain :func:`matches`.) When a profile is resolved, an exact provider alias
of a known tool in its tool lists and tool-keyed maps is also rewritten to the dotted name
(:func:`canonical_tool_name`, warning ``agent.profile_tool_alias``), so that
``maxCallsPerTool`` and ``toolDescriptions`` keys reach their tool.

Evaluation (seed section 6): deny beats allow; ``requireApproval`` is not deny; in the
conservative mode (the default) a tool no allow pattern matches is invisible, in the
permissive mode every known tool not denied is visible. A ``ceiling`` (the user layer's own
allow list, :attr:`ResolvedToolPolicy.user_allow`) bounds visibility whatever the mode or a
later layer says. An allow pattern that matches no known tool is a warning
(``agent.profile_unknown_tool``); a deny or approval pattern that matches nothing is fine
(defensive).

:func:`visible_tools` is the one place visibility is computed: over the known tools when a
profile is resolved, over the known plus the run's own tools when a compile binds the profile
to a run. The one run-time enforcement point is :meth:`ToolGate.check_call`; build the gate
from what was compiled (:meth:`compiler.api.CompileResult.tool_gate`) so that it admits
exactly the tools the model was offered.
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
    from compiler.frame import ToolSpec
    from compiler.profile.models import ToolPolicy
    from compiler.profile.resolve import ResolvedAgentProfile

__all__ = [
    "KNOWN_TOOLS",
    "RUNTIME_ONLY_TOOLS",
    "ToolCallStatus",
    "ToolGate",
    "ToolPolicyResult",
    "canonical_tool_name",
    "evaluate_tool_policy",
    "from_provider_name",
    "matches",
    "matches_any",
    "to_provider_name",
    "tool_matches",
    "tool_matches_any",
    "unmatched_allow_pattern",
    "visible_tools",
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


def tool_matches(pattern: str, tool: str) -> bool:
    """True when the tool ``pattern`` matches ``tool``, compared by provider name.

    ``.`` and ``_`` are the same character here: the provider alias is the name the model
    calls, so ``workspace_write_file`` and ``workspace_*`` cover ``workspace.write_file``.
    Patterns are lowercase; a run's tool name is compared lowercased, so ``mcp.*`` also
    covers a run tool named ``Mcp.Exec``.
    Every dotted match is also a match here (the provider form only adds matches).
    """
    return matches(to_provider_name(pattern), to_provider_name(tool).lower())


def tool_matches_any(patterns: Iterable[str], tool: str) -> bool:
    """True when any of the tool ``patterns`` matches ``tool`` (see :func:`tool_matches`)."""
    return any(tool_matches(p, tool) for p in patterns)


def from_provider_name(alias: str, known: Iterable[str] = KNOWN_TOOLS) -> str | None:
    """The dotted tool name behind a provider alias (or a dotted name), or None if unknown."""
    for tool in known:
        if alias in (tool, to_provider_name(tool)):
            return tool
    return None


def canonical_tool_name(
    name: str, known: Iterable[str] = (*KNOWN_TOOLS, *sorted(RUNTIME_ONLY_TOOLS))
) -> str:
    """``name`` written as a dotted tool name: a provider alias of a ``known`` tool
    (``workspace_write_file``) becomes that tool's name; anything else is returned as is."""
    if "." in name or "*" in name or "?" in name:
        return name
    return from_provider_name(name, known) or name


@dataclass(frozen=True)
class ToolPolicyResult:
    """The concrete outcome of a tool policy over a set of known tools."""

    visible: tuple[str, ...]
    approval_required: tuple[str, ...]
    warnings: tuple[Diagnostic, ...] = ()


_UNMATCHED_ALLOW = "allow pattern '{pattern}' matches no known tool"
_UNMATCHED_ALLOW_RE = re.compile("allow pattern '(.*)' matches no known tool")


def unmatched_allow_pattern(diagnostic: Diagnostic) -> str | None:
    """The pattern of an "allow pattern matches no known tool" warning, else None."""
    if diagnostic.code != "agent.profile_unknown_tool" or diagnostic.severity != "warning":
        return None
    found = _UNMATCHED_ALLOW_RE.fullmatch(diagnostic.message)
    return found.group(1) if found else None


def evaluate_tool_policy(
    *,
    allow: Sequence[str],
    deny: Sequence[str],
    require_approval: Sequence[str] = (),
    mode: Literal["conservative", "permissive"] = "conservative",
    known: Sequence[str] = KNOWN_TOOLS,
    ceiling: Sequence[str] | None = None,
    path: str = "tools",
    file: str | None = None,
) -> ToolPolicyResult:
    """Visible and approval-required tools (in ``known`` order) and the allow warnings.

    ``ceiling`` (None: none) is an allow list nothing outside of which is visible, whatever
    ``mode`` says. Patterns match by provider name (:func:`tool_matches`).
    """
    warnings: list[Diagnostic] = []
    for index, pattern in enumerate(allow):
        if not any(tool_matches(pattern, tool) for tool in known):
            warnings.append(
                Diagnostic(
                    code="agent.profile_unknown_tool",
                    message=_UNMATCHED_ALLOW.format(pattern=pattern),
                    severity="warning",
                    hint=did_you_mean(pattern, list(known)),
                    path=f"{path}.allow[{index}]",
                    file=file,
                )
            )
    visible = tuple(
        tool
        for tool in known
        if not tool_matches_any(deny, tool)
        and (mode == "permissive" or tool_matches_any(allow, tool))
        and (ceiling is None or tool_matches_any(ceiling, tool))
    )
    approval = tuple(tool for tool in visible if tool_matches_any(require_approval, tool))
    return ToolPolicyResult(visible=visible, approval_required=approval, warnings=tuple(warnings))


def visible_tools(
    policy: ToolPolicy,
    run_tools: Iterable[str] = (),
    *,
    ceiling: Sequence[str] | None = None,
    path: str = "tools",
    file: str | None = None,
) -> ToolPolicyResult:
    """The one computation of tool visibility: ``policy`` over the known tools plus the run's
    own ``run_tools`` (the known ones first in catalogue order, then the run's in its order).

    ``ceiling`` defaults to the policy's ``user_allow`` (a resolved profile's user allow list).
    """
    if ceiling is None:
        ceiling = getattr(policy, "user_allow", None)
    return evaluate_tool_policy(
        allow=policy.allow,
        deny=policy.deny,
        require_approval=policy.require_approval,
        mode=policy.mode,
        known=tuple(dict.fromkeys([*KNOWN_TOOLS, *run_tools])),
        ceiling=ceiling,
        path=path,
        file=file,
    )


class ToolGate:
    """The run-time check of every tool call against a resolved profile's tool policy.

    ``ToolGate(resolved)`` admits the profile's concrete ``visible`` tools; ``ToolGate(resolved,
    tools=offered)`` admits exactly the ``offered`` tool definitions (what a compiled request
    gave the model, see :meth:`compiler.api.CompileResult.tool_gate`), under their dotted names
    and the provider aliases the model saw. Either way a tool is admitted only when
    :func:`visible_tools` over the profile's policy also shows it, so a hand-edited list cannot
    widen the policy. ``maxCallsPerRun`` / ``maxCallsPerTool`` come from the profile. Every
    admitted call is counted; a gate lives for one run.
    """

    def __init__(
        self, resolved: ResolvedAgentProfile, *, tools: Sequence[ToolSpec] | None = None
    ) -> None:
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
