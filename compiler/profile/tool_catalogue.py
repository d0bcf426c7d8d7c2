"""The tool catalogue: the known tools, glob patterns over tool names, provider aliases, and
the one computation of tool visibility. Below both :mod:`compiler.profile` (which resolves a
profile's tool lists with it) and :mod:`compiler.policy` (whose run gate and resource
patterns use it); it imports nothing of the compiler but its errors.

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
to a run. The one run-time enforcement point is
:meth:`compiler.policy.tools.ToolGate.check_call`; build the gate
from what was compiled (:meth:`compiler._driver.api.CompileResult.tool_gate`) so that it admits
exactly the tools the model was offered (:class:`compiler.policy.tools.ToolGate`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Literal, Protocol

from compiler._records import record
from compiler.errors import Diagnostic, did_you_mean

__all__ = [
    "KNOWN_TOOLS",
    "RUNTIME_ONLY_TOOLS",
    "ToolPatterns",
    "ToolPolicyResult",
    "ToolRules",
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

ToolMode = Literal["conservative", "permissive"]


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
    """True when any of the tool ``patterns`` matches ``tool`` (see :func:`tool_matches`);
    to test many tools against one list, compile it once (:class:`ToolPatterns`)."""
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


@record(frozen=True)
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


class ToolPatterns:
    """A list of tool patterns compiled once, to test many tools against (the same answers
    as :func:`tool_matches_any`): a pattern with no wildcard is compared by set membership,
    one whose only wildcard is a trailing ``*`` by prefix, any other by its regex."""

    __slots__ = ("_exact", "_prefixes", "_regexes")

    def __init__(self, patterns: Iterable[str]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        regexes: list[re.Pattern[str]] = []
        for pattern in patterns:
            form = to_provider_name(pattern)
            star = form.endswith("*")
            head = form[:-1] if star else form
            if "*" in head or "?" in head:
                regexes.append(_compile(form))
            elif star:
                prefixes.append(head)
            else:
                exact.add(form)
        self._exact = frozenset(exact)
        self._prefixes = tuple(prefixes)
        self._regexes = tuple(regexes)

    def matches(self, tool: str) -> bool:
        """True when any of the patterns matches ``tool`` (see :func:`tool_matches`)."""
        return self.matches_name(to_provider_name(tool).lower())

    def matches_name(self, name: str) -> bool:
        """:meth:`matches` of a tool already in its compared form (provider name, lowercase)."""
        if name in self._exact:
            return True
        # ``*`` is ``[^\n]*``: a prefix pattern admits no newline after its prefix
        for prefix in self._prefixes:
            if name.startswith(prefix) and "\n" not in name[len(prefix) :]:
                return True
        return any(regex.fullmatch(name) is not None for regex in self._regexes)


def _matches_some(pattern: str, names: frozenset[str]) -> bool:
    """True when the tool ``pattern`` matches one of ``names`` (compared forms)."""
    form = to_provider_name(pattern)
    if "*" not in form and "?" not in form:
        return form in names
    regex = _compile(form)
    return any(regex.fullmatch(name) is not None for name in names)


def evaluate_tool_policy(
    *,
    allow: Sequence[str],
    deny: Sequence[str],
    require_approval: Sequence[str] = (),
    mode: ToolMode = "conservative",
    known: Sequence[str] = KNOWN_TOOLS,
    ceiling: Sequence[str] | None = None,
    path: str = "tools",
    file: str | None = None,
) -> ToolPolicyResult:
    """Visible and approval-required tools (in ``known`` order) and the allow warnings.

    ``ceiling`` (None: none) is an allow list nothing outside of which is visible, whatever
    ``mode`` says. Patterns match by provider name (:func:`tool_matches`); each list is
    compiled once (:class:`ToolPatterns`) and each tool's compared form made once.
    """
    names = [(tool, to_provider_name(tool).lower()) for tool in known]
    compared = frozenset(name for _, name in names)
    warnings: list[Diagnostic] = []
    for index, pattern in enumerate(allow):
        if not _matches_some(pattern, compared):
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
    denied, allowed = ToolPatterns(deny), ToolPatterns(allow)
    bound = ToolPatterns(ceiling) if ceiling is not None else None
    visible = [
        (tool, name)
        for tool, name in names
        if not denied.matches_name(name)
        and (mode == "permissive" or allowed.matches_name(name))
        and (bound is None or bound.matches_name(name))
    ]
    approving = ToolPatterns(require_approval)
    approval = tuple(tool for tool, name in visible if approving.matches_name(name))
    return ToolPolicyResult(
        visible=tuple(tool for tool, _ in visible),
        approval_required=approval,
        warnings=tuple(warnings),
    )


class ToolRules(Protocol):
    """What visibility reads of a tool policy (a profile's ``ToolPolicy`` has these fields; a
    resolved one also ``user_allow``, read when present)."""

    @property
    def allow(self) -> Sequence[str]: ...
    @property
    def deny(self) -> Sequence[str]: ...
    @property
    def require_approval(self) -> Sequence[str]: ...
    @property
    def mode(self) -> ToolMode: ...


def visible_tools(
    policy: ToolRules,
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
