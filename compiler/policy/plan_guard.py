"""The plan guard: a pure state machine over a run's actions (seed sections 8 to 10).

Internal: the API is :mod:`compiler.profile`.

:class:`PlanGuard` is fed :class:`PlanAction`\\ s one at a time and answers ``allow``,
``approval_required`` or ``denied`` (a profile switch refused for a reason outside the plan),
or raises :class:`~compiler.errors.PolicyError` ``agent.policy_violation`` after a
``plan_policy_violation`` journal event. It does no I/O: its only effects are journal events
(``plan_created``, ``plan_updated``, ``plan_node_started``, ``plan_node_completed``,
``plan_approval_required``, ``profile_switch_requested``, ``profile_switched``,
``profile_switch_denied``). A refused action changes no state.

Rules (``rule`` in the violation's payload and ``details``):

- every mode: the global tool gate binds (``tool_policy``), artifacts go under a writable
  root (``path_not_writable``), nothing happens after ``finish`` (``run_finished``), a node
  runs at most its ``maxRounds`` tool calls (``max_rounds``), one node runs at a time and
  ends in ``complete_node`` (``node_in_progress``, ``node_not_active``), the run finishes
  with every required output artifact written (``manifest_incomplete``);
- ``free``: a plan must be created before any other action (``plan_required``);
- ``strict`` (every node) and the locked nodes of ``hybrid``: the plan is fixed
  (``plan_changed``; in hybrid only the locked nodes and their order are), nodes run in order
  (``node_order``) and none is skipped (``locked_skipped``), work happens inside a node
  (``no_active_node``), tools stay within the node's ``allowedTools`` (``tool_outside_node``),
  a profile switch goes only to the node's ``profileId`` (``profile_outside_node``), writes
  stay within the node's ``expectedArtifacts`` or the output policy's artifacts
  (``artifact_outside_node``), and a node completes only with its expected artifacts written
  (``artifact_missing``);
- ``none``: no plan, no nodes (``plan_disabled``); only the global rules bind.

A plan rule broken while the node concerned (the current one, or the one a ``start_node`` /
``complete_node`` names) has ``approvalRequired`` is ``approval_required`` instead of a
violation; so is a tool the profile marks ``requireApproval``. The action takes effect only
when it carries ``approved: true``. Global rules are never lifted by approval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, Literal, cast, get_args

from compiler._base.journal import Journal, Level
from compiler._records import record
from compiler.errors import ContextError, PolicyError
from compiler.policy.plan import ProfileLookup, check_plan, strict_node
from compiler.policy.switch import SwitchOutcome, SwitchSource, check_switch
from compiler.policy.tools import ToolGate
from compiler.profile.checks import normalize_workspace_path
from compiler.profile.models import PlanNode, PlanPolicy, ProfileValidationError, validate_model
from compiler.profile.resolve import ResolvedAgentProfile
from compiler.profile.tool_catalogue import tool_matches_any

__all__ = ["ActionKind", "Decision", "PlanAction", "PlanGuard"]

ActionKind = Literal[
    "create_plan",
    "update_plan",
    "start_node",
    "tool_call",
    "write_artifact",
    "switch_profile",
    "complete_node",
    "finish",
]
Decision = Literal["allow", "approval_required", "denied"]

_NEEDS: dict[str, str] = {
    "start_node": "node",
    "tool_call": "tool",
    "write_artifact": "path",
    "switch_profile": "profile",
}
_FIELDS = ("action", "node", "tool", "path", "profile", "plan", "source", "approved")


def _bad(message: str, path: str | None = None) -> ContextError:
    return ContextError(code="agent.plan_action_invalid", message=message, path=path)


@record(frozen=True)
class PlanAction:
    """One action of a run: ``{"action", "node", "tool", "path", "profile", "plan",
    "source", "approved"}`` with the fields the action needs."""

    action: ActionKind
    node: str | None = None
    tool: str | None = None
    path: str | None = None
    profile: str | None = None
    plan: dict[str, Any] | None = None
    source: SwitchSource = "model"
    approved: bool = False

    @classmethod
    def from_json(cls, data: Any) -> PlanAction:
        """An action from its JSON object; ``agent.plan_action_invalid`` when it is not one."""
        if not isinstance(data, Mapping):
            raise _bad("an action is a JSON object")
        for key in data:
            if key not in _FIELDS:
                raise _bad(f"unknown action field '{key}'", str(key))
        kind = data.get("action")
        if not isinstance(kind, str) or kind not in get_args(ActionKind):
            raise _bad(f"'action' must be one of {', '.join(get_args(ActionKind))}", "action")
        for key in ("node", "tool", "path", "profile"):
            if key in data and not (isinstance(data[key], str) and data[key]):
                raise _bad(f"'{key}' must be a non-empty string", key)
        need = _NEEDS.get(kind)
        if need and need not in data:
            raise _bad(f"action '{kind}' needs '{need}'", need)
        if "plan" in data and not isinstance(data["plan"], Mapping):
            raise _bad("'plan' must be an object", "plan")
        source = data.get("source", "model")
        if source not in get_args(SwitchSource):
            raise _bad("'source' must be one of plan, model, runtime, user", "source")
        if not isinstance(data.get("approved", False), bool):
            raise _bad("'approved' must be true or false", "approved")
        return cls(
            action=cast(ActionKind, kind),
            node=data.get("node"),
            tool=data.get("tool"),
            path=data.get("path"),
            profile=data.get("profile"),
            plan=dict(data["plan"]) if "plan" in data else None,
            source=source,
            approved=data.get("approved", False),
        )

    def to_json(self) -> dict[str, Any]:
        """The fields set, as JSON."""
        out: dict[str, Any] = {"action": self.action}
        for key in ("node", "tool", "path", "profile", "plan"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.action == "switch_profile":
            out["source"] = self.source
        if self.approved:
            out["approved"] = True
        return out


@record
class _Step:
    """What an action would do: its commit, the plan rules it breaks (which approval may
    lift), a global rule it breaks (which nothing lifts), a tool for the gate."""

    commit: Callable[[], None]
    problems: list[tuple[str, str]] = field(default_factory=list)
    hard: tuple[str, str] | None = None
    tool: str | None = None
    refuse: Callable[[], None] | None = None


class PlanGuard:
    """The run-time plan guard for one run (see the module docstring).

    ``plan`` defaults to the profile's own ``plan``; ``lookup`` resolves a profile id through
    the run's layers (node profiles, switch targets).
    """

    def __init__(
        self,
        profile: ResolvedAgentProfile,
        plan: PlanPolicy | None = None,
        *,
        lookup: ProfileLookup | None = None,
        journal: Journal | None = None,
    ) -> None:
        self.policy = plan if plan is not None else profile.plan
        self.mode = self.policy.mode
        self.profile = profile
        self.start_profile = profile
        self.lookup = lookup
        self.journal = journal if journal is not None else Journal()
        self.gate = ToolGate(profile)
        self.plan: PlanPolicy | None = None
        self.current: str | None = None
        self.started: set[str] = set()
        self.completed: list[str] = []
        self.rounds: Counter[str] = Counter()
        self.written: set[str] = set()
        self.switches = 0
        self.finished = False
        if self.mode in ("strict", "hybrid"):
            self.plan = self.policy
            self._emit("plan_created", source="policy", **self._plan_payload(self.policy))

    # ------------------------------------------------------------------ the entry point

    def apply(self, action: PlanAction) -> Decision:
        """Check ``action`` and, when it is allowed (or approved), take it."""
        if self.finished:
            self._violate(action, "run_finished", "the run has finished")
        handler: Callable[[PlanAction], _Step | Decision] = getattr(self, f"_{action.action}")
        step = handler(action)
        if isinstance(step, str):
            return step
        if step.hard is not None:
            self._refuse(step)
            self._violate(action, *step.hard)
        asked = False
        if step.problems:
            rule, message = step.problems[0]
            node = self._approval_node(action)
            if node is None or not node.approval_required:
                self._refuse(step)
                self._violate(action, rule, message)
            asked = True
            if not self._ask(action, rule, message):
                self._refuse(step)
                return "approval_required"
        if step.tool is not None:
            calls = self.gate.calls.copy()
            try:
                status = self.gate.check_call(step.tool)
            except PolicyError as exc:
                self._refuse(step)
                self._violate(action, "tool_policy", exc.message, cause=exc.code)
            if status == "approval_required" and not asked:
                asked = True
                message = f"tool '{step.tool}' needs approval"
                if not self._ask(action, "tool_requires_approval", message):
                    self.gate.calls = calls  # not taken: the call is not counted
                    return "approval_required"
        step.commit()
        return "approval_required" if asked else "allow"

    @property
    def node(self) -> PlanNode | None:
        """The node running now, if any."""
        return self._find(self.current) if self.current else None

    # ------------------------------------------------------------------ events

    def _emit(self, type_: str, level: Level = "info", **payload: Any) -> None:
        self.journal.emit(type_, level, **payload)

    def _emit_at(self, type_: str, level: Level, payload: dict[str, Any]) -> None:
        self.journal.emit(type_, level, **payload)

    def _plan_payload(self, plan: PlanPolicy) -> dict[str, Any]:
        return {"mode": plan.mode, "nodes": [n.id for n in plan.nodes]}

    def _refuse(self, step: _Step) -> None:
        if step.refuse is not None:
            step.refuse()

    def _ask(self, action: PlanAction, rule: str, message: str) -> bool:
        self._emit(
            "plan_approval_required",
            "warn",
            rule=rule,
            message=message,
            nodeId=self.current,
            action=action.to_json(),
            approved=action.approved,
        )
        return action.approved

    def _violate(self, action: PlanAction, rule: str, message: str, **extra: Any) -> None:
        self._emit(
            "plan_policy_violation",
            "error",
            rule=rule,
            message=message,
            nodeId=self.current,
            action=action.to_json(),
            **extra,
        )
        raise PolicyError(
            code="agent.policy_violation",
            message=message,
            details={"rule": rule, **extra},
        )

    # ------------------------------------------------------------------ helpers

    def _find(self, node_id: str | None) -> PlanNode | None:
        if self.plan is None or node_id is None:
            return None
        return next((n for n in self.plan.nodes if n.id == node_id), None)

    def _approval_node(self, action: PlanAction) -> PlanNode | None:
        if action.action in ("start_node", "complete_node") and self._find(action.node):
            return self._find(action.node)
        return self.node

    def _strict_now(self) -> bool:
        node = self.node
        return node is not None and self.plan is not None and strict_node(self.plan, node)

    def _plan_problems(self) -> list[tuple[str, str]]:
        """``plan_required`` (free, before a plan exists) and ``no_active_node`` (strict and
        hybrid, between nodes) for work other than plan and node actions."""
        if self.mode == "free" and self.plan is None:
            return [("plan_required", "a free plan must be created before any other work")]
        if self.mode in ("strict", "hybrid") and self.current is None:
            return [("no_active_node", f"a {self.mode} plan works inside a node: start one")]
        return []

    # ------------------------------------------------------------------ actions

    def _create_plan(self, action: PlanAction) -> _Step:
        return self._set_plan(action, created=self.plan is None)

    def _update_plan(self, action: PlanAction) -> _Step:
        return self._set_plan(action, created=self.plan is None)

    def _set_plan(self, action: PlanAction, *, created: bool) -> _Step:
        if self.mode == "none":
            return _Step(lambda: None, [("plan_disabled", "plan mode is 'none'")])
        data = dict(action.plan) if action.plan is not None else {}
        data.setdefault("nodes", self.policy.model_dump(mode="json", by_alias=True)["nodes"])
        data["mode"] = self.mode
        try:
            new = validate_model(PlanPolicy, data, path_prefix="plan")
        except ProfileValidationError as exc:
            return _Step(lambda: None, [("plan_invalid", exc.message)])
        problems = [
            ("plan_invalid", d.message) for d in check_plan(new, self.profile, lookup=self.lookup)
        ]
        problems += self._plan_change_problems(new)

        def commit() -> None:
            self.plan = new
            kind = "plan_created" if created else "plan_updated"
            self._emit(kind, source=action.source, **self._plan_payload(new))

        return _Step(commit, problems)

    def _plan_change_problems(self, new: PlanPolicy) -> list[tuple[str, str]]:
        if self.mode == "free":
            fixed: list[PlanNode] = []
            mine: list[PlanNode] = []
        elif self.mode == "strict":
            fixed, mine = self.policy.nodes, new.nodes
        else:
            fixed = [n for n in self.policy.nodes if n.locked]
            mine = [n for n in new.nodes if n.locked]
        problems = []
        if [n.model_dump() for n in fixed] != [n.model_dump() for n in mine]:
            problems.append(
                (
                    "plan_changed",
                    f"the {self.mode} plan's fixed nodes cannot be changed or reordered",
                )
            )
        if self.current is not None and all(n.id != self.current for n in new.nodes):
            problems.append(("plan_changed", f"node '{self.current}' is running"))
        return problems

    def _start_node(self, action: PlanAction) -> _Step:
        if self.mode == "none":
            return _Step(lambda: None, [("plan_disabled", "plan mode is 'none': no nodes")])
        if self.plan is None:
            return _Step(lambda: None, self._plan_problems())
        node = self._find(action.node)
        if node is None:
            return _Step(lambda: None, [("unknown_node", f"no plan node '{action.node}'")])
        problems = []
        if self.current is not None:
            problems.append(("node_in_progress", f"node '{self.current}' must be completed first"))
        index = self.plan.nodes.index(node)
        for j, other in enumerate(self.plan.nodes):
            if not strict_node(self.plan, other):
                continue
            if j < index and other.id not in self.completed:
                problems.append(
                    ("locked_skipped", f"node '{other.id}' must be completed before '{node.id}'")
                )
            elif j >= index and other.id in self.started:
                problems.append(
                    ("node_order", f"node '{node.id}' cannot run after '{other.id}' has run")
                )

        def commit() -> None:
            self.current = node.id
            self.started.add(node.id)
            self.rounds[node.id] = 0
            self._emit(
                "plan_node_started",
                nodeId=node.id,
                title=node.title,
                locked=strict_node(self.plan or self.policy, node),
                index=index,
                profileId=node.profile_id,
            )

        return _Step(commit, problems)

    def _tool_call(self, action: PlanAction) -> _Step:
        tool = action.tool or ""
        problems = self._plan_problems()
        node = self.node
        allowed = node.allowed_tools if node is not None and self._strict_now() else None
        if node is not None and allowed is not None and not tool_matches_any(allowed, tool):
            problems.append(
                ("tool_outside_node", f"tool '{tool}' is outside plan node '{node.id}'")
            )
        limit = node.max_rounds if node is not None else None
        if node is not None and limit is not None and self.rounds[node.id] >= limit:
            problems.append(
                ("max_rounds", f"plan node '{node.id}' has used all {node.max_rounds} rounds")
            )

        def commit() -> None:
            if node is not None:
                self.rounds[node.id] += 1

        return _Step(commit, problems, tool=tool)

    def _write_artifact(self, action: PlanAction) -> _Step:
        path = action.path or ""
        norm = normalize_workspace_path(path)
        workspace = self.profile.workspace
        writable = set(workspace.writable_roots) & set(workspace.visible_roots)
        hard = None
        if norm is None or norm.split("/", 1)[0] not in writable:
            hard = ("path_not_writable", f"'{path}' is not under a writable workspace root")
            norm = path
        problems = self._plan_problems()
        node = self.node
        if node is not None and self._strict_now():
            expected = {normalize_workspace_path(p) or p for p in node.expected_artifacts}
            declared = {normalize_workspace_path(a.path) for a in self.profile.output.artifacts}
            if norm not in expected and norm not in declared:
                problems.append(
                    (
                        "artifact_outside_node",
                        f"'{path}' is not an expected artifact of plan node '{node.id}'",
                    )
                )
        written = norm
        return _Step(lambda: self.written.add(written), problems, hard=hard)

    def _complete_node(self, action: PlanAction) -> _Step:
        if self.mode == "none":
            return _Step(lambda: None, [("plan_disabled", "plan mode is 'none': no nodes")])
        node = self._find(action.node or self.current)
        if node is None or node.id != self.current:
            name = action.node or "(none)"
            return _Step(lambda: None, [("node_not_active", f"node '{name}' is not running")])
        problems = []
        if self._strict_now():
            missing = [
                p
                for p in node.expected_artifacts
                if (normalize_workspace_path(p) or p) not in self.written
            ]
            if missing:
                problems.append(
                    ("artifact_missing", f"node '{node.id}' has not written {', '.join(missing)}")
                )

        def commit() -> None:
            self.current = None
            self.completed.append(node.id)
            self._emit("plan_node_completed", nodeId=node.id, rounds=self.rounds[node.id])

        return _Step(commit, problems)

    def _finish(self, action: PlanAction) -> _Step:
        problems = []
        if self.mode == "free" and self.plan is None:
            problems += self._plan_problems()
        if self.current is not None:
            problems.append(("node_in_progress", f"node '{self.current}' is still running"))
        if self.plan is not None and self.mode in ("strict", "hybrid"):
            for node in self.plan.nodes:
                if strict_node(self.plan, node) and node.id not in self.completed:
                    problems.append(("locked_skipped", f"node '{node.id}' never completed"))
        missing = [
            a.path
            for a in self.profile.output.artifacts
            if a.required and normalize_workspace_path(a.path) not in self.written
        ]
        if missing:
            problems.append(
                ("manifest_incomplete", f"required artifacts not written: {', '.join(missing)}")
            )

        def commit() -> None:
            self.finished = True

        return _Step(commit, problems)

    def _switch_profile(self, action: PlanAction) -> _Step | Decision:
        target = action.profile or ""
        base: dict[str, Any] = {"from": self.profile.id, "to": target, "source": action.source}
        self._emit("profile_switch_requested", nodeId=self.current, **base)
        problems = self._plan_problems()
        if problems:
            return _Step(lambda: None, problems, refuse=lambda: self._denied(base, "plan_rule"))
        outcome = self._check_switch(target, strict=self._strict_now())
        if outcome.reason == "node_disallows":
            message = outcome.message or ""

            def commit() -> None:
                self._settle(base, self._check_switch(target, strict=False))

            return _Step(
                commit,
                [("profile_outside_node", message)],
                refuse=lambda: self._denied(base, "node_disallows", message),
            )
        return self._settle(base, outcome)

    def _check_switch(self, target: str, *, strict: bool) -> SwitchOutcome:
        return check_switch(
            target,
            current=self.profile,
            node=self.node,
            node_strict=strict,
            lookup=self.lookup,
            switches=self.switches,
            budget=self.start_profile.switch.max_switches_per_run,
        )

    def _settle(self, base: dict[str, Any], outcome: SwitchOutcome) -> Decision:
        if outcome.profile is None:
            self._denied(base, outcome.reason or "denied", outcome.message, outcome.code)
            return "denied"
        node = self.node
        if node is None or node.profile_id != outcome.profile.id:
            self.switches += 1
        calls = self.gate.calls
        self.profile = outcome.profile
        self.gate = ToolGate(outcome.profile)
        self.gate.calls = calls
        self._emit("profile_switched", nodeId=self.current, **base)
        return "allow"

    def _denied(
        self,
        base: dict[str, Any],
        reason: str,
        message: str | None = None,
        code: str | None = None,
    ) -> None:
        extra = {"code": code} if code else {}
        payload = {"nodeId": self.current, "reason": reason, "message": message, **base, **extra}
        self._emit_at("profile_switch_denied", "warn", payload)
