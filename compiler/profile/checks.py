"""The rules that check a merged profile: workspace roots, output artifacts, tools, budgets.

Internal: the API is :mod:`compiler.profile`.

They relate fields, so they run once, on the merged profile
(:func:`compiler.profile.resolve.merge_layers`), never on one layer's fragment. Their
diagnostics carry the JSON path inside the merged profile; the merge points them at the file
of the layer that set the offending field.
"""

from __future__ import annotations

import re

from pydantic.alias_generators import to_snake

from compiler.errors import Diagnostic, did_you_mean
from compiler.profile.models import WORKSPACE_ROOTS, AgentProfile, format_path
from compiler.profile.tool_catalogue import (
    KNOWN_TOOLS,
    RUNTIME_ONLY_TOOLS,
    ToolPolicyResult,
    visible_tools,
)

__all__ = ["OUTPUT_WRITERS", "check_merged", "normalize_workspace_path"]

OUTPUT_WRITERS = ("workspace.write_file", "workspace.apply_patch")
"""Tools that can create the message body artifact; at least one must be visible."""

_BUDGETS = (
    "historyBudgetTokens",
    "workspaceFileBudgetTokens",
    "toolResultBudgetTokens",
    "skillBudgetTokens",
    "worldInfoBudgetTokens",
    "summaryBudgetTokens",
)


def _err(code: str, message: str, path: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, message=message, path=path, hint=hint)


def _warn(code: str, message: str, path: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, message=message, path=path, hint=hint, severity="warning")


def normalize_workspace_path(path: str) -> str | None:
    """``path`` with ``\\`` as ``/``, or None when it is not a safe relative workspace path."""
    norm = path.replace("\\", "/")
    if "\0" in norm or norm.startswith("/") or re.match(r"^[A-Za-z]:", norm):
        return None
    parts = norm.split("/")
    if any(p in ("", ".", "..") for p in parts) or len(parts) < 2:
        return None
    return norm


def check_merged(
    profile: AgentProfile, user_allow: list[str] | None = None
) -> tuple[list[Diagnostic], list[Diagnostic], ToolPolicyResult]:
    """The errors and warnings of the merged ``profile``, and its tool outcome (visible
    tools within ``user_allow``, the user layer's own allow list, when it sets one)."""
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    errors += _check_workspace(profile)
    errors += _check_output(profile)
    tool_errors, tool_warnings, result = _check_tools(profile, user_allow)
    errors += tool_errors
    warnings += tool_warnings
    total = profile.context.total_context_budget
    if total is not None:
        for name in _BUDGETS:
            value = getattr(profile.context, to_snake(name))
            if value is not None and value > total:
                warnings.append(
                    _warn(
                        "agent.profile_budget_exceeds_total",
                        f"context.{name} ({value}) is larger than "
                        f"context.totalContextBudget ({total})",
                        f"context.{name}",
                    )
                )
    return errors, warnings, result


def _check_workspace(profile: AgentProfile) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    visible = profile.workspace.visible_roots
    for index, root in enumerate(visible):
        if root not in WORKSPACE_ROOTS:
            errors.append(
                _err(
                    "agent.profile_workspace_root_unknown",
                    f"workspace root '{root}' is not one of {', '.join(WORKSPACE_ROOTS)}",
                    f"workspace.visibleRoots[{index}]",
                    did_you_mean(root, WORKSPACE_ROOTS),
                )
            )
    for index, root in enumerate(profile.workspace.writable_roots):
        if root not in WORKSPACE_ROOTS:
            errors.append(
                _err(
                    "agent.profile_workspace_root_unknown",
                    f"workspace root '{root}' is not one of {', '.join(WORKSPACE_ROOTS)}",
                    f"workspace.writableRoots[{index}]",
                    did_you_mean(root, WORKSPACE_ROOTS),
                )
            )
        elif root not in visible:
            errors.append(
                _err(
                    "agent.profile_writable_root_not_visible",
                    f"writable root '{root}' is not in workspace.visibleRoots",
                    f"workspace.writableRoots[{index}]",
                )
            )
    return errors


