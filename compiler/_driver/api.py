"""The public entry points: thin orchestration over syntax -> assemble -> fit -> lower.

Internal: the functions are public as ``compiler.compile`` and friends.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler._assemble.assemble import Assembler
from compiler._assemble.macros import BoundTemplate
from compiler._assemble.markers import check_markers
from compiler._base.frame import ComponentKind, ContextFrame, ToolSpec
from compiler._base.journal import Event, Journal
from compiler._base.tokens import TokenCounter, counter_for
from compiler._driver.checking import check_template
from compiler._driver.feasibility import Feasibility
from compiler._driver.losses import LOSS_CODES, checked_losses
from compiler._driver.option_specs import BY_NAME
from compiler._driver.options import CompileOptions
from compiler._driver.sources import SourceKind, read_source
from compiler._records import record
from compiler.errors import (
    APCError,
    BudgetError,
    ContextError,
    Diagnostic,
    InternalError,
    StrictError,
    did_you_mean,
)
from compiler.fit import (
    BudgetLedger,
    CategoryBudgets,
    FitResult,
    PriceMemo,
    fit,
    floor_tokens,
    total_budget,
    without_inserted,
)
from compiler.fit.budgets import TotalBudget, budget_warnings
from compiler.inputs.card_memo import CardMemo
from compiler.inputs.lazy_chat import ChatMemo
from compiler.inputs.lorebooks import BookMemo
from compiler.inputs.read import (
    parse_json,
)
from compiler.inputs.run import RunContext, load_context, read_context
from compiler.inputs.run_warnings import run_warnings
from compiler.inputs.tool_schemas import SchemaMemo
from compiler.policy.plan import check_plan, load_plan, node_tools
from compiler.policy.tools import ToolGate
from compiler.profile import ProfileLayers, ResolvedAgentProfile
from compiler.profile.defaults import DEFAULT_AGENT_SYSTEM_PROMPT, system_prompt_for
from compiler.profile.models import PlanNode, PlanPolicy, ProfileValidationError
from compiler.profile.resolve import copy_profile
from compiler.profile.tool_catalogue import KNOWN_TOOLS
from compiler.providers import get_dialect, preset_model_key
from compiler.providers.dialect import Dialect, LoweringOptions, ModelRequest
from compiler.providers.tool_params import ToolArguments, sent_tool

if TYPE_CHECKING:  # loaded when a preset is compiled, or world info scanned
    from compiler.st.world.report import WorldInfoReport
    from compiler.tavern.preset import PresetSettings, TavernPreset


@record
class CompileResult:
    """What a compile produced: the request body, the fitted frame, the ledger, the events.

    ``profile`` is the resolved profile bound to the run (its ``tools.visible`` covers the
    run's own tools too); ``tools`` is the concrete list of tool definitions the request
    offered the model (dotted name, provider alias, approval mark), empty when it offered none.
    """

    request: ModelRequest
    frame: ContextFrame
    ledger: BudgetLedger
    events: list[Event]
    warnings: list[Diagnostic] = field(default_factory=list)
    profile: ResolvedAgentProfile | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    #: how each offered tool's call arguments map back, by the name the model calls (its
    #: provider alias): only tools whose parameters were sent rewritten (wrapped, keys
    #: renamed; :mod:`compiler.providers.tool_params`). ``table.restore(arguments)`` gives the
    #: tool's own arguments; ``table.as_json()`` is ``argumentNames``.
    tool_arguments: dict[str, ToolArguments] = field(default_factory=dict)
    #: SillyTavern's ``chat_metadata.timedWorldInfo`` after this compile's world info scan
    #: (sticky / cooldown effects started or ended): store it with the chat and pass it back
    #: as the run context's ``timedWorldInfo`` next time. None when the run has none.
    world_info_state: dict[str, Any] | None = None
    #: every lorebook entry the scan considered and why (None: no lorebook was scanned)
    world_info_report: WorldInfoReport | None = None

    def tool_gate(self) -> ToolGate:
        """The run-time gate for this request: it admits exactly the tools the model was
        offered (by dotted name or provider alias), within the profile's policy and budgets;
        a request that offered no tools admits no call."""
        if self.profile is None:
            raise ValueError("this CompileResult carries no profile to gate tool calls with")
        return ToolGate(self.profile, tools=self.tools)

    def restore_arguments(self, tool: str, arguments: Any) -> Any:
        """The model's call ``arguments`` to ``tool`` (the name it called, or the dotted
        name) under the tool's own names (:attr:`tool_arguments`); as given when the
        tool's parameters were sent as written."""
        alias = next((t["alias"] for t in self.tools if tool in (t["name"], t["alias"])), tool)
        table = self.tool_arguments.get(alias)
        return arguments if table is None else table.restore(arguments)

    def tools_json(self) -> list[dict[str, Any]]:
        """The offered tools as ``apc compile --emit tools`` and ``apc serve`` report them:
        ``{name, alias, requireApproval, argumentNames?}`` (``argumentNames``: sent
        argument path -> original path, JSON Pointers; only for a rewritten schema)."""
        out: list[dict[str, Any]] = []
        for t in self.tools:
            row: dict[str, Any] = {
                "name": t["name"],
                "alias": t["alias"],
                "requireApproval": t["requireApproval"],
            }
            table = self.tool_arguments.get(t["alias"])
            if table:
                row["argumentNames"] = table.as_json()
            out.append(row)
        return out


