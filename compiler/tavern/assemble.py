"""A SillyTavern chat-completion preset -> ContextFrame components, in agent or legacy mode.

Each enabled entry of the prompt order (:func:`ordered_prompts`) becomes one message group
in its own role:

- SillyTavern markers map to components: ``chatHistory`` -> ChatHistory (the run's chat with
  the in-chat injections, ``injection_position`` 1, and SillyTavern's in-chat extension
  prompts, the notes and world info ``@D``, inserted at their depth; the Author's Note at
  position 0/2 is a message of its own after/before ``main``: :mod:`compiler.tavern.notes`),
  ``worldInfoBefore``/``worldInfoAfter`` -> WorldInfo, ``charDescription``,
  ``charPersonality``, ``scenario``, ``dialogueExamples`` -> CharacterCard fields,
  ``personaDescription`` -> UserProfile;
- Agent markers: ``agentSystemPrompt`` -> SystemInstruction from the resolved profile (the
  entry's role and enabled state kept), ``agentTask`` -> the run's ``task`` as a user
  message, ``agentResults`` -> ToolResults; an Agent entry's own text is kept, its macro
  where the text holds it, else after it (the task after the text, in the same message);
- other entries are preset text: ``<<agent.*>>`` macros inside are parsed with the entry as
  the file name (``FILE#prompts[3].content``), every entry's errors reported together; then
  SillyTavern macros (``{{char}}``, ``{{user}}``, ...) are substituted in the literal text
  only, never in what a macro expands to. A card's ``system_prompt`` /
  ``post_history_instructions`` replace ``main`` / ``jailbreak`` (``{{original}}`` is the
  entry's own text, macros included) unless the entry has ``forbid_overrides``.

Mode ``legacy`` drops the three Agent entries and every ``<<agent.*>>`` macro (each entry's,
``agent.macros_in_legacy``, and a run's task, ``agent.task_ignored``, are reported). Mode
``agent`` inserts the Agent entries a preset lacks where TauriTavern's PromptManager puts
them (``agent.prompt_entry_inserted``; an entry holding one's macro counts as it:
:mod:`compiler.tavern.agent_entries`) and always offers the profile's tools (an
``<<agent.tools.available>>`` entry decides where).

Preset-authored text is tagged ``metadata.origin = "preset"``; injected chat messages carry
``origin: "injection"`` and their budget ``category`` (``injection``, ``worldInfo``,
``authorsNote``, ``charactersNote``, ``persona``; :mod:`compiler.fit.budgets`). A macro
that cannot be materialized (inside an in-chat injection, in agent mode) marks its message
``origin: "unmaterialized"``, and :func:`compiler._assemble.markers.check_markers` refuses a request
that still carries such a message after fitting. Data (chat, files, tool results) and
escaped literal text are never flagged.

Internal: ``compiler.tavern`` and ``compiler.compile`` are the public way in.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from compiler._assemble.assemble import Assembler, PresetMode
from compiler._assemble.macros import BoundTemplate, MacroCall
from compiler._assemble.markers import ALLOWANCE, allowance, openers
from compiler._assemble.required import framed_pieces, requires
from compiler._base.frame import (
    AS_WRITTEN,
    CLAUDE,
    COUNT_UNSQUASHED,
    ROLEPLAY,
    SQUASH_SYSTEM,
    TAVERN_GEMINI,
    Component,
    ComponentKind,
    Message,
    Strategy,
)
from compiler._records import record
from compiler.errors import Diagnostic, Span, TemplateError
from compiler.st.macros import inert
from compiler.syntax.ast import Text
from compiler.tavern.agent_entries import (
    ENTRY_MACROS,
    agent_prompts,
    macros_in_legacy,
    parsed_entry,
    standing_for,
)
from compiler.tavern.chat_view import ChatView, FramedList
from compiler.tavern.framing import (
    CARD_RESOURCE,
    add_examples,
    add_new_chat,
    claude_settings,
    framed_chat,
    gemini_settings,
    greeting,
    send_if_empty,
    start_with_greeting,
)
from compiler.tavern.injections import (
    MAX_INJECTION_DEPTH,
    ExtensionPrompt,
    Source,
    inject_newest,
    message_category,
)
from compiler.tavern.notes import (
    Notes,
    add_beside_main,
    chat_notes,
    persona_in_prompt,
    scan_prompts,
)
from compiler.tavern.preset import (
    AGENT_MARKERS,
    PresetPrompt,
    TavernPreset,
    ordered_prompts,
)
from compiler.tavern.world import depth_prompts

#: SillyTavern markers -> the macro each one stands for.
MARKER_MACROS: dict[str, str] = {
    "chatHistory": "<<agent.chat.history>>",
    "worldInfoBefore": "<<agent.world.activated position=before>>",
    "worldInfoAfter": "<<agent.world.activated position=after>>",
    "charDescription": "<<agent.character field=description>>",
    "charPersonality": "<<agent.character field=personality>>",
    "scenario": "<<agent.character field=scenario>>",
    "dialogueExamples": "<<agent.character field=mes_example>>",
    "personaDescription": "<<agent.user>>",
    "agentSystemPrompt": "<<agent.system_prompt>>",
    "agentResults": "<<agent.tool_results>>",
}

#: Card fields that override preset entries: entry -> card field.
OVERRIDES: dict[str, str] = {"main": "system_prompt", "jailbreak": "post_history_instructions"}

_ORIGINAL = re.compile(r"\{\{original\}\}", re.IGNORECASE)


@record
class _Entry:
    prompt: PresetPrompt
    bound: BoundTemplate


def assemble_preset(assembler: Assembler, preset: TavernPreset, *, mode: PresetMode) -> None:
    """Append the preset's components to ``assembler`` (see the module docstring)."""
    assembler.mode = mode
    start_with_greeting(assembler)
    send_if_empty(assembler, preset)
    assembler.frame_metadata[ROLEPLAY] = True  # cuts without token markers (compiler.fit)
    if mode == "legacy":  # entries keep their edges, as SillyTavern sends them
        assembler.frame_metadata[AS_WRITTEN] = True
    assembler.scan_prompts = scan_prompts(assembler)
    if preset.settings.squash_system_messages:
        assembler.frame_metadata[SQUASH_SYSTEM] = True
        # SillyTavern counts each prompt before it squashes them (OA populateChatCompletion)
        assembler.frame_metadata[COUNT_UNSQUASHED] = mode == "legacy"
    assembler.frame_metadata[CLAUDE] = claude_settings(assembler, preset)
    prompts = ordered_prompts(preset)
    if mode == "legacy":
        assembler.warnings.extend(macros_in_legacy(preset, prompts))
        prompts = [p for p in prompts if p.identifier not in AGENT_MARKERS]
        if assembler.context.task:
            assembler.warnings.append(_task_ignored(preset))
    else:
        prompts = agent_prompts(preset, prompts, assembler.warnings)
    errors: list[Diagnostic] = []
    entries: list[_Entry] = []
    injections: list[PresetPrompt] = []
    unmaterialized: list[str] = []
    located: dict[str, str] = {}  # an unmaterialized injection's text -> where its macro is
    for prompt in prompts:
        if prompt.in_chat and prompt.injection_depth > MAX_INJECTION_DEPTH:
            assembler.warnings.append(_too_deep(prompt))
            continue
        if prompt.in_chat:
            plain = _plain_text(preset, prompt, mode, errors)
            if plain is not None:
                text, raw, allowed = plain
                content, from_values = _filled_at(assembler, text, preset.where(prompt))
                injections.append(prompt.model_copy(update={"content": content}))
                if raw or openers(content) > allowed + from_values:  # or one ST assembled
                    unmaterialized.append(content)
                    located.setdefault(content, raw or preset.where(prompt))
            continue
        if prompt.identifier == "agentTask":  # the user's message, the task after its text
            prompt = prompt.model_copy(update={"role": "user"})
        bound = _bind_entry(preset, prompt, errors)
        if bound is not None:
            if mode == "legacy" and not prompt.is_marker:
                bound = dataclasses.replace(
                    bound, items=tuple(i for i in bound.items if isinstance(i, Text))
                )
            entries.append(_Entry(prompt, bound))
    if errors:
        errors.sort(key=lambda d: (d.span.file, d.span.start) if d.span else ("", 0))
        raise TemplateError(errors)
    in_chat = any(e.prompt.identifier == "chatHistory" for e in entries) or (
        mode == "agent" and "chatHistory" in standing_for(preset, prompts)
    )
    notes = chat_notes(assembler, unmaterialized, in_chat=in_chat)
    _anchor_note(assembler, preset, entries, notes)
    extensions = notes.extensions + (depth_prompts(assembler, unmaterialized) if in_chat else [])
    for entry in entries:
        if entry.prompt.identifier == "main":
            add_beside_main(assembler, notes, before=True)
        _add_entry(assembler, preset, entry, (injections, extensions), (unmaterialized, located))
        if entry.prompt.identifier == "main":
            add_beside_main(assembler, notes, before=False)
    if mode == "agent" and not any(
        c.kind == ComponentKind.TOOL_DEFINITIONS for c in assembler.components
    ):  # agent mode always offers the profile's tools; an entry only decides where
        assembler.add_template(parsed_entry(preset, TOOLS_MACRO, f"{preset.source}#tools"))
    # filled after the prompt, as SillyTavern fills its stop strings after building it
    assembler.frame_metadata[TAVERN_GEMINI] = gemini_settings(assembler, preset)