def _check_output(profile: AgentProfile) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    writable = set(profile.workspace.writable_roots) & set(profile.workspace.visible_roots)
    ids: set[str] = set()
    paths: set[str] = set()
    bodies: list[int] = []
    for index, artifact in enumerate(profile.output.artifacts):
        at = f"output.artifacts[{index}]"
        if artifact.id in ids:
            errors.append(
                _err(
                    "agent.profile_artifact_duplicate_id",
                    f"artifact id '{artifact.id}' is used twice",
                    f"{at}.id",
                )
            )
        ids.add(artifact.id)
        if artifact.is_message_body:
            bodies.append(index)
        norm = normalize_workspace_path(artifact.path)
        if norm is None:
            errors.append(
                _err(
                    "workspace.path_invalid",
                    f"artifact path '{artifact.path}' must be a relative path 'root/file' "
                    "without '..', NUL or a drive prefix",
                    f"{at}.path",
                )
            )
            continue
        if norm in paths:
            errors.append(
                _err(
                    "agent.profile_artifact_duplicate_path",
                    f"artifact path '{norm}' is used twice",
                    f"{at}.path",
                )
            )
        paths.add(norm)
        root = norm.split("/", 1)[0]
        if root not in writable:
            errors.append(
                _err(
                    "agent.profile_artifact_root_not_writable",
                    f"artifact '{artifact.id}' is under '{root}', which is not a visible and "
                    "writable workspace root",
                    f"{at}.path",
                    did_you_mean(root, writable),
                )
            )
    if not bodies:
        errors.append(
            _err(
                "agent.profile_message_body_required",
                "output needs exactly one artifact with target 'messageBody'; it has none",
                "output.artifacts",
            )
        )
    for index in bodies[1:]:
        errors.append(
            _err(
                "agent.profile_message_body_duplicate",
                "output needs exactly one artifact with target 'messageBody'; "
                f"artifact '{profile.output.artifacts[index].id}' is another",
                f"output.artifacts[{index}].target",
            )
        )
    return errors


def _check_tools(
    profile: AgentProfile, user_allow: list[str] | None
) -> tuple[list[Diagnostic], list[Diagnostic], ToolPolicyResult]:
    tools = profile.tools
    errors: list[Diagnostic] = []
    for name in ("allow", "deny", "requireApproval"):
        for index, pattern in enumerate(getattr(tools, to_snake(name))):
            if pattern in RUNTIME_ONLY_TOOLS:
                errors.append(
                    _err(
                        "agent.profile_task_return_runtime_only",
                        f"'{pattern}' is added by the runtime and cannot be listed",
                        f"tools.{name}[{index}]",
                    )
                )
    result = visible_tools(tools, ceiling=user_allow)
    warnings = list(result.warnings)
    if not result.visible:
        ceiling = " (within the user's tools.allow)" if user_allow is not None else ""
        errors.append(
            _err(
                "agent.profile_tools_empty",
                f"no tool is visible: tools.allow matches no known tool{ceiling} that is not "
                "denied",
                "tools.allow",
            )
        )
    elif not any(tool in result.visible for tool in OUTPUT_WRITERS):
        errors.append(
            _err(
                "agent.profile_output_writer_required",
                "workspace.write_file (or workspace.apply_patch) must be visible so the agent "
                "can write the message body artifact",
                "tools",
            )
        )
    for field, invisible_code in (
        ("maxCallsPerTool", "agent.profile_tool_budget_invisible"),
        ("toolDescriptions", "agent.profile_tool_description_invisible"),
    ):
        for name in getattr(tools, to_snake(field)):
            at = format_path(("tools", field, name))
            if name not in KNOWN_TOOLS:
                errors.append(
                    _err(
                        "agent.profile_unknown_tool",
                        f"unknown tool '{name}' in tools.{field}",
                        at,
                        did_you_mean(name, KNOWN_TOOLS),
                    )
                )
            elif name not in result.visible:
                warnings.append(
                    _warn(invisible_code, f"tool '{name}' in tools.{field} is not visible", at)
                )
    return errors, warnings, result
