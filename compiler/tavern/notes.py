"""SillyTavern's Author's Note and Character's Note, the persona description placed around
the Author's Note or in chat, and world info at positions 2/3 (around the Author's Note).

Internal: the API is :mod:`compiler.tavern`.

- The Author's Note is the chat's metadata (:class:`compiler.inputs.chat.ChatMetadata`).
  It is inserted when the chat's user messages number a multiple of ``note_interval``
  (public/scripts/authors-note.js setFloatingPrompt: interval 1 always; 0, or no user
  message yet, never). When it is inserted, the persona description at position 2 (3) goes
  above (below) it (public/script.js addPersonaDescriptionExtensionPrompt), then the
  activated world info entries at position 2 above and 3 below that (public/scripts/
  world-info.js checkWorldInfo): ``top\\nnote\\nbottom`` less one leading and one trailing
  newline. When it is not inserted, those entries are left out (``world.author_note_absent``).
- ``note_position`` 1 puts the note in chat as the extension prompt ``2_floating_prompt`` at
  ``note_depth`` with ``note_role``; 0 after the ``main`` entry and 2 before it, as a message
  of its own in that role (public/scripts/openai.js preparePromptsForChatCompletion,
  populateChatCompletion). A note SillyTavern cannot place is ``context.note_unplaced``.
- The Character's Note is the card's ``extensions.depth_prompt`` ``{prompt, depth, role}``
  (defaults 4 and ``system``; script.js Generate): the trimmed prompt, without ``\\r``, in
  chat as ``DEPTH_PROMPT``.
- The persona description at position 4 is in chat as ``PERSONA_DESCRIPTION`` at the
  persona's depth and role; at any position but 0 (and the deprecated 1) the
  ``personaDescription`` marker is empty.

SillyTavern's macros are filled in each note as a whole, with what wraps it. In-chat notes
join the preset's injections (:func:`compiler.tavern.injections.apply_injections`). In the
budget ledger the Author's Note (in chat or beside ``main``) is the category
``authorsNote``, the Character's Note ``charactersNote``, the persona in chat ``persona``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from compiler._assemble.assemble import Assembler
from compiler._assemble.markers import ALLOWANCE, openers
from compiler._base.frame import CATEGORY, PromptRole
from compiler._records import record
from compiler.errors import Diagnostic
from compiler.inputs.chat import ChatMetadata
from compiler.inputs.run import RunContext
from compiler.st.macros import inert
from compiler.st.world.place import position_unsupported, texts_at, world_position
from compiler.tavern.framing import CARD_RESOURCE
from compiler.tavern.injections import MAX_INJECTION_DEPTH, ExtensionPrompt

AUTHOR_NOTE = "2_floating_prompt"
CHARACTER_NOTE = "DEPTH_PROMPT"
PERSONA = "PERSONA_DESCRIPTION"
#: the budget category of each in-chat note in the ledger (:mod:`compiler.fit.budgets`)
CATEGORIES: dict[str, str] = {
    AUTHOR_NOTE: "authorsNote",
    CHARACTER_NOTE: "charactersNote",
    PERSONA: "persona",
}
ROLES: dict[int, PromptRole] = {0: "system", 1: "user", 2: "assistant"}
PERSONA_RESOURCE = "user.profile"
WORLD_RESOURCE = "world.activated"
_AN_POSITIONS = ("an_top", "an_bottom")


@record
class Notes:
    """Where the notes go: in chat, and the Author's Note beside the ``main`` entry."""

    extensions: list[ExtensionPrompt] = dataclasses.field(default_factory=list)
    #: the Author's Note at position 0/2: its role, its (filled) text, its allowance of
    #: ``<<agent.`` openers, and whether it goes before ``main``
    beside_main: tuple[PromptRole, str, int, bool] | None = None


def note_inserted(meta: ChatMetadata, context: RunContext) -> bool:
    """Whether the Author's Note goes into this request (setFloatingPrompt's interval, on
    the chat's number of user messages, counted only when the interval is not 1)."""
    interval = meta.note_interval
    users = 1 if interval == 1 else context.user_messages
    if users <= 0 or interval <= 0:
        return False
    return (users % interval if users >= interval else interval - users) == 0


def persona_in_prompt(assembler: Assembler) -> bool:
    """Whether the persona description fills the ``personaDescription`` marker."""
    persona = assembler.context.persona
    return persona is None or persona.position in (0, 1)