TOOLS_MACRO = "<<agent.tools.available>>"


def _anchor_note(
    assembler: Assembler, preset: TavernPreset, entries: list[_Entry], notes: Notes
) -> None:
    """An Author's Note beside ``main`` needs the entry: a disabled ``main`` stays as an empty
    anchor where the order has it, as SillyTavern keeps it (PromptManager
    getPromptCollection); with no ``main`` at all the note is ``context.note_unplaced``."""
    if notes.beside_main is None or any(e.prompt.identifier == "main" for e in entries):
        return
    order = [p.identifier for p in ordered_prompts(preset, include_disabled=True)]
    if "main" not in order:
        notes.beside_main = None
        assembler.warnings.append(
            Diagnostic(
                code="context.note_unplaced",
                severity="warning",
                message="the Author's Note is not in the request: its position is beside the "
                "main prompt, and the preset's prompt order has no 'main' entry",
                file=preset.source,
                hint="add 'main' to the prompt order, or put the note in chat (position 1)",
            )
        )
        return
    before = set(order[: order.index("main")])
    at = max((i + 1 for i, e in enumerate(entries) if e.prompt.identifier in before), default=0)
    anchor = PresetPrompt(identifier="main", forbid_overrides=True)
    entries.insert(at, _Entry(anchor, parsed_entry(preset, "", f"{preset.source}#main")))


