"""Checking a SillyTavern preset without compiling it: what ``apc check`` and
:func:`compiler.check` report, in the mode a compile would use.

Internal: the API is :func:`compiler.check`; the command is ``apc check``.

Every diagnostic names where it is: ``FILE#prompts[3].content:LINE:COL`` inside an entry's
text, ``FILE#prompts[3].identifier`` for an entry, ``FILE#prompt_order[0].order[5]`` for a
prompt-order item. Reported:

- the errors of the preset's agent schema (``profile.*``, ``agent.*``);
- every entry's template errors and warnings (enabled or not), and each SillyTavern macro a
  compile would send as written (``template.unknown_st_macro``);
- text whose SillyTavern macros assemble an ``<<agent.`` opener (``<{{noop}}<agent.plan>>``),
  which every compile refuses (``agent.prompt_marker_unmaterialized``);
- an ``<<agent.*>>`` macro inside an in-chat injection (``injection_position`` 1), which
  cannot expand inside one message: in agent mode the compile refuses the request, so it is
  the error ``agent.prompt_marker_unmaterialized`` (for an entry the prompt order sends); in
  legacy mode the macro is dropped (``agent.injection_macro``, a warning);
- identifiers the active prompt order names but ``prompts[]`` lacks
  (``template.unknown_prompt_id``: SillyTavern skips them, so does the compile) and markers
  the compiler does not fill (``template.unknown_marker``: they send nothing);
- in agent mode, the Agent entries a compile would insert (``agent.prompt_entry_inserted``;
  an entry holding an Agent entry's macro counts as that entry:
  :mod:`compiler.tavern.agent_entries`); in legacy mode, each sent entry whose
  ``<<agent.*>>`` macros the compile removes (``agent.macros_in_legacy``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from compiler._assemble.assemble import PresetMode
from compiler._assemble.macros import BoundTemplate, MacroCall, bind
from compiler._assemble.markers import OPEN, openers
from compiler.errors import APCError, Diagnostic, TemplateError
from compiler.profile.embedded import schema_from_preset
from compiler.st.macros import (
    ENVIRONMENT_MACROS,
    STANDARD_MACROS,
    MacroEnv,
    literal_macros,
    substitute,
)
from compiler.syntax.ast import Text
from compiler.syntax.positions import LineIndex
from compiler.tavern.agent_entries import (
    entry_inserted,
    macros_in_legacy,
    missing_entries,
    parse_entry,
    schema_mode,
)
from compiler.tavern.preset import (
    AGENT_MARKERS,
    MARKERS,
    TavernPreset,
    active_order,
    ordered_prompts,
)


def check_preset(preset: TavernPreset, mode: PresetMode | None = None) -> list[Diagnostic]:
    """Every error and warning of ``preset`` compiled in ``mode`` (None: the mode a compile
    without ``mode`` would choose from the preset): its agent schema's, its entries' in
    ``prompts[]`` order, then the prompt order's and the markers'."""
    mode = mode or schema_mode(preset)
    ordered = ordered_prompts(preset)
    sent = {p.identifier for p in ordered}
    out = _schema_problems(preset)
    for prompt in preset.prompts:  # an Agent entry's own text is sent too (agent mode)
        if (prompt.is_marker and prompt.identifier not in AGENT_MARKERS) or not prompt.content:
            continue
        try:
            bound = bind(parse_entry(prompt.content, preset.where(prompt)))
        except TemplateError as exc:
            out.extend(exc.diagnostics)
            continue
        out.extend(bound.warnings)
        out.extend(_literal_macros(bound))
        out.extend(_assembled_markers(bound))
        if prompt.in_chat:
            out.extend(_injection_macros(bound, mode, prompt.identifier in sent))
    out.extend(_setting_markers(preset))
    out.extend(_order_problems(preset))
    out.extend(_unknown_markers(preset))
    if mode == "agent":
        out.extend(entry_inserted(preset, i) for i in missing_entries(preset, ordered))
    else:
        out.extend(macros_in_legacy(preset, ordered))
    return out


def _schema_problems(preset: TavernPreset) -> list[Diagnostic]:
    """The errors of a preset's agent schema (what a compile would refuse)."""
    layer = preset.layer_source()
    try:
        schema_from_preset(layer.data, layer.file)
    except APCError as exc:
        return exc.diagnostics
    return []


def _span_of(bound: BoundTemplate, text: Text, raw: str) -> tuple[int, int] | None:
    """Where ``raw`` is in the entry's source, inside the text node (None: not verbatim)."""
    start = bound.template.source.find(raw, text.span.start, text.span.end)
    return None if start < 0 else (start, start + len(raw))


def _literal_macros(bound: BoundTemplate) -> list[Diagnostic]:
    """``template.unknown_st_macro`` for each SillyTavern macro of the entry's text that a
    compile would send as written (``{{agent.*}}`` has its own warning), once per macro."""
    out: list[Diagnostic] = []
    seen: set[str] = set()
    index: LineIndex | None = None
    for item in bound.items:
        if not isinstance(item, Text):
            continue
        for raw in literal_macros(item.value):
            if raw in seen or raw[2:].lstrip().lower().startswith("agent."):
                continue
            seen.add(raw)
            at = _span_of(bound, item, raw)
            if at is not None:
                index = index or LineIndex(bound.template.source, bound.template.name)
            out.append(
                Diagnostic(
                    code="template.unknown_st_macro",
                    severity="warning",
                    message=f"SillyTavern macro {raw[:80]!r} is not supported: it is sent as "
                    "written",
                    span=index.span(*at) if index is not None and at is not None else None,
                    file=item.span.file,
                    hint="remove it (the docs' SillyTavern presets page lists the macros it fills)",
                    source=bound.template.source if at is not None else None,
                )
            )
    return out


