"""Policies the pipeline stages call over a resolved profile, one enforcing module each.

The plan policy's functions are public here (``apc plan`` is their command line); the tool
gate is :class:`compiler.ToolGate`. The names are imported on first use (as
:mod:`compiler`'s are), so importing one policy loads none of the others.

- :mod:`compiler.policy.tools`: the run-time tool gate (visibility itself is computed by
  :func:`compiler.profile.tool_catalogue.visible_tools`)
- :mod:`compiler.policy.resources`: visible resources (include/exclude, workspace roots)
- :mod:`compiler.policy.plan`, :mod:`compiler.policy.plan_guard`: the plan policy and the
  run-time guard of plan steps
- :mod:`compiler.policy.switch`: profile switching
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._base.lazy import lazy_exports

if TYPE_CHECKING:
    from compiler.policy.plan import ProfileLookup, check_plan, load_plan, node_tools
    from compiler.policy.plan_guard import Decision, PlanAction, PlanGuard
    from compiler.policy.tools import GatedProfile, GatedTools

_HOMES = {
    "compiler.policy.plan": "ProfileLookup check_plan load_plan node_tools",
    "compiler.policy.plan_guard": "Decision PlanAction PlanGuard",
    "compiler.policy.tools": "GatedProfile GatedTools",
}

__all__ = [
    "Decision",
    "GatedProfile",
    "GatedTools",
    "PlanAction",
    "PlanGuard",
    "ProfileLookup",
    "check_plan",
    "load_plan",
    "node_tools",
]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
