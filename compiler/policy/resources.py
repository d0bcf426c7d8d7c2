"""Visible resource policy (seed section 7): which resources a macro may put in the prompt.

Internal: the public names are :class:`compiler.ToolGate` and :class:`compiler.PlatformPolicy`.

Resource ids are dotted: ``chat.history``, ``chat.history.tail``, ``world.activated``,
``character.instructions``, ``user.profile``, ``workspace.<root>[.<subpath>]``,
``workspace.scratch.private``, ``agent.plan``, ``agent.tool_results``, ``agent.diff``,
``skill.<name>``, ``user.secrets``, ``mcp.resource.*``.

A pattern (a glob: ``*`` matches anything, dots included) covers a resource when it matches
the id or one of its ancestors, so ``workspace.output`` covers
``workspace.output.drafts``. A resource is visible when some include pattern covers it and
no exclude pattern does; exclude always wins. ``chat.history.tail`` in include makes the
chat history visible as a tail window (the newest messages the budget keeps, never the
whole history). :meth:`VisibleResourcePolicy.require` is the one enforcing function; a
rejection is ``policy.resource_hidden`` (a failure, not a skip).
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler._records import record
from compiler.errors import PolicyError
from compiler.profile.tool_catalogue import matches


def _ancestors(resource: str) -> list[str]:
    parts = resource.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def covers(patterns: Sequence[str], resource: str) -> bool:
    """Whether a pattern matches ``resource`` or one of its dotted ancestors."""
    return any(matches(p, a) for p in patterns for a in _ancestors(resource))


@record(frozen=True)
class VisibleResourcePolicy:
    """Include and exclude patterns over resource ids, plus the visible workspace roots."""

    include: tuple[str, ...] = ("*",)
    exclude: tuple[str, ...] = ()
    visible_roots: tuple[str, ...] | None = None
    #: a plan node's ``visibleFiles`` (as resource patterns): workspace files outside them
    #: are hidden too (None: no node narrows the workspace)
    workspace_only: tuple[str, ...] | None = None

    def is_visible(self, resource: str) -> bool:
        if covers(self.exclude, resource):
            return False
        only = self.workspace_only
        if only is not None and resource.startswith("workspace.") and not covers(only, resource):
            return False
        if resource.startswith("workspace.") and self.visible_roots is not None:
            root = resource.split(".")[1]
            if root not in self.visible_roots:
                return False
        if covers(self.include, resource):
            return True
        # chat.history.tail grants the history macro a tail window
        return resource == "chat.history" and covers(self.include, "chat.history.tail")

    def window(self, resource: str) -> str | None:
        """``"tail"`` when only the tail of the chat history is visible."""
        if resource == "chat.history" and not covers(self.include, resource):
            return "tail"
        return None

    def require(self, resource: str, *, what: str, where: str | None = None) -> None:
        """Raise ``policy.resource_hidden`` unless ``resource`` is visible."""
        if self.is_visible(resource):
            return
        raise PolicyError(
            code="policy.resource_hidden",
            message=f"{what} reads the hidden resource '{resource}'",
            hint="the profile's context.include/exclude (or workspace.visibleRoots) hides it",
            file=where,
        )
