"""The assemble stage: bound template + run context (+ profile) -> ContextFrame.

Internal: the stage behind :func:`compiler.compile`.

The only stage that reads inputs (workspace files, cards, chat). Each macro expands to one
typed Component; content that arrives as data is never parsed for macros again.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from compiler._assemble import visibility
from compiler._assemble.creator import character, user, world
from compiler._assemble.macros import BoundTemplate, MacroCall
from compiler._assemble.markers import ALLOWANCE, OPEN, openers
from compiler._assemble.required import default_required, mark_history
from compiler._assemble.visibility import (
    MACRO_RESOURCES,
    file_resource,
    file_resource_pattern,
    resource_of,
)
from compiler._base.frame import Component, ComponentKind, ContextFrame, Message, Role, ToolSpec
from compiler._base.journal import Journal
from compiler.errors import ContextError, Diagnostic, PolicyError
from compiler.inputs.chat_frame import frame_chat, frame_message
from compiler.inputs.lazy_chat import LazyChat
from compiler.inputs.run import ChatMessageIn, RunContext
from compiler.inputs.tools import BUILTIN_TOOLS
from compiler.inputs.workspace import Workspace
from compiler.policy.resources import VisibleResourcePolicy
from compiler.profile import ResolvedAgentProfile
from compiler.profile.models import PlanNode, PlanPolicy
from compiler.profile.tool_catalogue import KNOWN_TOOLS, matches_any, to_provider_name
from compiler.st.no_scripts import UNCHANGED, Unchanged, has_scripts
from compiler.syntax.ast import Text

if TYPE_CHECKING:  # SillyTavern's engines are loaded when a compile uses them
    from compiler.st.macros import MacroBudget, MacroEnv
    from compiler.st.regex_run import ScriptRunner
    from compiler.st.world.run import WorldRun

PresetMode = Literal["agent", "legacy"]
"""How a SillyTavern preset is compiled: with its agent entries, or as the plain chat."""


class Assembler:
    """Expands templates against one run context; components accumulate in order."""

    def __init__(
        self,
        context: RunContext,
        journal: Journal,
        *,
        profile: ResolvedAgentProfile,
        count: Callable[[str], int] | None = None,
    ) -> None:
        self.context = context
        self.given_context = context  #: as given (a preset starts an empty chat with its greeting)
        self.journal = journal
        self.profile = profile
        self.components: list[Component] = []
        #: warnings found while assembling (world info regex keys), for the compile result
        self.warnings: list[Diagnostic] = []
        self._workspace: Workspace | None = None
        self._group = 0
        self.mode: PresetMode = "agent"  #: ``legacy``: plain SillyTavern, no agent components
        self.frame_metadata: dict[str, Any] = {}  #: e.g. a preset's squash_system_messages
        #: compiling for a plan node: the plan and the node's id (see :func:`_plan`)
        self.plan_node: tuple[PlanPolicy, str] | None = None
        #: the compile's model and prompt budget, for {{model}} and {{maxPrompt}}
        self.model: str | None = None
        self.max_prompt: int | None = None
        self.count_tokens = count  #: the compile's token count, for the world info budget
        self.world_run: WorldRun | None = None
        #: in-chat prompts the world info scan reads too (SillyTavern's extension prompts set
        #: with ``scan``; a preset compile sets them before reading the world info)
        self.scan_prompts: list[tuple[str, str]] = []
        self._literal_macros: set[str] = set()  #: SillyTavern macros reported as literal
        self._serial = 0  #: components made so far: ids stay unique when empty ones are left out
        #: what the policy said of each resource asked about, and the visible chat, with the
        #: policy (and context) they were computed for (:meth:`visible`, :meth:`visible_chat`)
        self._seen: tuple[VisibleResourcePolicy | None, dict[str, bool]] = (None, {})
        self._shown: tuple[object, object, tuple[Sequence[ChatMessageIn], str | None]] | None
        self._shown = None
        self.resources = VisibleResourcePolicy(
            include=tuple(profile.context.include),
            exclude=tuple(profile.context.exclude),
            visible_roots=tuple(profile.workspace.visible_roots),
        )

    def for_node(self, plan: PlanPolicy, node: PlanNode) -> None:
        """Compile with ``node``'s view: its ``visibleFiles`` narrow the workspace, and
        ``<<agent.plan>>`` shows the plan with ``node`` marked."""
        self.plan_node = (plan, node.id)
        if node.visible_files is not None:
            only = tuple(file_resource_pattern(f) for f in node.visible_files)
            self.resources = dataclasses.replace(self.resources, workspace_only=only)

    def visible(self, resource: str) -> bool:
        """Whether the resource policy shows ``resource`` (asked once per policy)."""
        policy, seen = self._seen
        if policy is not self.resources:
            seen = {}
            self._seen = (self.resources, seen)
        shown = seen.get(resource)
        if shown is None:
            shown = seen[resource] = self.resources.is_visible(resource)
        return shown

    def require(self, resource: str, call: MacroCall) -> None:
        """The one place a macro's resource is checked, before anything is read."""
        if self.visible(resource):
            return
        where = _where(call.span.file, call.span.line, call.span.column)
        self.resources.require(resource, what=call.name, where=where)

    @functools.cached_property
    def macro_budget(self) -> MacroBudget:
        """What SillyTavern's macros may spend, over all texts of the compile."""
        from compiler.st.macros import MacroBudget

        return MacroBudget()

    @functools.cached_property
    def macro_values(self) -> dict[str, str]:
        """SillyTavern macro values ({{char}}, {{user}}, ...) from the card and persona.

        Card fields arrive with their own {{char}}/{{user}} filled, as in SillyTavern. A value
        whose resource the policy hides is left out (see :meth:`fill`).
        """
        from compiler.st.chat_macros import chat_values
        from compiler.st.macros import card_values, substitute

        persona = self.context.persona
        values = card_values(
            self.context.card,
            user=persona.name if persona else "User",
            persona=persona.description if persona else "",
        )
        values.update(chat_values(self.visible_chat()[0], self.macro_env.now))
        if self.model is not None:
            values["model"] = self.model
        if self.max_prompt is not None:
            values["maxPrompt"] = str(self.max_prompt)
        names, spend = {"char": values["char"], "user": values["user"]}, self.macro_budget
        return {
            key: substitute(value, names, budget=spend) if key in MACRO_RESOURCES else value
            for key, value in values.items()
            if key not in MACRO_RESOURCES or self.visible(MACRO_RESOURCES[key])
        }

    @functools.cached_property
    def macro_env(self) -> MacroEnv:
        """The clock, seed and variables of SillyTavern's other macros, from the run context
        (the clock defaults to the current time, the seed to one derived from the chat)."""
        from compiler.st.macros import MacroEnv

        ctx = self.context
        return MacroEnv(
            now=ctx.now or datetime.now().astimezone(),
            seed=ctx.seed or 0,
            seed_from=None if ctx.seed is not None else lambda: ctx.macro_seed,
            variables={k: _variable(v) for k, v in ctx.chat_variables.items()},
            global_variables={k: _variable(v) for k, v in ctx.global_variables.items()},
            budget=self.macro_budget,
        )

    def fill(self, text: str) -> str:
        """``text`` with SillyTavern macros filled; a macro naming a hidden resource is
        ``policy.resource_hidden`` (preset text cannot get around the resource policy)."""
        if "{{" not in text and "<" not in text:  # no macro: the values are not needed
            return text
        from compiler.st.macros import substitute

        literal: list[str] = []
        out = substitute(text, self.macro_values, self.macro_env, literal)
        for key, resource in MACRO_RESOURCES.items():
            if key not in self.macro_values and re.search(
                r"\{\{\s*" + key + r"\s*\}\}", out, re.IGNORECASE
            ):
                raise PolicyError(
                    code="policy.resource_hidden",
                    message=f"'{{{{{key}}}}}' reads the hidden resource '{resource}'",
                    hint="the profile's context.include/exclude hides it",
                )
        self._report_literal(literal)
        return out

    def _report_literal(self, literal: list[str]) -> None:
        """``template.unknown_st_macro``, once per macro, for each ``{{...}}`` left as written
        (``{{agent.*}}`` has its own warning, ``template.legacy_agent_macro``)."""
        for raw in literal:
            if raw in self._literal_macros or raw[2:].lstrip().lower().startswith("agent."):
                continue
            self._literal_macros.add(raw)
            self.warnings.append(
                Diagnostic(
                    code="template.unknown_st_macro",
                    severity="warning",
                    message=f"SillyTavern macro {raw[:80]!r} is not supported here: it is "
                    "sent as written",
                    hint="remove it, or give what it needs (--model, a budget, the run's "
                    "variables)",
                )
            )

    def filled(self, text: str) -> tuple[str, int]:
        """:meth:`fill`, and how many ``<<agent.`` openers the filled-in values brought (data,
        not macros: :mod:`compiler._assemble.markers`); openers formed at a seam are not counted."""
        out = self.fill(text)
        if OPEN not in out:
            return out, 0
        from compiler.st.macros import substitute

        inert = {k: v.replace(OPEN, "\ufffe") for k, v in self.macro_values.items()}
        env = dataclasses.replace(
            self.macro_env,
            variables={k: v.replace(OPEN, "\ufffe") for k, v in self.macro_env.variables.items()},
            global_variables={
                k: v.replace(OPEN, "\ufffe") for k, v in self.macro_env.global_variables.items()
            },
        )
        return out, max(0, openers(out) - openers(substitute(text, inert, env)))

    def visible_chat(self) -> tuple[Sequence[ChatMessageIn], str | None]:
        """The chat messages the profile shows, and the window (``"tail"`` or None): all of
        them, the newest ``context.historyTailMessages`` when only ``chat.history.tail`` is
        granted (never starting with a tool result whose call is cut), or none
        (:func:`compiler._assemble.visibility.visible_chat`); computed once per context and
        policy."""
        last = self._shown
        if last is not None and last[0] is self.context and last[1] is self.resources:
            return last[2]
        shown = visibility.visible_chat(
            self.context.messages, self.resources, self.profile.context.history_tail_messages
        )
        self._shown = (self.context, self.resources, shown)
        return shown

    @functools.cached_property
    def regex_scripts(self) -> ScriptRunner | Unchanged:
        """The run's SillyTavern regex scripts, run on the chat, world info and greeting as
        SillyTavern runs them while building a prompt (:mod:`compiler.st.regex_run`)."""
        if not has_scripts(self.context):
            return UNCHANGED
        from compiler.st.regex_run import script_runner

        return script_runner(self.context, self.filled, self.warnings)

    @functools.cached_property
    def world_entries(self) -> list[dict[str, Any]]:
        """The world info the visible chat (as the regex scripts left it) activates
        (:mod:`compiler.st.world.run`), then the scripts run on the entries."""
        from compiler.st.world.place import unplaced
        from compiler.st.world.run import scan_chat

        ctx, chat = self.context, self.regex_scripts.chat(self.visible_chat()[0])
        run = scan_chat(
            ctx,
            chat,
            self.macro_values,
            self.macro_env,
            self.count_tokens,
            self.max_prompt,
            cap=self.profile.context.world_info_budget_tokens,
            injected=self.scan_prompts,
        )
        self.world_run = run
        entries = run.shown = self.regex_scripts.world(run.entries)
        self.warnings += run.warnings + unplaced(entries)
        return entries

    @property
    def workspace(self) -> Workspace:
        if self._workspace is None:
            self._workspace = self.context.open_workspace(
                visible=lambda path: self.visible(file_resource(path))
            )
        return self._workspace

    def add_template(
        self,
        bound: BoundTemplate,
        role: Role = "system",
        shape: Callable[[Component], None] | None = None,
    ) -> None:
        """Append the components of one template; its inline text shares message groups.

        ``shape`` finishes each component before it joins the frame (one forward pass: a
        preset entry's framing and in-chat injections are in place before the frame decides
        whether the component is empty).
        """
        self._group += 1
        for item in bound.items:
            if isinstance(item, Text):
                comp = Component(
                    id=self._next_id("text"),
                    kind=ComponentKind.PRESET_GUIDE,
                    source=_where(item.span.file, item.span.line, item.span.column),
                    role=role,
                    group=self._group,
                    inline_content=item.value,
                    metadata={ALLOWANCE: item.literal_opens},
                )
            else:
                comp = self._expand(item, role)
                if comp.kind in (ComponentKind.CHAT_HISTORY, ComponentKind.TOOL_RESULTS):
                    self._group += 1  # text after a message block is a new message
            if shape is not None:
                shape(comp)
            self._add(comp)

    def add_text(
        self, text: str, *, role: Role, source: str, resource: str | None,
        metadata: dict[str, Any], kind: ComponentKind = ComponentKind.PRESET_GUIDE,
        join: bool = False,
    ) -> None:  # fmt: skip
        """Append one inline text (data, or preset text: ``resource`` None) as its own message
        (``join``: the last one's); ``resource`` is checked like a macro's."""
        if resource is not None:
            self.resources.require(resource, what=f"'{source}'", where=source)
        self._group += not join
        self._add(
            Component(
                id=self._next_id("text"),
                kind=kind,
                source=source,
                resource=resource,
                role=role,
                group=self._group,
                inline_content=text,
                metadata={ALLOWANCE: openers(text), **metadata},  # data: its openers are its own
            )
        )

    def frame(self) -> ContextFrame:
        return ContextFrame(components=list(self.components), metadata=dict(self.frame_metadata))

    # -- internals ---------------------------------------------------------------------
    def _next_id(self, name: str) -> str:
        self._serial += 1
        return f"{self._serial - 1:03d}:{name}"

    def _add(self, comp: Component) -> None:
        empty = not (comp.inline_content or comp.messages or comp.tools)
        if empty and comp.kind != ComponentKind.PRESET_GUIDE:
            self.journal.emit(
                "context_component_skipped", component=comp.id, kind=comp.kind.value, reason="empty"
            )
        elif not empty:
            self.journal.emit(
                "context_component_added",
                component=comp.id,
                kind=comp.kind.value,
                source=comp.source,
            )
        if not empty or comp.required:
            self.components.append(comp)

    def _expand(self, call: MacroCall, role: Role) -> Component:
        expander = _EXPANDERS[call.kind]
        resource = resource_of(call)
        if resource is not None and call.kind != ComponentKind.WORKSPACE_FILE:
            self.require(resource, call)  # workspace reads check themselves (Workspace.read)
        try:
            fields = expander(self, call)
        except PolicyError as exc:
            if exc.file is None and exc.span is None:
                exc.file = _where(call.span.file, call.span.line, call.span.column)
            raise
        args = call.args
        strategy = args.get("strategy")
        base: dict[str, Any] = {
            "id": self._next_id(call.name.removeprefix("agent.")),
            "kind": call.kind,
            "source": _where(call.span.file, call.span.line, call.span.column),
            "role": role,
            "group": self._group,
            "token_budget": args.get("budget"),
            "priority": args.get("priority", 0),
            "required": default_required(self.profile, self.mode, call.kind, args, fields),
            "strategy": strategy,
            "metadata": {
                "macro": call.name,
                "args": dict(args),
                "at": _where(call.span.file, call.span.line, call.span.column),
            },
        }
        extra_meta = fields.pop("metadata", {})
        lazy = fields.pop("messages") if isinstance(fields.get("messages"), LazyChat) else None
        base.update(fields)
        base["metadata"].update(extra_meta)
        comp = Component(**base)
        mark_history(comp, self.profile, self.mode)
        if lazy is not None:  # kept as it is: validating it would read every message
            comp.messages = lazy
        return comp