@record(frozen=True)
class Source:
    """What is compiled: a bound template or a parsed preset, and its name."""

    name: str
    bound: BoundTemplate | None = None
    preset: TavernPreset | None = None

    @property
    def settings(self) -> PresetSettings | None:
        """The preset's generation settings (None: a template)."""
        return self.preset.settings if self.preset is not None else None


def open_source(path: str | os.PathLike[str]) -> Source:
    """The template or preset file at ``path`` (``.json``: a preset), read once."""
    source = read_source(path)
    return string_source(source.text, source.kind, source.name)


def string_source(text: str, kind: SourceKind, name: str | None) -> Source:
    if kind == "preset":
        from compiler.tavern.preset import read_preset

        label = name or "<preset>"
        return Source(label, preset=read_preset(parse_json(text, label), origin=label))
    if kind != "template":
        raise ValueError(f"kind must be 'template' or 'preset', not {kind!r}")
    return Source(name or "<string>", bound=check_template(text, name or "<string>"))


Context = RunContext | dict[str, Any] | str | Path | None
"""A run context: parsed, a dict (paths relative to the working directory), a RUN.json path."""


@record(frozen=True)
class ProfileMemo:
    """A profile a session resolved from the default layers: ``key`` (the card's source name
    and JSON text), the profile as resolved and the warnings its readers gave; and that
    profile bound to the run tools ``names`` (``bound``). Neither profile is ever handed out:
    a compile gets a copy (:func:`~compiler.profile.resolve.copy_profile`)."""

    key: tuple[str, str]
    resolved: ResolvedAgentProfile
    warnings: tuple[Diagnostic, ...]
    names: tuple[str, ...]
    bound: ResolvedAgentProfile


@record
class TurnMemo:
    """What a session's compile keeps for the next turn: the chat it checked, the profile it
    resolved from the default layers (:class:`ProfileMemo`), the prices of the history
    messages it read (:class:`~compiler.fit.PriceMemo`), the run tools' schemas it found
    valid, the inline card and the inline lorebooks it read. One reference swapped whole per
    field (thread-safe)."""

    chat: ChatMemo = field(default_factory=ChatMemo)
    profile: ProfileMemo | None = None
    prices: PriceMemo = field(default_factory=PriceMemo)
    schemas: SchemaMemo = field(default_factory=SchemaMemo)
    cards: CardMemo = field(default_factory=CardMemo)
    books: BookMemo = field(default_factory=BookMemo)