def _depth(value: Any) -> int | None:
    """An in-chat depth as SillyTavern's ``Number(depth)``: a whole number from 0 to 1000."""
    if isinstance(value, str) and value.strip():
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    whole = isinstance(value, int) or value.is_integer()
    return int(value) if whole and 0 <= value <= MAX_INJECTION_DEPTH else None


def _unplaced(what: str, why: str, path: str) -> Diagnostic:
    return Diagnostic(
        code="context.note_unplaced",
        severity="warning",
        message=f"the {what} is not in the request: {why}",
        path=path,
        hint="SillyTavern would not place it either; fix the value to send it",
    )


def _fill(assembler: Assembler, text: str) -> tuple[str, int]:
    """``text`` with SillyTavern's macros filled, and its allowance of ``<<agent.`` openers:
    the raw text's own and those the filled-in values brought
    (:mod:`compiler._assemble.markers`)."""
    content, from_values = assembler.filled(text)
    return content, openers(inert(text)) + from_values


def _in_chat(
    assembler: Assembler, key: str, role: PromptRole, depth: int, text: str, raw: list[str]
) -> ExtensionPrompt:
    """An in-chat note, filled; one that holds an opener it may not gets into ``raw``."""
    content, allowed = _fill(assembler, text)
    if openers(content) > allowed:
        raw.append(content)
    return ExtensionPrompt(key, role, depth, content, CATEGORIES[key])


def _wrapped_note(assembler: Assembler, inserted: bool) -> str:
    """The Author's Note with the persona description and world info around it; the
    world info entries at positions 2/3 left out are reported."""
    text = assembler.context.chat_metadata.note_prompt if inserted else ""
    persona = assembler.context.persona
    if (
        inserted
        and persona is not None
        and persona.description
        and persona.position in (2, 3)
        and assembler.visible(PERSONA_RESOURCE)
    ):
        above = persona.position == 2
        text = f"{persona.description}\n{text}" if above else f"{text}\n{persona.description}"
    if not assembler.visible(WORLD_RESOURCE):
        return text
    entries = assembler.world_entries
    at_note = [(e, p) for e in entries if (p := world_position(e)) in _AN_POSITIONS]
    stale = {position_unsupported(e, p) for e, p in at_note}
    assembler.warnings[:] = [w for w in assembler.warnings if w not in stale]
    top, bottom = texts_at(entries, "an_top"), texts_at(entries, "an_bottom")
    if not inserted:
        assembler.warnings.extend(_absent(e) for e, _ in at_note if e.get("content"))
        return text
    text = "\n".join(top) + "\n" + text + "\n" + "\n".join(bottom)
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def _absent(entry: dict[str, Any]) -> Diagnostic:
    name = f" ({entry['comment']})" if entry.get("comment") else ""
    return Diagnostic(
        code="world.author_note_absent",
        severity="warning",
        message=f"world info entry {entry.get('uid')!r}{name} is activated around the "
        "Author's Note, which is not in this request (its interval): the entry is left out, "
        "as in SillyTavern",
    )


def _author_note(assembler: Assembler, notes: Notes, raw: list[str], *, in_chat: bool) -> None:
    """The Author's Note (with what wraps it) into ``notes``, where its position says."""
    meta = assembler.context.chat_metadata
    text = _wrapped_note(assembler, note_inserted(meta, assembler.context))
    if not text:
        return
    where = "chatMetadata.note_position"
    if meta.note_position in (0, 2):
        content, allowed = _fill(assembler, text)
        role = _role(meta.note_role) or "system"  # openai.js getPromptRole
        notes.beside_main = (role, content, allowed, meta.note_position == 2)
    elif meta.note_position != 1:
        assembler.warnings.append(
            _unplaced("Author's Note", f"position {meta.note_position!r} is not 0, 1 or 2", where)
        )
    elif (depth := _depth(meta.note_depth)) is None:
        assembler.warnings.append(
            _unplaced(
                "Author's Note",
                f"depth {meta.note_depth!r} is not a whole number from 0 to 1000",
                "chatMetadata.note_depth",
            )
        )
    elif (chat_role := _role(meta.note_role)) is None:
        assembler.warnings.append(
            _unplaced(
                "Author's Note",
                f"role {meta.note_role!r} is not 0, 1 or 2",
                "chatMetadata.note_role",
            )
        )
    elif in_chat:
        notes.extensions.append(_in_chat(assembler, AUTHOR_NOTE, chat_role, depth, text, raw))


def _role(value: float) -> PromptRole | None:
    """An extension prompt's role number (0-2) as a role; None for any other number."""
    return next((role for number, role in ROLES.items() if value == number), None)