def _assembled_markers(bound: BoundTemplate) -> list[Diagnostic]:
    """``agent.prompt_marker_unmaterialized`` for entry text in which SillyTavern's own
    macros assemble an ``<<agent.`` opener (``<{{noop}}<agent.plan>>``, a ``{{trim}}``
    between ``<`` and ``<agent.``): every compile refuses it (:mod:`compiler._assemble.markers`).
    The macros are filled with empty values, so only the text's own syntax counts."""
    values = dict.fromkeys((*STANDARD_MACROS, *ENVIRONMENT_MACROS), "")
    env = MacroEnv(now=datetime(2000, 1, 1, tzinfo=UTC))
    return [
        Diagnostic(
            code="agent.prompt_marker_unmaterialized",
            message="SillyTavern macros in this text assemble an '<<agent.' opener that was "
            "never a macro: the compile refuses it",
            span=item.span,
            hint="write the macro directly (<<agent.plan>>), or \\<<agent. for the literal text",
            source=bound.template.source,
        )
        for item in bound.items
        if isinstance(item, Text)
        and OPEN in (filled := substitute(item.value, values, env))
        and openers(filled) > item.literal_opens
    ]


def _setting_markers(preset: TavernPreset) -> list[Diagnostic]:
    """``agent.prompt_marker_unmaterialized`` for each of the preset's setting texts (its
    ``new_chat_prompt``, Claude's texts, its stop strings) that holds an ``<<agent.`` opener,
    written or assembled by its macros: every compile refuses it
    (:func:`compiler.tavern.framing.setting_text`)."""
    values = dict.fromkeys((*STANDARD_MACROS, *ENVIRONMENT_MACROS), "")
    env = MacroEnv(now=datetime(2000, 1, 1, tzinfo=UTC))
    settings = preset.settings
    texts = [
        ("new_chat_prompt", preset.extra.get("new_chat_prompt")),
        ("human_sysprompt_message", settings.human_sysprompt_message),
        ("assistant_prefill", settings.assistant_prefill),
        *(("custom_stopping_strings", stop) for stop in settings.stop),
    ]
    return [
        Diagnostic(
            code="agent.prompt_marker_unmaterialized",
            message=f"'{key}' holds an '<<agent.' opener: a setting's text is sent as it is, "
            "never expanded, and the compile refuses it",
            file=f"{preset.source}#{key}",
            hint="write the macro in a prompt entry (a setting's text cannot hold '<<agent.')",
        )
        for key, text in texts
        if isinstance(text, str) and OPEN in substitute(text, values, env)
    ]


def _injection_macros(bound: BoundTemplate, mode: PresetMode, sent: bool) -> list[Diagnostic]:
    """Each ``<<agent.*>>`` macro of an in-chat injection: an error where an agent compile
    would refuse the request, else a warning that it is dropped."""
    out: list[Diagnostic] = []
    for item in bound.items:
        if not isinstance(item, MacroCall):
            continue
        if mode == "agent" and sent:
            out.append(
                Diagnostic(
                    code="agent.prompt_marker_unmaterialized",
                    message=f"'<<{item.name}>>' is inside an in-chat injection: a macro "
                    "cannot expand inside one injected message, and the compile refuses it",
                    span=item.span,
                    hint="move the macro to an entry that is not injected in chat, or write "
                    "\\<<agent. for the literal text",
                    source=bound.template.source,
                )
            )
        else:
            why = "legacy mode drops it" if mode == "legacy" else "the entry is not sent"
            out.append(
                Diagnostic(
                    code="agent.injection_macro",
                    severity="warning",
                    message=f"'<<{item.name}>>' is inside an in-chat injection, where no "
                    f"macro can expand: {why} (an agent compile would refuse it)",
                    span=item.span,
                    hint="move the macro to an entry that is not injected in chat",
                    source=bound.template.source,
                )
            )
    return out


def _order_problems(preset: TavernPreset) -> list[Diagnostic]:
    """``template.unknown_prompt_id`` for each identifier of the active prompt order (the one
    a compile follows) that ``prompts[]`` lacks."""
    order = active_order(preset)
    if order is None:
        return []
    k = preset.prompt_order.index(order)
    known = {p.identifier for p in preset.prompts}
    return [
        Diagnostic(
            code="template.unknown_prompt_id",
            severity="warning",
            message=f"the prompt order names '{entry.identifier[:80]}', which prompts[] does "
            "not have: it is skipped, as SillyTavern skips it",
            file=f"{preset.source}#prompt_order[{k}].order[{j}]",
            hint="add the entry to prompts[], or remove it from the prompt order",
        )
        for j, entry in enumerate(order.order)
        if entry.identifier not in known
    ]


def _unknown_markers(preset: TavernPreset) -> list[Diagnostic]:
    """``template.unknown_marker`` for each marker entry the compiler does not fill."""
    return [
        Diagnostic(
            code="template.unknown_marker",
            severity="warning",
            message=f"marker '{p.identifier[:80]}' is not one the compiler fills (SillyTavern "
            "fills such a marker from an extension): nothing is sent in its place",
            file=preset.where(p, "identifier"),
            hint="the markers filled are " + ", ".join(sorted(MARKERS | AGENT_MARKERS)),
        )
        for p in preset.prompts
        if p.marker and p.identifier not in MARKERS | AGENT_MARKERS
    ]