def _variable(value: str | int | float | bool) -> str:
    """A run's SillyTavern variable as {{getvar}} prints it (JavaScript's way)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    from compiler.st.macros import js_number

    return value if isinstance(value, str) else js_number(value)


def _where(file: str, line: int, column: int) -> str:
    return f"{file}:{line}:{column}"


def _system_prompt(a: Assembler, call: MacroCall) -> dict[str, Any]:
    return {
        "inline_content": a.profile.effective_system_prompt(),
        "resource": "agent.system_prompt",
    }


def _chat_history(a: Assembler, call: MacroCall) -> dict[str, Any]:
    # only the tail may be visible: then only it is offered, and no summary of the head
    source, window = a.visible_chat()
    first = len(a.context.messages) - len(source)  # the window is a suffix of the chat
    shown = a.regex_scripts.chat(source)
    messages: Sequence[Message]
    if isinstance(shown, LazyChat):  # plain text messages: each made when the fit reads it
        messages = frame_chat(shown)
    else:
        messages = [frame_message(m, a.context.file, i) for i, m in enumerate(shown, start=first)]
    meta: dict[str, Any] = {"window": window}
    if window is None:
        meta |= _summary_meta(a, ComponentKind.CHAT_HISTORY)
    return {
        "messages": messages,
        "resource": "chat.history",
        "role": "user",
        "metadata": meta,
    }


#: Where a precomputed summary of a component kind lives in the workspace.
SUMMARY_FILES: dict[ComponentKind, str] = {
    ComponentKind.CHAT_HISTORY: "summaries/chat.md",
    ComponentKind.TOOL_RESULTS: "summaries/tool_results.md",
}


def _summary_meta(a: Assembler, kind: ComponentKind) -> dict[str, Any]:
    """``{"summary": text}`` when the run has a precomputed summary for ``kind``: the run
    context's ``summaries[kind]`` first, else (agent mode only) the workspace file of
    :data:`SUMMARY_FILES`, read like every workspace file through :meth:`Workspace.read`
    (a hidden, linked-away or unreadable summary file is no summary). The fit stage uses it
    before any summarizer."""
    text = a.context.summaries.get(kind.value)
    path = SUMMARY_FILES.get(kind)
    if a.context.workspace is None and path is not None and a.visible(file_resource(path)):
        return {"summary": text} if text and text.strip() else {}  # no workspace: no file
    if text is None and path is not None and a.mode == "agent":
        try:
            text = a.workspace.read(path)
        except (ContextError, PolicyError) as exc:
            if exc.code != "workspace.file_not_found":
                a.journal.emit("context_summary_skipped", "warn", file=path, code=exc.code)
            text = None
    return {"summary": text} if text and text.strip() else {}


def _file(a: Assembler, call: MacroCall) -> dict[str, Any]:
    path = str(call.args["path"])
    text = a.workspace.read(path)
    return {
        "inline_content": text,
        "resource": file_resource(path),
        "source": f"workspace:{path}",
    }


def _tree(a: Assembler, call: MacroCall) -> dict[str, Any]:
    files = a.workspace.tree()  # only what the policy shows
    return {"inline_content": "\n".join(files), "resource": "workspace"}


def _tools(a: Assembler, call: MacroCall) -> dict[str, Any]:
    """Exactly the profile's visible tools: the run's definitions, else the built-in ones.

    Visibility is not decided here: it is the profile's ``tools.visible`` /
    ``tools.approvalRequired``, which :func:`compiler.profile.tool_catalogue.visible_tools` computed
    once over the known tools plus the run's own when the compile bound the profile to this
    run (:meth:`ResolvedAgentProfile.with_run_tools`). A run tool the profile was not bound
    to is not offered. The run's tools come first in its order, then the visible known tools
    it did not define, in catalogue order.
    """
    policy = a.profile.tools
    run_tools = {t.name: (t.description, t.parameters) for t in a.context.tools}
    visible, approval = set(policy.visible), set(policy.approval_required)
    definitions = {**{k: v for k, v in BUILTIN_TOOLS.items() if k in visible}, **run_tools}
    order = [*run_tools, *(k for k in KNOWN_TOOLS if k not in run_tools)]
    tools: list[ToolSpec] = [
        {
            "name": name,
            "alias": to_provider_name(name),
            "description": policy.tool_descriptions.get(name, definitions[name][0]),
            "parameters": definitions[name][1],
            "requireApproval": name in approval,
        }
        for name in order
        if name in visible and name in definitions
    ]
    return {
        "tools": tools,
        "resource": "agent.tools",
        "metadata": {"aliases": {t["alias"]: t["name"] for t in tools}},
    }


def _tool_results(a: Assembler, call: MacroCall) -> dict[str, Any]:
    mode = str(call.args.get("mode", "full"))
    results = list(a.context.tool_results)
    if mode == "latest":
        results = results[-1:]
    messages: list[Message] = []
    for r in results:
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "toolCalls": [{"id": r.call_id, "name": r.tool, "arguments": r.arguments}],
            }
        )
        # mode="summary" is applied by the fit stage; a failure is a flag, not a text marker
        result: Message = {"role": "tool", "content": r.content, "toolCallId": r.call_id}
        messages.append({**result, "isError": True} if r.is_error else result)
    meta = {"mode": mode} | _summary_meta(a, ComponentKind.TOOL_RESULTS)
    return {"messages": messages, "resource": "agent.tool_results", "metadata": meta}


def _plan(a: Assembler, call: MacroCall) -> dict[str, Any]:
    if a.plan_node is not None:  # compiling for a node: the plan's nodes, the node marked
        policy, current = a.plan_node
        lines = [
            f"{i}. {n.title or n.id}{' (locked)' if n.locked else ''}"
            + ("  <- current step" if n.id == current else "")
            for i, n in enumerate(policy.nodes, 1)
        ]
        return {"inline_content": "\n".join(lines), "resource": "agent.plan"}
    plan = a.context.plan
    if isinstance(plan, list):
        text = "\n".join(f"{i}. {step}" for i, step in enumerate(plan, 1))
    else:
        text = plan or ""
    return {"inline_content": text, "resource": "agent.plan"}


def _diff(a: Assembler, call: MacroCall) -> dict[str, Any]:
    return {"inline_content": a.context.diff or "", "resource": "agent.diff"}


def _skill(a: Assembler, call: MacroCall) -> dict[str, Any]:
    name = str(call.args["name"])
    policy = a.profile.skills
    if not matches_any(policy.visible, name) or matches_any(policy.deny, name):
        raise PolicyError(
            code="policy.resource_hidden",
            message=f"skill '{name}' is not visible to this profile",
            hint="the profile's skills.visible / skills.deny hide it",
            file=_where(call.span.file, call.span.line, call.span.column),
        )
    return {"inline_content": a.context.skill_text(name), "resource": f"skill.{name}"}


_EXPANDERS: dict[ComponentKind, Callable[[Assembler, MacroCall], dict[str, Any]]] = {
    ComponentKind.SYSTEM_INSTRUCTION: _system_prompt,
    ComponentKind.CHAT_HISTORY: _chat_history,
    ComponentKind.WORKSPACE_FILE: _file,
    ComponentKind.WORKSPACE_TREE: _tree,
    ComponentKind.TOOL_DEFINITIONS: _tools,
    ComponentKind.TOOL_RESULTS: _tool_results,
    ComponentKind.PLAN: _plan,
    ComponentKind.DIFF_SUMMARY: _diff,
    ComponentKind.SKILL: _skill,
    ComponentKind.WORLD_INFO: world,
    ComponentKind.CHARACTER_CARD: character,
    ComponentKind.USER_PROFILE: user,
}
