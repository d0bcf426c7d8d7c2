"""Profile switch checks (seed section 10).

Internal: the API is :mod:`compiler.profile`.

A switch request comes from a plan node, the model, runtime policy or the user. It is checked
in this order, and the first failing check is the reason it is denied:

1. ``node_disallows``: a strict plan node with a ``profileId`` admits only that profile; a
   strict node without one admits none (the guard also reports this as a plan violation);
2. ``switch_disabled`` / ``target_not_allowed``: otherwise the target must be the current
   node's ``profileId``, or the current profile's ``switch`` policy must be enabled and list
   the target in ``allowedProfiles``;
3. ``target_not_found``: no layer defines the target;
4. ``target_invalid``: the target does not resolve through the run's layers and the platform
   policy (a creator limit, a disabled provider, a tool outside the user's allow list ...);
5. ``budget_exhausted``: the run already made ``maxSwitchesPerRun`` switches of its own (the
   budget of the profile the run started with). A switch to the profile the current node
   names is the plan's, granted by the plan: it needs no ``switch`` policy and is not counted.
"""

from __future__ import annotations

from typing import Literal

from compiler._records import record
from compiler.errors import ProfileError
from compiler.policy.plan import ProfileLookup
from compiler.profile.models import PlanNode
from compiler.profile.resolve import ResolvedAgentProfile

__all__ = ["SwitchOutcome", "SwitchSource", "check_switch"]

SwitchSource = Literal["plan", "model", "runtime", "user"]


@record(frozen=True)
class SwitchOutcome:
    """A granted switch (``profile`` set) or a denied one (``reason`` and ``message`` set)."""

    profile: ResolvedAgentProfile | None = None
    reason: str | None = None
    message: str | None = None
    code: str | None = None  # the resolution error's code, for ``target_invalid``


def check_switch(
    target: str,
    *,
    current: ResolvedAgentProfile,
    node: PlanNode | None,
    node_strict: bool,
    lookup: ProfileLookup | None,
    switches: int,
    budget: int,
) -> SwitchOutcome:
    """Check one switch to ``target`` (see the module docstring for the order)."""
    if node is not None and node_strict and node.profile_id != target:
        allowed = f"only '{node.profile_id}'" if node.profile_id else "no profile switch"
        return SwitchOutcome(
            reason="node_disallows",
            message=f"plan node '{node.id}' allows {allowed}, not '{target}'",
        )
    named_by_node = node is not None and node.profile_id == target
    if not named_by_node:
        if not current.switch.enabled:
            return SwitchOutcome(
                reason="switch_disabled",
                message=f"profile '{current.id}' does not allow profile switches",
            )
        if target not in current.switch.allowed_profiles:
            return SwitchOutcome(
                reason="target_not_allowed",
                message=f"profile '{current.id}' does not list '{target}' in "
                "switch.allowedProfiles",
            )
    if lookup is None:
        return SwitchOutcome(
            reason="target_not_found", message=f"profile '{target}' cannot be looked up"
        )
    try:
        resolved = lookup(target)
    except ProfileError as exc:
        reason = "target_not_found" if exc.code == "agent.profile_not_found" else "target_invalid"
        return SwitchOutcome(reason=reason, message=exc.message, code=exc.code)
    if not named_by_node and switches >= budget:
        return SwitchOutcome(
            reason="budget_exhausted",
            message=f"the run has used all {budget} of its profile switches",
        )
    return SwitchOutcome(profile=resolved)
