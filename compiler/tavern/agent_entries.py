"""A preset's entries as agent mode reads them: which mode a preset compiles in, which of
TauriTavern's Agent entries a compile inserts, and the warnings a compile and ``apc check``
share about them (one builder each, so the two report the same diagnostic).

- An entry's text is parsed once per preset (:func:`parsed_entry`), ``{{// comments}}``
  skipped as SillyTavern skips them.
- An entry that holds an Agent entry's macro counts as that entry: ``<<agent.system_prompt>>``
  as ``agentSystemPrompt``, ``<<agent.tool_results>>`` as ``agentResults`` (neither is
  inserted again), ``<<agent.chat.history>>`` as ``chatHistory`` (``agentTask`` is inserted
  before it, and a ``chatHistory`` marker beside it is left out: the chat is sent once).
- A preset whose sent entries hold ``<<agent.*>>`` macros is an agent preset: without a
  mode it compiles in agent mode (unless its, or the card's, agent schema is disabled); in
  legacy mode its macros are removed, each entry's with ``agent.macros_in_legacy``.

Internal: used by :mod:`compiler.tavern.assemble` and :mod:`compiler.tavern.check`.
"""

from __future__ import annotations

from compiler._assemble.assemble import PresetMode
from compiler._assemble.macros import BoundTemplate, MacroCall, bind
from compiler._base.frame import PromptRole
from compiler.errors import APCError, Diagnostic, TemplateError
from compiler.profile import ResolvedAgentProfile, resolve_profile
from compiler.st.macros import comment_spans
from compiler.syntax import parse
from compiler.syntax.ast import Template
from compiler.tavern.preset import PresetPrompt, TavernPreset, ordered_prompts

#: TauriTavern's Agent entries, as its PromptManager adds them when a preset lacks them.
AGENT_ENTRIES: dict[str, PromptRole] = {
    "agentSystemPrompt": "system",
    "agentTask": "user",
    "agentResults": "system",
}

#: The macro an entry holds to stand for a marker entry (``agentTask`` has none: the run's
#: task is data, never a macro).
ENTRY_MACROS: dict[str, str] = {
    "agentSystemPrompt": "agent.system_prompt",
    "agentResults": "agent.tool_results",
    "chatHistory": "agent.chat.history",
}


def parsed_entry(preset: TavernPreset, text: str, name: str) -> BoundTemplate:
    """:func:`parse_entry` bound, or its TemplateError, read once per preset: the preset
    keeps each result (frozen: a template or its frozen diagnostics), so a session, whose
    source holds the preset, parses an entry on its first compile only."""
    memo = preset._parsed
    key = (text, name)
    done = memo.get(key)
    if done is None:
        try:
            done = bind(parse_entry(text, name))
        except TemplateError as exc:
            done = tuple(exc.diagnostics)
        memo[key] = done
    if isinstance(done, BoundTemplate):
        return done
    raise TemplateError(list(done))


def parse_entry(text: str, name: str) -> Template:
    """An entry's text parsed as SillyTavern reads it: ``{{// comments}}`` are gone before
    anything else, so a macro inside one is neither expanded nor checked."""
    return parse(text, name, skip=comment_spans(text))


def entry_macros(preset: TavernPreset, prompt: PresetPrompt) -> list[MacroCall]:
    """The ``<<agent.*>>`` macros of an entry's text (a text entry, or an Agent entry's own
    text) not injected in chat, in order (none for SillyTavern's markers, or for text that
    does not parse: its errors are reported apart)."""
    marker = prompt.is_marker and prompt.identifier not in AGENT_ENTRIES
    if marker or prompt.in_chat or "<<agent." not in prompt.content:
        return []
    try:
        bound = parsed_entry(preset, prompt.content, preset.where(prompt))
    except TemplateError:
        return []
    return [item for item in bound.items if isinstance(item, MacroCall)]


def standing_for(preset: TavernPreset, prompts: list[PresetPrompt]) -> dict[str, str]:
    """Marker identifier -> the first entry of ``prompts`` whose text holds its macro."""
    found: dict[str, str] = {}
    for prompt in prompts:
        for call in entry_macros(preset, prompt):
            for marker, name in ENTRY_MACROS.items():
                if call.name == name:
                    found.setdefault(marker, prompt.identifier)
    return found


def uses_agent_macros(preset: TavernPreset) -> bool:
    """Whether an entry the preset sends (enabled, not in chat) holds an ``<<agent.*>>``
    macro: the preset is written for agent mode."""
    return any(entry_macros(preset, p) for p in ordered_prompts(preset))