def _task_ignored(preset: TavernPreset) -> Diagnostic:
    return Diagnostic(
        code="agent.task_ignored",
        severity="warning",
        message="the run has a task, but a preset compiled in legacy mode has no agentTask "
        "entry: the task is not in the request",
        file=preset.source,
        hint="compile with --mode agent to send the task",
    )


def _bind_entry(
    preset: TavernPreset, prompt: PresetPrompt, errors: list[Diagnostic]
) -> BoundTemplate | None:
    text = MARKER_MACROS.get(prompt.identifier) if prompt.is_marker else prompt.content
    if text is None:  # an unknown marker: SillyTavern fills it from an extension; we cannot
        text = ""
    if prompt.identifier in AGENT_MARKERS and prompt.content.strip():
        text = _own_text(preset, prompt)
    try:
        return parsed_entry(preset, text, preset.where(prompt))
    except TemplateError as exc:
        errors.extend(exc.diagnostics)
        return None


def _own_text(preset: TavernPreset, prompt: PresetPrompt) -> str:
    """An Agent entry's own text, its macro where the author wrote it (``agentTask`` has
    none: the task follows the text), else after the text on a line of its own."""
    text, macro = prompt.content, ENTRY_MACROS.get(prompt.identifier)
    if macro is None:
        return text
    try:
        bound = parsed_entry(preset, text, preset.where(prompt))
    except TemplateError:
        return text  # its errors are reported as the entry is bound
    if any(isinstance(i, MacroCall) and i.name == macro for i in bound.items):
        return text
    sep = "" if text.endswith("\n") else "\n"
    return f"{text}{sep}<<{macro}>>"