def _role_by_name(value: Any) -> PromptRole:
    """SillyTavern's getExtensionPromptRoleByName: 0-2 or a role name, else system."""
    if isinstance(value, int) and not isinstance(value, bool) and value in ROLES:
        return ROLES[value]
    return value if value in ("system", "user", "assistant") else "system"


def _character_note(assembler: Assembler, raw: list[str]) -> ExtensionPrompt | None:
    """The card's ``extensions.depth_prompt``, in chat (None: none, or hidden)."""
    card = assembler.context.card
    spec = card.extensions.get("depth_prompt") if card is not None else None
    if not isinstance(spec, dict) or not assembler.visible(CARD_RESOURCE):
        return None
    prompt = spec.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        assembler.warnings.append(
            _unplaced("Character's Note", "its prompt is not text", "extensions.depth_prompt")
        )
        return None
    text = (prompt or "").strip()
    if not text:
        return None
    depth = _depth(4 if spec.get("depth") is None else spec.get("depth"))
    if depth is None:
        why = f"depth {spec.get('depth')!r} is not a whole number from 0 to 1000"
        assembler.warnings.append(
            _unplaced("Character's Note", why, "extensions.depth_prompt.depth")
        )
        return None
    role = _role_by_name(spec.get("role", "system"))
    note = _in_chat(assembler, CHARACTER_NOTE, role, depth, text, raw)
    return dataclasses.replace(note, content=note.content.replace("\r", ""))


def chat_notes(assembler: Assembler, raw: list[str], *, in_chat: bool) -> Notes:
    """The Author's Note, the Character's Note and the persona at depth for this request;
    in-chat ones only when ``in_chat`` (the preset has a chat history). Filled in-chat text
    holding a ``<<agent.`` opener it may not have is added to ``raw``."""
    notes = Notes()
    _author_note(assembler, notes, raw, in_chat=in_chat)
    if not in_chat:
        return notes
    character = _character_note(assembler, raw)
    if character is not None:
        notes.extensions.append(character)
    persona = assembler.context.persona
    if (
        persona is None
        or persona.position != 4
        or not persona.description
        or not assembler.visible(PERSONA_RESOURCE)
    ):
        return notes
    depth = _depth(persona.depth)
    if depth is None:
        why = f"depth {persona.depth} is over 1000"
        assembler.warnings.append(_unplaced("persona description", why, "persona.depth"))
        return notes
    role = ROLES[persona.role]
    notes.extensions.append(_in_chat(assembler, PERSONA, role, depth, persona.description, raw))
    return notes


def add_beside_main(assembler: Assembler, notes: Notes, *, before: bool) -> None:
    """The Author's Note at position 2 (``before``) or 0 as a message of its own."""
    if notes.beside_main is None or notes.beside_main[3] != before:
        return
    role, content, allowed, _ = notes.beside_main
    assembler.add_text(
        content,
        role=role,
        source=f"{assembler.context.file}#chatMetadata.note_prompt",
        resource=None,
        metadata={
            "origin": "note",
            "entry": AUTHOR_NOTE,
            ALLOWANCE: allowed,
            CATEGORY: CATEGORIES[AUTHOR_NOTE],
        },
    )


def scan_prompts(assembler: Assembler) -> list[tuple[str, str]]:
    """The in-chat prompts SillyTavern's world info scan reads besides the chat
    (checkWorldInfo adds every extension prompt set with ``scan``), each with what it is:
    the persona description at depth (``persona``), always; with
    ``noteSettings.allowWIScan``, the Author's Note when this request inserts it
    (``authors_note``) and the card's Character's Note (``characters_note``;
    public/script.js). Raw: the scan fills their macros."""
    ctx, out = assembler.context, []
    persona = ctx.persona
    if (
        persona is not None
        and persona.position == 4
        and persona.description
        and assembler.visible(PERSONA_RESOURCE)
    ):
        out.append(("persona", persona.description))
    if not ctx.note_settings.allow_wi_scan:
        return out
    meta = ctx.chat_metadata
    if note_inserted(meta, ctx):
        out.append(("authors_note", meta.note_prompt))
    card = ctx.card
    spec = card.extensions.get("depth_prompt") if card is not None else None
    if (
        isinstance(spec, dict)
        and isinstance(spec.get("prompt"), str)
        and assembler.visible(CARD_RESOURCE)
    ):
        out.append(("characters_note", spec["prompt"].strip().replace("\r", "")))
    return [(name, text) for name, text in out if text]
