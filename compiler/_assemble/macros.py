"""The macro catalogue (one place): name -> signature -> component kind; and binding.

Internal: the stage behind :func:`compiler.compile` and :func:`compiler.check`.

``bind()`` checks a parsed Template against the catalogue and reports every semantic error
of the file in one go, in source order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Literal, Protocol, get_args

from compiler._base.kinds import ComponentKind, Strategy
from compiler._records import record
from compiler.errors import Diagnostic, Span, TemplateError, did_you_mean
from compiler.syntax.ast import Arg, ArgValue, Macro, Template, Text

ParamType = Literal["string", "int", "bool", "choice"]


@record(frozen=True, slots=True)
class Param:
    """One argument of a macro."""

    name: str
    type: ParamType
    required: bool = False
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    doc: str = ""


@record(frozen=True, slots=True)
class MacroSpec:
    """A catalogue entry: what a macro accepts and the component kind it expands to."""

    name: str
    kind: ComponentKind
    summary: str
    positional: tuple[Param, ...] = ()
    keywords: tuple[Param, ...] = ()

    @property
    def params(self) -> dict[str, Param]:
        return {p.name: p for p in (*self.positional, *self.keywords, *COMMON_PARAMS)}


STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
CHARACTER_FIELDS = (
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
    "system_prompt",
    "post_history_instructions",
    "creator_notes",
)

COMMON_PARAMS: tuple[Param, ...] = (
    Param("budget", "int", minimum=0, doc="token cap for this component"),
    Param("priority", "int", doc="higher stays longer when the budget is short"),
    Param("required", "bool", doc="fail instead of dropping when it cannot fit"),
    Param("strategy", "choice", choices=STRATEGIES, doc="what to do when over budget"),
)

CATALOGUE: dict[str, MacroSpec] = {
    spec.name: spec
    for spec in (
        MacroSpec("agent.plan", ComponentKind.PLAN, "the run's plan"),
        MacroSpec("agent.workspace.tree", ComponentKind.WORKSPACE_TREE, "the workspace file tree"),
        MacroSpec(
            "agent.file",
            ComponentKind.WORKSPACE_FILE,
            "one workspace file",
            positional=(Param("path", "string", required=True, doc="workspace-relative path"),),
        ),
        MacroSpec(
            "agent.tools.available", ComponentKind.TOOL_DEFINITIONS, "the tools the model may call"
        ),
        MacroSpec(
            "agent.tool_results",
            ComponentKind.TOOL_RESULTS,
            "tool calls and their results, as messages",
            keywords=(Param("mode", "choice", choices=("full", "summary", "latest")),),
        ),
        MacroSpec("agent.diff.latest", ComponentKind.DIFF_SUMMARY, "the latest workspace diff"),
        MacroSpec(
            "agent.skill",
            ComponentKind.SKILL,
            "one skill's instructions",
            positional=(Param("name", "string", required=True, doc="skill name"),),
        ),
        MacroSpec(
            "agent.system_prompt",
            ComponentKind.SYSTEM_INSTRUCTION,
            "the profile's agent system prompt",
        ),
        MacroSpec("agent.chat.history", ComponentKind.CHAT_HISTORY, "the chat, as messages"),
        MacroSpec(
            "agent.world.activated",
            ComponentKind.WORLD_INFO,
            "activated world info entries",
            keywords=(Param("position", "choice", choices=("before", "after")),),
        ),
        MacroSpec(
            "agent.character",
            ComponentKind.CHARACTER_CARD,
            "a character card field",
            keywords=(Param("field", "choice", choices=CHARACTER_FIELDS),),
        ),
        MacroSpec("agent.user", ComponentKind.USER_PROFILE, "the user's persona"),
    )
}


def macro_catalogue() -> Mapping[str, MacroSpec]:
    """Every ``<<agent.*>>`` macro (read-only): name -> its :class:`MacroSpec` (summary,
    component kind, arguments; ``spec.params`` adds the arguments every macro takes)."""
    return MappingProxyType(CATALOGUE)


#: Names an author may expect to be macros, and where what they name comes from instead.
NOT_MACROS: dict[str, str] = {
    "agent.task": "the run's task has no macro: a preset's agentTask entry sends its own text, "
    "then the task",
}


@record(frozen=True, slots=True)
class MacroCall:
    """A macro checked against its spec: arguments by name, with defaults left out."""

    spec: MacroSpec
    args: dict[str, ArgValue]
    span: Span

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> ComponentKind:
        return self.spec.kind


@record(frozen=True, slots=True)
class BoundTemplate:
    """A template whose macros all passed the catalogue, plus its warnings."""

    template: Template
    items: tuple[Text | MacroCall, ...]
    warnings: tuple[Diagnostic, ...] = field(default=())


# Possessive: no backtracking into the name or the rest, so a long unclosed
# ``{{agent.aaaa...`` is scanned once, not once per character (quadratic).
_LEGACY_RE = re.compile(r"\{\{\s*+(agent(?:\.[a-z_][a-z0-9_]*+)++)([^{}]*+)\}\}")


def bind(template: Template) -> BoundTemplate:
    """Check every macro of ``template``; raise TemplateError with all errors, in order."""
    errors: list[Diagnostic] = []
    items: list[Text | MacroCall] = []
    for node in template.nodes:
        if isinstance(node, Text):
            items.append(node)
            continue
        call = _bind_macro(node, errors, template.source)
        if call is not None:
            items.append(call)
    if errors:
        errors.sort(key=lambda d: d.span.start if d.span else 0)
        raise TemplateError(errors)
    return BoundTemplate(template, tuple(items), tuple(legacy_warnings(template)))


def legacy_warnings(template: Template) -> list[Diagnostic]:
    """Warn about seed-style ``{{agent.NAME ...}}`` text, which stays literal."""
    from compiler.syntax.positions import LineIndex

    out: list[Diagnostic] = []
    index: LineIndex | None = None
    for node in template.nodes:
        if not isinstance(node, Text):
            continue
        for m in _LEGACY_RE.finditer(node.value):
            index = index or LineIndex(template.source, template.name)
            start = node.span.start + m.start()
            if template.source[start : start + 2] != "{{":  # text moved by an escape; skip
                continue
            rewrite = f"<<{m.group(1)}{m.group(2).rstrip()}>>"
            out.append(
                Diagnostic(
                    code="template.legacy_agent_macro",
                    severity="warning",
                    message=f"'{{{{{m.group(1)}...}}}}' is literal text here, not a macro",
                    span=index.span(start, start + len(m.group(0))),
                    hint=f"write {rewrite}",
                    source=template.source,
                )
            )
    return out


def _bind_macro(macro: Macro, errors: list[Diagnostic], source: str) -> MacroCall | None:
    def err(code: str, message: str, span: Span, hint: str | None = None) -> None:
        errors.append(Diagnostic(code, message, span=span, hint=hint, source=source))

    spec = CATALOGUE.get(macro.name)
    if spec is None:
        err(
            "template.unknown_macro",
            f"unknown macro '{macro.name}'",
            macro.span,
            NOT_MACROS.get(macro.name) or did_you_mean(macro.name, CATALOGUE.keys()),
        )
        return None
    args: dict[str, ArgValue] = {}
    seen: dict[str, Arg] = {}
    positional = list(spec.positional)
    params = spec.params
    ok = True
    for arg in macro.args:
        if arg.key is None:
            if not positional and spec.positional and spec.positional[0].name in seen:
                name = spec.positional[0].name
                err(
                    "template.duplicate_argument",
                    f"argument '{name}' given twice to '{spec.name}'",
                    arg.span,
                )
                ok = False
                continue
            if not positional:
                err(
                    "template.unknown_argument",
                    f"'{spec.name}' takes no positional argument",
                    arg.span,
                    _keyword_hint(spec),
                )
                ok = False
                continue
            param = positional.pop(0)
        else:
            found = params.get(arg.key)
            if found is None:
                err(
                    "template.unknown_argument",
                    f"unknown argument '{arg.key}' for '{spec.name}'",
                    arg.span,
                    did_you_mean(arg.key, params.keys()) or _keyword_hint(spec),
                )
                ok = False
                continue
            param = found
            if param in positional:
                positional.remove(param)
        if param.name in seen:
            err(
                "template.duplicate_argument",
                f"argument '{param.name}' given twice to '{spec.name}'",
                arg.span,
            )
            ok = False
            continue
        seen[param.name] = arg
        value = _check_value(param, arg, spec, err)
        if value is None:
            ok = False
            continue
        args[param.name] = value
    for param in params.values():
        if param.required and param.name not in args and param.name not in seen:
            err(
                "template.missing_argument",
                f"'{spec.name}' needs its '{param.name}' argument",
                macro.span,
                f'write <<{spec.name} "{param.name}">>',
            )
            ok = False
    return MacroCall(spec, args, macro.span) if ok else None


def _check_value(param: Param, arg: Arg, spec: MacroSpec, err: _Err) -> ArgValue | None:
    value = arg.value
    where = f"argument '{param.name}' of '{spec.name}'"
    if param.type == "string":
        if arg.kind != "string":
            err("template.bad_argument", f"{where} must be a quoted string", arg.span)
            return None
        return value
    if param.type == "int":
        if arg.kind != "int" or isinstance(value, bool) or not isinstance(value, int):
            err("template.bad_argument", f"{where} must be an integer", arg.span)
            return None
        if param.minimum is not None and value < param.minimum:
            err("template.bad_argument", f"{where} must be at least {param.minimum}", arg.span)
            return None
        return value
    if param.type == "bool":
        if arg.kind != "bool":
            err("template.bad_argument", f"{where} must be true or false", arg.span)
            return None
        return value
    if arg.kind not in ("string", "ident") or value not in param.choices:
        choices = "|".join(param.choices)
        hint = did_you_mean(str(value), param.choices) if isinstance(value, str) else None
        err("template.bad_argument", f"{where} must be one of {choices}", arg.span, hint)
        return None
    return value


class _Err(Protocol):
    def __call__(self, code: str, message: str, span: Span, hint: str | None = None) -> None: ...


def _keyword_hint(spec: MacroSpec) -> str:
    names = ", ".join(p.name for p in (*spec.positional, *spec.keywords, *COMMON_PARAMS))
    return f"'{spec.name}' takes: {names}"