def _plain_text(
    preset: TavernPreset, prompt: PresetPrompt, mode: PresetMode, errors: list[Diagnostic]
) -> tuple[str, str | None, int] | None:
    """An in-chat injection's text, where the first macro in it that stayed unmaterialized
    is (``FILE#prompts[3].content:LINE:COL``; None: none stayed), and how many ``<<agent.``
    openers its author escaped (:mod:`compiler._assemble.markers`).

    A macro cannot expand inside a single injected message: legacy mode drops it; agent mode
    keeps it as written, and :func:`compiler._assemble.markers.check_markers` refuses the request.
    Escaped text (``\\<<agent.``) is literal by the author's choice, never a leak.
    """
    bound = _bind_entry(preset, prompt, errors)
    if bound is None:
        return None
    parts: list[str] = []
    raw: str | None = None
    allowed = 0
    for item in bound.items:
        if isinstance(item, Text):
            parts.append(item.value)
            allowed += item.literal_opens
        elif mode == "agent":
            parts.append(bound.template.source[item.span.start : item.span.end])
            raw = raw or f"{item.span.file}:{item.span.line}:{item.span.column}"
    return "".join(parts), raw, allowed


def _substituted(bound: BoundTemplate, assembler: Assembler) -> BoundTemplate:
    """``bound`` with SillyTavern macros filled in its text; its literal openers are the
    escapes it held plus those the filled-in values brought (:mod:`compiler._assemble.markers`). A
    macro left literal is reported where it is (``FILE#prompts[3].content``)."""
    items: list[Text | MacroCall] = []
    changed = False
    for item in bound.items:
        if isinstance(item, Text):
            text, from_values = _filled_at(assembler, item.value, item.span.file)
            if text != item.value or from_values:
                item, changed = Text(text, item.span, item.literal_opens + from_values), True
        items.append(item)
    return dataclasses.replace(bound, items=tuple(items)) if changed else bound


def _filled_at(assembler: Assembler, text: str, file: str) -> tuple[str, int]:
    """:meth:`Assembler.filled`, its ``template.unknown_st_macro`` warnings located at
    ``file``."""
    before = len(assembler.warnings)
    out = assembler.filled(text)
    assembler.warnings[before:] = [
        dataclasses.replace(w, file=file)
        if w.code == "template.unknown_st_macro" and w.file is None and w.span is None
        else w
        for w in assembler.warnings[before:]
    ]
    return out


def _add_entry(
    assembler: Assembler,
    preset: TavernPreset,
    entry: _Entry,
    injections: tuple[list[PresetPrompt], list[ExtensionPrompt]],
    unmaterialized: tuple[list[str], dict[str, str]],
) -> None:
    prompt = entry.prompt
    if prompt.identifier != "agentTask":
        _add_text_entry(assembler, preset, entry, injections, unmaterialized)
        return
    task = assembler.context.task or ""  # the run's task, as data
    own = bool(task.strip() and entry.bound.items)  # the entry's text, only with a task
    if own:
        _add_text_entry(assembler, preset, entry, injections, unmaterialized)
        task = ("" if prompt.content[-1:].isspace() else "\n") + task
    assembler.add_text(
        task,
        role="user",
        source=f"{assembler.context.file}#task",
        resource="agent.task",
        metadata={"origin": "data", "entry": prompt.identifier},
        join=own,
    )
    added = assembler.components[-1] if assembler.components else None
    if added is not None and added.resource == "agent.task" and added.inline_content:
        added.required = requires(assembler.profile, assembler.mode, "task")