def _profile_key(opts: CompileOptions, ctx: RunContext) -> tuple[str, str] | None:
    """What the profile of a compile with no profile option depends on beyond the source:
    the card (its name and JSON text, key order included); None: not kept."""
    if opts.profile is not None:
        return None  # files, a caller's layers or models: resolved every time
    card = ctx.character_source()
    if card is None:
        return ("", "")
    text = ctx.card_text  # the inline card's JSON text, made when the session read it
    if text is not None and card.data is ctx.character:
        return (card.file, text)
    try:
        return (card.file, json.dumps(card.data, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return None


_KNOWN_TOOLS = frozenset(KNOWN_TOOLS)


def _resolve(
    src: Source,
    ctx: RunContext,
    opts: CompileOptions,
    found: list[Diagnostic],
    memo: TurnMemo | None = None,
) -> ResolvedAgentProfile:
    """The profile of this compile, bound to the run's tools: every input is read once (the
    layers get the preset and the card already parsed); with a ``memo``, a copy of the last
    turn's profile when it came from the same layers (its readers' warnings told again), bound
    again only when the run's tool names changed."""
    names = tuple(dict.fromkeys(t.name for t in ctx.tools))
    if isinstance(opts.profile, ResolvedAgentProfile):
        return opts.profile.with_run_tools(names)
    key = _profile_key(opts, ctx) if memo is not None else None
    last = memo.profile if memo is not None else None
    if memo is not None and last is not None and last.key == key:
        found.extend(last.warnings)  # frozen diagnostics: shared, not copied
        if last.names != names:
            last = dataclasses.replace(last, names=names, bound=_bind(last.resolved, names))
            memo.profile = last
        return copy_profile(last.bound)
    given, before = opts.profile, len(found)
    layers = given if isinstance(given, ProfileLayers) else ProfileLayers(given)
    preset = src.preset.layer_source() if src.preset is not None else None
    resolved = dataclasses.replace(
        layers,
        preset=layers.preset or preset,
        character=layers.character or ctx.character_source(),
    ).resolve()
    bound = _bind(resolved, names)
    if memo is None or key is None:
        return bound
    memo.profile = ProfileMemo(key, resolved, tuple(found[before:]), names, bound)
    return copy_profile(bound)


def _bind(resolved: ResolvedAgentProfile, names: tuple[str, ...]) -> ResolvedAgentProfile:
    """A profile just resolved, bound to the run's tool names: the one computation of tool
    visibility for the run (known tools plus the run's own). A resolved profile's visibility
    is over the known tools already: when the run adds none, it is that profile."""
    if _KNOWN_TOOLS.issuperset(names):
        return resolved
    return resolved.with_run_tools(names)


def compile_source(
    src: Source,
    context: Context,
    opts: CompileOptions,
    found: list[Diagnostic],
    counters: Callable[[str], TokenCounter] = counter_for,
    memo: TurnMemo | None = None,
    base_dir: Path | None = None,
) -> CompileResult:
    """One compile; ``found`` collects the readers' warnings as they read (the source's, the
    run context's, the profile layers', tool-call arguments'); ``counters`` gives the token
    counter of an encoding, ``memo`` what the last turn kept, ``base_dir`` the directory of a
    dict context's paths (None: the current one)."""
    ctx = _load(context, memo, base_dir)
    opts, quiet = _preset_options(opts, src.settings)
    resolved, node = _node_view(opts, _resolve(src, ctx, opts, found, memo))
    dialect = get_dialect(opts.provider)
    model = opts.model or dialect.default_model
    total = _total(opts, resolved, dialect, model, node[1] if node else None, src.settings)
    warnings = [*found, *resolved.warnings, *(src.bound.warnings if src.bound else ())]
    warnings += budget_warnings(total, model)
    if opts.strict and warnings:
        raise StrictError(warnings)
    read_before = len(found)
    counter = dialect.estimating(_counter(opts, opts.encoding or dialect.encoding(model), counters))
    journal = Journal()
    journal.emit("context_assembly_started", template=src.name, provider=opts.provider, model=model)
    try:
        assembler = Assembler(ctx, journal, profile=resolved, count=counter.count)
        assembler.model, assembler.max_prompt = model, total.total
        if node is not None:
            assembler.for_node(*node)
        if src.preset is not None:
            from compiler.tavern.agent_entries import default_mode
            from compiler.tavern.assemble import assemble_preset

            mode = opts.mode or default_mode(resolved, src.preset)
            assemble_preset(assembler, src.preset, mode=mode)
        elif src.bound is not None:
            assembler.add_template(src.bound)
        late = [*found[read_before:], *_assembled(src, context is not None, assembler)]
        warnings += late
        if opts.strict and late:
            raise StrictError(late)
        fitted = fit(
            assembler.frame(),
            dialect=dialect,
            counter=counter,
            model=model,
            budget=dataclasses.replace(total, total=dialect.budget_for(total.total)),
            journal=journal,
            budgets=CategoryBudgets.from_policy(resolved.context),
            summarizer=opts.summarizer,
            cache_stable=opts.step,
            summaries=opts.summaries,
            summary_cache=opts.summary_cache,
            lowering=_lowering(src, assembler, dataclasses.replace(opts.lowering(), quiet=quiet)),
            prices=memo.prices if memo is not None else None,
        )
        request = fitted.request  # lowered and counted once, by the fit
        warnings += checked_losses(dialect, request, fitted, strict=opts.strict)
        check_markers(fitted.frame)  # no <<agent.*>> that was never expanded is sent
    except APCError as exc:
        _failed(exc, dialect, journal)
        raise
    _check_count(fitted.total_tokens, fitted.ledger, total.total)
    if not dialect.exact_counts:
        fitted.ledger.counts, fitted.ledger.safety_margin = "estimate", dialect.safety_margin
    world = _finish(assembler, fitted, journal, total.total)
    return CompileResult(
        request,
        fitted.frame,
        fitted.ledger,
        journal.events,
        warnings,
        profile=resolved,
        tools=(offered := _offered(fitted.frame, dialect)),
        tool_arguments=_argument_tables(offered, dialect),
        **world,
    )


def _load(context: Context, memo: TurnMemo | None, base_dir: Path | None = None) -> RunContext:
    """The run context, read with what a session's last turn checked (its ``memo``)."""
    if memo is None:
        return load_context(context, base_dir)
    return read_context(
        context, base_dir, memo=memo.chat, schemas=memo.schemas, cards=memo.cards, books=memo.books
    )


def _assembled(src: Source, given: bool, assembler: Assembler) -> list[Diagnostic]:
    """The assembly finished: the built-in agent system prompt names only tools the request
    offers; and the warnings: the assembler's, then
    :func:`~compiler.inputs.run_warnings.run_warnings` (``given``: a run context was)."""
    offered = {t["name"] for c in assembler.components for t in c.tools or ()}
    for comp in assembler.components:
        if comp.kind == ComponentKind.SYSTEM_INSTRUCTION and (
            comp.inline_content == DEFAULT_AGENT_SYSTEM_PROMPT
        ):
            comp.inline_content = system_prompt_for(offered)
    texts = None
    if src.preset is not None:
        from compiler.tavern.preset import ordered_prompts

        texts = [p.content for p in ordered_prompts(src.preset)]
    task = any(c.resource == "agent.task" and c.inline_content for c in assembler.components)
    lacking = run_warnings(
        src.name, assembler.given_context, assembler.journal, given, texts, task_sent=task
    )
    return [*assembler.warnings, *lacking]


def _lowering(src: Source, assembler: Assembler, options: LoweringOptions) -> LoweringOptions:
    """The lowering options; a preset's stop strings filled as SillyTavern fills them
    (:func:`compiler.tavern.framing.preset_stops`)."""
    if src.preset is None:
        return options
    from compiler.tavern.framing import preset_stops

    return preset_stops(assembler, options)


def _finish(
    assembler: Assembler, fitted: FitResult, journal: Journal, budget: int | None
) -> dict[str, Any]:
    """The world info state and report (its journal event first); ``context_assembled``."""
    run, report = assembler.world_run, None
    if run is not None:  # the scan ran (its modules are loaded): the report
        from compiler.st.world.report import world_report

        parts = (assembler.components, fitted.frame.components, fitted.ledger.entries)
        report = world_report(run, *parts, journal)
    journal.emit("context_assembled", components=len(fitted.frame.components),
                 totalTokens=fitted.ledger.total_tokens, budget=budget)  # fmt: skip
    # no world info placed: nothing was scanned, the state is the run's
    state = run.state if run is not None else assembler.context.timed_world_info
    return {"world_info_state": state, "world_info_report": report}


def _failed(exc: APCError, dialect: Dialect, journal: Journal) -> None:
    """Journal a failure (``--journal`` records it too) and say when a budget failure is
    measured in a dialect's estimated counts."""
    if exc.code == "context.budget_exceeded" and not dialect.exact_counts:
        exc.hint = (
            f"{exc.hint or ''} ({dialect.name} counts are estimates, an upper bound per "
            f"script, and {dialect.safety_margin:.0%} of the budget is held back)"
        ).strip()
    if not journal.events or journal.events[-1].type != "context_assembly_failed":
        journal.emit("context_assembly_failed", "error", code=exc.code, message=exc.message)
    exc.details.setdefault("events", journal.events)


def _node_view(
    opts: CompileOptions, resolved: ResolvedAgentProfile
) -> tuple[ResolvedAgentProfile, tuple[PlanPolicy, PlanNode] | None]:
    """Compiling for a plan node: the plan checked against the profile, and the profile
    with the node's tools (``allowedTools`` within what the profile shows)."""
    if opts.plan_node is None:
        return resolved, None
    if opts.plan is None:
        raise ContextError(
            code="agent.plan_node_unknown",
            message=f"plan node '{opts.plan_node}' needs a plan (--plan PLAN.json)",
        )
    plan = opts.plan if isinstance(opts.plan, PlanPolicy) else load_plan(opts.plan)
    node = next((n for n in plan.nodes if n.id == opts.plan_node), None)
    if node is None:
        raise ContextError(
            code="agent.plan_node_unknown",
            message=f"the plan has no node '{opts.plan_node}'",
            hint=did_you_mean(opts.plan_node, [n.id for n in plan.nodes]),
        )
    errors = [d for d in check_plan(plan, resolved) if d.severity == "error"]
    if errors:
        raise ProfileValidationError(errors)
    tools = resolved.tools
    visible = node_tools(node, list(tools.visible))
    narrowed = tools.model_copy(
        update={
            "visible": visible,
            "approval_required": [t for t in tools.approval_required if t in visible],
        }
    )
    return resolved.model_copy(update={"tools": narrowed}), (plan, node)


_SAMPLING = ("temperature", "top_p", "top_k", "frequency_penalty", "presence_penalty", "seed")


def _preset_options(
    opts: CompileOptions, settings: PresetSettings | None
) -> tuple[CompileOptions, frozenset[str]]:
    """The options with a preset's own settings where the caller set none (the caller's
    values win), and the names of the generation options the preset supplied."""
    if settings is None:
        return opts, frozenset()
    fill: dict[str, object] = {}
    if opts.model is None and (model := settings.model_for(preset_model_key(opts.provider))):
        fill["model"] = model
    if opts.output_tokens is None and settings.max_tokens is not None:
        fill["max_output_tokens"] = settings.max_tokens
    for name in _SAMPLING:
        if getattr(opts, name) is None and getattr(settings, name) is not None:
            fill[name] = getattr(settings, name)
    if not opts.stop and settings.stop:
        fill["stop"] = settings.stop
    return opts.with_fields(**fill), frozenset(fill) - {"model"}


def _total(
    opts: CompileOptions,
    resolved: ResolvedAgentProfile,
    dialect: Dialect,
    model: str,
    node: PlanNode | None,
    settings: PresetSettings | None = None,
) -> TotalBudget:
    """The total budget (see :func:`compiler.fit.total_budget`), within a plan node's
    ``contextBudget`` when compiling for one."""
    total = _total_budget(opts, resolved.context.total_context_budget, dialect, model, settings)
    cap = node.context_budget if node is not None else None
    if cap is not None and (total.total is None or cap < total.total):
        total = dataclasses.replace(total, total=cap, source="plan node")
    return total


def _total_budget(
    opts: CompileOptions,
    profile_total: int | None,
    dialect: Dialect,
    model: str,
    settings: PresetSettings | None,
) -> TotalBudget:
    """:func:`compiler.fit.total_budget`, and with no explicit budget a preset's
    ``openai_max_context`` less the reserve (``openai_max_tokens`` unless the caller gives
    another), when that is smaller than the profile's and the window's. The reserve is the
    response length the request carries: within the model's maximum output
    (:meth:`~compiler.providers.dialect.Dialect.reserved_output`)."""
    total = total_budget(
        budget=opts.budget,
        profile_total=profile_total,
        window=dialect.window(model),
        reserve=opts.reserve,
        max_output_tokens=dialect.reserved_output(model, opts.output_tokens),
    )
    context = settings.max_context if settings is not None else None
    if opts.budget is None and context is not None:
        own = max(0, context - total.reserve)
        if total.total is None or own < total.total:
            total = dataclasses.replace(total, total=own, source="preset")
    return total


def _offered(frame: ContextFrame, dialect: Dialect) -> list[ToolSpec]:
    """The tools the request offered, under the names the model saw (the dialect's): the
    definitions of the frame's tool components, in order (as
    :func:`compiler.providers.layout.layout` lists them)."""
    return [
        ToolSpec(**{**t, "alias": dialect.tool_name(t["name"])})
        for c in frame.components
        if c.kind == ComponentKind.TOOL_DEFINITIONS
        for t in c.tools or ()
    ]


def _argument_tables(tools: list[ToolSpec], dialect: Dialect) -> dict[str, ToolArguments]:
    """The tables of the offered tools whose parameters the dialect sent rewritten."""
    tables = {t["alias"]: sent_tool(t, dialect.property_key_rule)[1] for t in tools}
    return {alias: table for alias, table in tables.items() if table}


def _counter(
    opts: CompileOptions, encoding: str, counters: Callable[[str], TokenCounter] = counter_for
) -> TokenCounter:
    """The caller's counter, one around the caller's count function, or tiktoken's."""
    given = opts.token_counter
    if isinstance(given, TokenCounter):
        return given
    if given is not None:
        return TokenCounter(encoding, count_fn=given)
    return counters(encoding)


def _check_count(counted: int, ledger: BudgetLedger, budget: int | None) -> None:
    """The allocator's promise: the request it lowered and counted (``counted``) is what its
    ledger says, within the budget."""
    if counted != ledger.total_tokens or (budget is not None and counted > budget):
        raise InternalError(
            code="internal.count_mismatch",
            message=f"the request has {counted} tokens, but the ledger promised "
            f"{ledger.total_tokens} within a budget of {budget}",
            hint="this is a bug in agent-prompt-compiler; please report it with the inputs",
        )


def check_source_budget(
    src: Source,
    context: Context,
    opts: CompileOptions,
    found: list[Diagnostic],
    counters: Callable[[str], TokenCounter] = counter_for,
) -> Feasibility:
    """The budget set-up of a compile of ``src``, checked before fitting: the required
    floors (exact) plus the reserved response against the model's window, and against the
    total budget (``opts.budget``). ``strict`` does not apply: the warnings are the
    feasibility's (:func:`compiler.check_sources` applies the strict rule to its report)."""
    asked = opts
    # unbounded on purpose, so never strict: its own context.budget_over_window is no finding
    unbounded = opts.with_fields(budget=BY_NAME["budget"].high, strict=False)
    full = compile_source(src, context, unbounded, found, counters)
    settings = src.preset.settings if src.preset is not None else None
    opts, _ = _preset_options(opts, settings)
    dialect = get_dialect(opts.provider)
    model = opts.model or dialect.default_model
    counter = dialect.estimating(_counter(opts, opts.encoding or dialect.encoding(model), counters))
    lean = without_inserted(full.frame)  # text inserted into a newest turn can be left out
    frame = full.frame if lean is None else lean[0]
    floor = floor_tokens(frame, dialect=dialect, counter=counter, model=model)
    total = _total_budget(opts, full.ledger.profile_budget, dialect, model, settings)
    # the full compile ran at an unbounded budget on purpose: that is not the caller's; and
    # a budget check needs no run context (then it counts the source alone)
    own = ("context.budget_over_window", "context.no_run_context")
    warnings = [w for w in full.warnings if w.code not in own]
    feasible = Feasibility(floor, total.total, total.window, total.reserve, model, warnings)
    if feasible.problem is None and total.total is not None:
        # what the budget itself leaves out that a reader would miss, from a compile at it
        try:
            fitted = compile_source(src, context, asked.with_fields(strict=False), [], counters)
        except BudgetError as exc:  # the floor fits the budget, not what the fit may use
            feasible.failure, feasible.failure_hint = exc.message, exc.hint
        else:
            feasible.warnings += [w for w in fitted.warnings if w.code in LOSS_CODES]
    return feasible