def schema_mode(preset: TavernPreset) -> PresetMode:
    """The mode a compile without ``mode`` chooses from the preset alone (no card): its
    :func:`default_mode` under the profile it resolves to, ``legacy`` when its agent schema
    does not resolve (that error is reported on its own)."""
    try:
        resolved = resolve_profile(preset=preset.layer_source())
    except APCError:
        return "legacy"
    return default_mode(resolved, preset)


def default_mode(resolved: ResolvedAgentProfile, preset: TavernPreset) -> PresetMode:
    """``agent`` when the preset or the card carries an enabled agent schema, or the preset's
    entries hold ``<<agent.*>>`` macros (and no schema disables agent mode); else ``legacy``.

    A plain SillyTavern preset (no agent schema, no agent macro) compiles as the chat it
    always was; the built-in default-writer alone does not switch a preset into agent mode.
    """
    if not resolved.enabled:
        return "legacy"
    tauri = preset.extensions.get("tauritavern")
    in_preset = preset.agent is not None or (isinstance(tauri, dict) and "agentProfiles" in tauri)
    from_layers = any(p.layer in ("preset", "character") for p in resolved.provenance.values())
    return "agent" if in_preset or from_layers or uses_agent_macros(preset) else "legacy"


def agent_prompts(
    preset: TavernPreset, prompts: list[PresetPrompt], warnings: list[Diagnostic]
) -> list[PresetPrompt]:
    """``prompts`` as agent mode sends them: the Agent entries the preset lacks inserted where
    TauriTavern puts them (agentSystemPrompt first, agentTask just before the chat,
    agentResults after jailbreak), each with ``agent.prompt_entry_inserted`` in
    ``warnings``; an entry holding an Agent entry's macro counts as that entry, and a
    ``chatHistory`` marker beside an entry holding ``<<agent.chat.history>>`` is left out."""
    held = standing_for(preset, prompts)
    out = [p for p in prompts if not (p.identifier == "chatHistory" and "chatHistory" in held)]
    ids = [p.identifier for p in out]
    chat = held.get("chatHistory", "chatHistory")
    for identifier in missing_entries(preset, prompts):
        entry = PresetPrompt(
            identifier=identifier, role=AGENT_ENTRIES[identifier], marker=True, name=identifier
        )
        if identifier == "agentSystemPrompt":
            at = 0
        elif identifier == "agentTask" and chat in ids:
            at = ids.index(chat)
        elif identifier == "agentResults" and "jailbreak" in ids:
            at = ids.index("jailbreak") + 1
        else:
            at = len(out)
        out.insert(at, entry)
        ids.insert(at, identifier)
        warnings.append(entry_inserted(preset, identifier))
    return out


def missing_entries(preset: TavernPreset, prompts: list[PresetPrompt]) -> list[str]:
    """The Agent entries an agent compile of ``prompts`` (the sent entries) inserts: those
    ``prompts[]`` lacks (the author's entry, enabled or not, decides) and no sent entry
    stands for by holding its macro."""
    held = standing_for(preset, prompts)
    return [i for i in AGENT_ENTRIES if preset.prompt(i) is None and i not in held]


def entry_inserted(preset: TavernPreset, identifier: str) -> Diagnostic:
    """``agent.prompt_entry_inserted``, the same from ``apc check`` and a compile."""
    macro = ENTRY_MACROS.get(identifier)
    hint = f"add a prompt entry '{identifier}' where it belongs"
    hint += f" (or write <<{macro}>> in the entry that should hold it)" if macro else ""
    return Diagnostic(
        code="agent.prompt_entry_inserted",
        severity="warning",
        message=f"the preset has no '{identifier}' entry: an agent compile inserts it where "
        "TauriTavern's PromptManager puts it",
        file=preset.source,
        path="prompts",
        hint=hint,
    )


def macros_in_legacy(preset: TavernPreset, prompts: list[PresetPrompt]) -> list[Diagnostic]:
    """``agent.macros_in_legacy`` for each entry of ``prompts`` (the sent ones) whose
    ``<<agent.*>>`` macros a legacy compile removes, at its first macro."""
    out: list[Diagnostic] = []
    for prompt in prompts:
        calls = entry_macros(preset, prompt)
        if not calls:
            continue
        more = f" and {len(calls) - 1} more" if len(calls) > 1 else ""
        out.append(
            Diagnostic(
                code="agent.macros_in_legacy",
                severity="warning",
                message=f"'<<{calls[0].name}>>'{more} in this entry: legacy mode removes "
                "every <<agent.*>> macro, so what it stands for is not in the request",
                span=calls[0].span,
                hint="compile in agent mode (--mode agent, or an enabled agent schema)",
                source=preset_text(preset, prompt),
            )
        )
    return out


def preset_text(preset: TavernPreset, prompt: PresetPrompt) -> str:
    """An entry's text, as its diagnostics quote it."""
    return parsed_entry(preset, prompt.content, preset.where(prompt)).template.source