def _add_text_entry(
    assembler: Assembler,
    preset: TavernPreset,
    entry: _Entry,
    injections: tuple[list[PresetPrompt], list[ExtensionPrompt]],
    unmaterialized: tuple[list[str], dict[str, str]],
) -> None:
    """One entry's components: its text and macros, a card override, a marker's framing."""
    prompt = entry.prompt
    card = assembler.context.card
    field = OVERRIDES.get(prompt.identifier)
    override = str(getattr(card, field)) if card is not None and field else ""
    bound = _substituted(entry.bound, assembler)
    card_file = ""
    if override and not prompt.forbid_overrides and card is not None and field:
        if assembler.visible(CARD_RESOURCE):
            # the card's text, with the entry itself (macros included) where {{original}} is
            card_file = f"{card.origin}#{field}"
            bound = _overridden(assembler, bound, override, card_file)
        else:  # a hidden card does not get to replace the preset's entry either
            assembler.journal.emit(
                "card_override_skipped",
                "warn",
                entry=prompt.identifier,
                field=field,
                reason="resource_hidden",
                resource=CARD_RESOURCE,
            )

    if prompt.is_marker and prompt.identifier == "dialogueExamples":
        add_examples(assembler, preset, prompt)
        return
    if prompt.is_marker and prompt.identifier == "chatHistory":
        add_new_chat(assembler, preset, prompt)

    def shape(comp: Component) -> None:
        """The entry's finish on each of its components, before it joins the frame."""
        comp.metadata.setdefault("entry", prompt.identifier)
        if comp.kind == ComponentKind.PRESET_GUIDE:
            from_card = bool(card_file) and comp.source.startswith(card_file + ":")
            comp.metadata["origin"] = "card" if from_card else "preset"
        if comp.inline_content and _card_text(comp):
            comp.inline_content = _as_card_text(comp)
        if comp.kind == ComponentKind.CHAT_HISTORY and not comp.messages:
            comp.messages = greeting(assembler)
        if comp.kind == ComponentKind.CHAT_HISTORY and comp.messages:
            comp.messages = framed_chat(assembler, preset, comp.messages)
        # legacy fits as SillyTavern fills its budget: the fixed prompts must fit, world
        # info keeps what fits (_LEGACY_STRATEGY), history is cut oldest first with no
        # note, the examples come last (see add_examples)
        if assembler.mode == "legacy" and comp.strategy is None:
            comp.strategy = _LEGACY_STRATEGY.get(comp.kind, "fail")
        if comp.kind == ComponentKind.CHAT_HISTORY and any(injections):
            _inject(comp, injections, unmaterialized)  # an empty chat still gets them
        if prompt.identifier == "personaDescription" and not persona_in_prompt(assembler):
            comp.inline_content = ""  # the persona goes around the Author's Note or in chat
        if prompt.is_marker and comp.inline_content and comp.kind in _FORMATTED_KINDS:
            before = comp.inline_content
            comp.inline_content, extra = _formatted(assembler, preset, prompt.identifier, before)
            comp.metadata[ALLOWANCE] = allowance(comp) + extra
            framed_pieces(comp, before)

    assembler.add_template(bound, prompt.role, shape)


def _overridden(
    assembler: Assembler, bound: BoundTemplate, text: str, card_file: str
) -> BoundTemplate:
    """The card's override ``text`` in place of the entry, the entry's own items (macros
    included) where the first ``{{original}}`` stands. The card's text is data: only the
    openers of its raw text are its own (:mod:`compiler._assemble.markers`)."""
    span = Span(0, len(text), 1, 1, 1, 1, card_file)
    parts = _ORIGINAL.split(text, maxsplit=1)
    pieces = [(assembler.filled(part), openers(inert(part))) for part in parts]
    items: list[Text | MacroCall] = [Text(t, span, own + extra) for (t, extra), own in pieces[:1]]
    if len(parts) > 1:
        items.extend(bound.items)
        items.extend(Text(t, span, own + extra) for (t, extra), own in pieces[1:])
    return dataclasses.replace(bound, items=tuple(items))


def _card_text(comp: Component) -> bool:
    """Whether ``comp`` is card or persona text, which SillyTavern sends without ``\r``."""
    if comp.kind == ComponentKind.PRESET_GUIDE:
        return comp.metadata.get("origin") == "card"
    return comp.kind in (ComponentKind.CHARACTER_CARD, ComponentKind.USER_PROFILE)


def _as_card_text(comp: Component) -> str:
    """Card or persona text as SillyTavern's ``baseChatReplace`` sends it: without ``\r``;
    a card field (description, personality, scenario) trimmed too (getCharacterCardFields),
    the persona and the pieces of a card override as they are."""
    text = (comp.inline_content or "").replace("\r", "")
    return text.strip() if comp.kind == ComponentKind.CHARACTER_CARD else text


#: Legacy strategies other than ``fail``. World info is not a fixed prompt: the scan's
#: budget is a share of the compile's, so a bigger budget can activate more of it than the
#: room the fixed prompts leave; it keeps its leading entries that fit (granted before the
#: history), and a block none of whose entries fit is dropped with a warning. A bigger
#: budget thus never fails where a smaller one fit.
_LEGACY_STRATEGY: dict[ComponentKind, Strategy] = {
    ComponentKind.CHAT_HISTORY: "truncate",
    ComponentKind.WORLD_INFO: "drop_optional",
}
_FORMATTED_KINDS = frozenset({ComponentKind.CHARACTER_CARD, ComponentKind.WORLD_INFO})

#: marker -> (the preset key of its format, the placeholder in it, SillyTavern's default:
#: the shipped value a preset without the key leaves in place, public/scripts/openai.js
#: ``default_personality_format`` / ``default_scenario_format`` / ``default_wi_format``)
MARKER_FORMATS: dict[str, tuple[str, str, str]] = {
    "charPersonality": (
        "personality_format",
        "{{personality}}",
        "[{{char}}'s personality: {{personality}}]",
    ),
    "scenario": (
        "scenario_format",
        "{{scenario}}",
        "[Circumstances and context of the dialogue: {{scenario}}]",
    ),
    "worldInfoBefore": ("wi_format", "{0}", "{0}"),
    "worldInfoAfter": ("wi_format", "{0}", "{0}"),
}


def _formatted(
    assembler: Assembler, preset: TavernPreset, marker: str, content: str
) -> tuple[str, int]:
    """A marker's content in the preset's SillyTavern format: ``personality_format``,
    ``scenario_format``, ``wi_format``; and the ``<<agent.`` openers the values filled into
    the format brought (the format is preset text: none of its own)."""
    if marker not in MARKER_FORMATS:
        return content, 0
    key, placeholder, default = MARKER_FORMATS[marker]
    fmt = preset.extra.get(key, default)
    fmt = fmt if isinstance(fmt, str) else default
    if not fmt.strip():  # OA: an empty wi_format sends the entries as they are; an empty
        # personality / scenario format sends nothing (preparePromptsForChatCompletion)
        return (content if placeholder == "{0}" else ""), 0
    before, found, after = fmt.partition(placeholder)
    if not found:  # the format's own text, as SillyTavern substitutes it
        content = ""
    (head, one), (tail, two) = assembler.filled(before), assembler.filled(after)
    return head + content + tail, one + two


def _too_deep(prompt: PresetPrompt) -> Diagnostic:
    """An in-chat entry deeper than SillyTavern injects (populationInjectionPrompts, openai.js:
    depths 0 to MAX_INJECTION_DEPTH only)."""
    return Diagnostic(
        code="context.note_unplaced",
        severity="warning",
        message=f"the preset entry {prompt.identifier[:80]!r} is not in the request: its "
        f"in-chat depth {prompt.injection_depth} is over {MAX_INJECTION_DEPTH}",
        path=f"prompts[{prompt.source_index}].injection_depth",
        hint="SillyTavern would not place it either; fix the value to send it",
    )


def _inject(
    comp: Component,
    injections: tuple[list[PresetPrompt], list[ExtensionPrompt]],
    unmaterialized: tuple[list[str], dict[str, str]],
) -> None:
    """Insert the in-chat injections and extension prompts; each injected message says where
    it came from and its budget category (:func:`~compiler.tavern.injections.message_category`),
    and a message holding a macro that could not be materialized is marked so,
    with where the macro is (``at``: its entry, else what the extension prompt is)."""
    pending, located = set(unmaterialized[0]), unmaterialized[1]

    def make(role: Any, text: str, src: list[Source]) -> Message:
        raw = next((p for p in src if p.content in pending), None)
        message: Message
        if raw is None:
            message = {"role": role, "content": text, "origin": "injection"}
        else:
            name = raw.identifier if isinstance(raw, PresetPrompt) else raw.key
            at = located.get(raw.content, f"in-chat prompt {name}")
            message = {"role": role, "content": text, "origin": "unmaterialized", "at": at}
        message["category"], spans = message_category(text, src)
        if spans:
            message["spans"] = spans
        return message

    chat = comp.messages
    if isinstance(chat, FramedList):
        view = chat.view
    else:
        view = chat if isinstance(chat, ChatView) else ChatView(chat or [], _as_it_is)
    k, tail = inject_newest(  # only the newest messages, down to the deepest injection
        view,
        injections[0],
        make,
        extensions=injections[1],
        answers_a_call=lambda m: m.get("role") == "tool",
    )
    spliced = view.spliced(k, tail)
    comp.messages = FramedList(spliced) if isinstance(chat, FramedList) else spliced


def _as_it_is(message: Message) -> Message:
    return message
