"""How a preset frames the chat, as SillyTavern does: ``new_chat_prompt`` before it, the
card's greeting in an empty chat, speakers named by ``names_behavior``, and the dialogue
examples as one message each.

Internal: the API is :mod:`compiler.tavern`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from compiler._assemble.assemble import Assembler
from compiler._assemble.markers import openers, unmaterialized
from compiler._base.frame import (
    FILL_BLOCK,
    FILL_HEAD,
    MESSAGE_NAME,
    NO_SQUASH,
    ComponentKind,
    Message,
)
from compiler.errors import ContextError, PolicyError
from compiler.inputs.chat_append import with_user_message
from compiler.inputs.run import ChatMessageIn
from compiler.providers.dialect import LoweringOptions
from compiler.st.regex_scripts import AI_OUTPUT, USER_INPUT
from compiler.st.world.place import with_example_entries
from compiler.tavern.chat_view import ChatView, FramedList
from compiler.tavern.preset import PresetPrompt, TavernPreset

#: The resource a card's text belongs to.
CARD_RESOURCE = "character.instructions"
EXAMPLES_PRIORITY = -1  # legacy: the examples are granted after the history


def preset_text(preset: TavernPreset, key: str, default: str) -> str:
    value = preset.extra.get(key, default)
    return value if isinstance(value, str) else default


#: The hint of an ``<<agent.`` opener in a preset's setting text
SETTING_HINT = "write the macro in a prompt entry (a setting's text cannot hold '<<agent.')"


def setting_text(assembler: Assembler, text: str, where: str) -> str:
    """A preset setting's text (``new_chat_prompt``, ``human_sysprompt_message``,
    ``assistant_prefill``, a stop string) with its SillyTavern macros filled. It is sent as it
    is, never expanded, so an ``<<agent.`` opener in it that no filled-in value brought (data:
    a variable, a card field) is ``agent.prompt_marker_unmaterialized`` at ``where``."""
    out, from_values = assembler.filled(text)
    if openers(out) > from_values:
        raise unmaterialized(out, where, SETTING_HINT)
    return out


def claude_settings(assembler: Assembler, preset: TavernPreset) -> dict[str, Any]:
    """The preset's Claude settings as SillyTavern sends them with the request
    (:data:`compiler._base.frame.CLAUDE`): ``human_sysprompt_message`` and ``assistant_prefill``
    with their macros filled (openai.js ``sendOpenAIRequest``; :func:`setting_text`), and the
    persona's and the card's names (its ``user_name`` and ``char_name``)."""
    values, settings = assembler.macro_values, preset.settings
    where = f"{preset.source}#"
    return {
        "useSysPrompt": settings.claude_use_sysprompt,
        "opening": setting_text(
            assembler, settings.human_sysprompt_message, where + "human_sysprompt_message"
        ),
        "prefill": setting_text(assembler, settings.assistant_prefill, where + "assistant_prefill"),
        "user": values.get("user", ""),
        "char": values.get("char", ""),
    }


def new_chat_text(assembler: Assembler, preset: TavernPreset) -> str:
    """The preset's ``new_chat_prompt`` (default ``[Start a new Chat]``), macros filled
    (:func:`setting_text`)."""
    text = preset_text(preset, "new_chat_prompt", "[Start a new Chat]")
    return setting_text(assembler, text, f"{preset.source}#new_chat_prompt")


def add_new_chat(assembler: Assembler, preset: TavernPreset, prompt: PresetPrompt) -> None:
    """``new_chat_prompt`` (``[Start a new Chat]``) as its own system message right before
    the chat history, as SillyTavern puts it (an empty one is left out)."""
    text = new_chat_text(assembler, preset)
    if text.strip():
        assembler.add_text(
            text,
            role="system",
            source=f"{preset.source}#new_chat_prompt",
            resource=None,
            metadata={"origin": "preset", "entry": prompt.identifier, NO_SQUASH: True},
        )


def gemini_settings(assembler: Assembler, preset: TavernPreset) -> dict[str, Any]:
    """The preset's settings for Gemini (:data:`~compiler._base.frame.TAVERN_GEMINI`), as
    SillyTavern 1.12.6's ``sendOpenAIRequest`` gives them for Google: its
    ``use_makersuite_sysprompt`` (a preset without it keeps SillyTavern's shipped ``true``),
    the persona's and the card's names, and the
    stop strings it sends first: ``\\n{user}:`` and the ``new_chat_prompt``, macros filled."""
    values = assembler.macro_values
    user, char = values.get("user", ""), values.get("char", "")
    try:
        new_chat = new_chat_text(assembler, preset)
    except PolicyError as exc:  # it names a hidden resource: no stop string of it
        if exc.code != "policy.resource_hidden":
            raise
        new_chat = ""
    return {
        "systemInstruction": preset.settings.use_makersuite_sysprompt,
        "user": user,
        "char": char,
        "stop": [s for s in (f"\n{user}:" if user else "", new_chat) if s],
    }


def preset_stops(assembler: Assembler, options: LoweringOptions) -> LoweringOptions:
    """``options`` with a preset's stop strings (its ``custom_stopping_strings``, named in
    ``quiet``) filled as SillyTavern fills them (its ``custom_stopping_strings_macro``, on by
    default; :func:`setting_text`); one that fills to nothing is left out. The caller's are
    sent as given."""
    if "stop" not in options.quiet:
        return options
    filled = (setting_text(assembler, t, "custom_stopping_strings") for t in options.stop)
    return replace(options, stop=tuple(t for t in filled if t))


def namer(
    behavior: int, user: str, char: str, *, persona: bool = True, quotes: bool = False
) -> Callable[[Message], Message]:
    """A chat message as SillyTavern's ``setOpenAIMessages`` sends it (the given one is not
    changed: it is the message itself when it is sent as it is, else a new one). Names by
    the preset's ``names_behavior``: 1 sends each speaker's ``name``; 2 moves it into the
    content as a ``Name: `` prefix (not on narrator, i.e. system, messages); 0 (a one-to-one
    chat, the only kind a run context holds) prefixes only a user message another persona
    wrote (its ``name`` is not ``user``, when the run names its ``persona``); -1 sends none.
    A user or assistant message without a ``name`` is the persona's (``user``) or the
    card's (``char``), as every message of a SillyTavern chat is named by its speaker. The
    content loses its ``\r``; with ``quotes`` (the preset's ``wrap_in_quotes``) a user
    message is sent in double quotes."""
    speakers = {"user": user, "assistant": char}
    unnamed = behavior not in (1, 2)  # a message without a name of its own stays unnamed

    def one(m: Message) -> Message:
        if (
            unnamed
            and len(m) == 2  # a role and a content: most messages, sent as they are
            and type(text := m["content"]) is str
            and "\r" not in text
            and not (quotes and m["role"] == "user")
        ):
            return m
        role, own = m["role"], m.get("name")
        name = own or speakers.get(role)
        content = m.get("content")
        m = {**m, "name": name} if behavior == 1 and name else _without_name(m)
        if not isinstance(content, str):
            return m
        if behavior == 2 and name and role in speakers and content:
            content = f"{name}: {content}"
        elif behavior == 0 and role == "user" and own and persona and own != user:
            content = f"{own}: {content}"
        content = content.replace("\r", "")
        m["content"] = f'"{content}"' if quotes and role == "user" else content
        return m

    return one


def framed_chat(
    assembler: Assembler, preset: TavernPreset, chat: Sequence[Message]
) -> ChatView | FramedList:
    """The chat as the preset sends it (:func:`namer`): a view, each message framed when it
    is read; a short chat (up to :data:`FRAMED_WHOLE` messages) is framed whole, in one
    pass, as a list: cheaper than message by message when most of it is kept."""
    values, behavior = assembler.macro_values, preset.settings.names_behavior
    make = namer(
        behavior,
        values.get("user", ""),
        values.get("char", ""),
        persona=assembler.context.persona is not None,
        quotes=preset.settings.wrap_in_quotes,
    )
    if len(chat) > FRAMED_WHOLE:
        return ChatView(chat, make, free=name_free(behavior))
    made = dict(enumerate(map(make, chat)))
    return FramedList(ChatView(chat, make, free=name_free(behavior), made=made))


#: the longest chat :func:`framed_chat` frames whole
FRAMED_WHOLE = 256


def name_free(behavior: int) -> Callable[[Any], bool]:
    """Whether :func:`namer`'s message of a chat message (``raw``: the checked message
    the frame's one is made from, a ``dict``) is the same whatever the run's persona and
    names: it then depends only on the message and the preset. Under ``names_behavior`` 1
    or 2 a user or assistant message without a ``name`` of its own is named by the run;
    under 0 a user message with one is prefixed depending on the run's persona."""

    def free(raw: Any) -> bool:
        if type(raw) is not dict:
            return False
        if behavior in (1, 2):
            return bool(raw.get("name")) or raw.get("role") not in ("user", "assistant")
        if behavior == 0:
            return raw.get("role") != "user" or not raw.get("name")
        return True

    return free


def _without_name(message: Message) -> Message:
    out = dict(message)
    out.pop("name", None)
    return out  # type: ignore[return-value]


def greeting(assembler: Assembler) -> list[Message]:
    """An empty chat's first message: the card's ``first_mes``, or the alternate greeting
    the run context's ``greeting`` picks, macros filled, as the assistant's (regex scripts
    run as when SillyTavern stores the greeting and sends it)."""
    text = _chosen_greeting(assembler)
    if text is None:
        return []
    # stored with the card's regex scripts, macros filled, then regexed as a prompt message
    text = assembler.regex_scripts.greeting(
        text, lambda stored: assembler.fill(stored.replace("\r\n", "\n"))
    )
    return [{"role": "assistant", "content": text}] if text.strip() else []


def _chosen_greeting(assembler: Assembler) -> str | None:
    """The greeting the run context picks, as the card holds it (None: no card or hidden)."""
    card = assembler.context.card
    if card is None or not assembler.visible(CARD_RESOURCE):
        return None
    choice = assembler.context.greeting
    greetings = [card.first_mes, *card.alternate_greetings]
    if choice >= len(greetings):
        raise ContextError(
            code="context.invalid_context",
            message=f"'greeting' is {choice}, but the card has "
            f"{len(card.alternate_greetings)} alternate greeting(s)",
            file=assembler.context.file,
            path="greeting",
        )
    return greetings[choice] or (card.alternate_greetings[:1] or [""])[0]


def send_if_empty(assembler: Assembler, preset: TavernPreset) -> None:
    """The preset's ``send_if_empty`` as the persona's newest message when the chat ends
    with the assistant's (its greeting included): what SillyTavern adds to the chat when
    Send is pressed with nothing typed (script.js Generate: ``sendMessageAsUser``), before
    anything reads the chat. As it stores a typed message: trimmed, the regex scripts for
    user input run on it, then its macros are filled (``{{lastMessage}}`` is still the
    assistant's); then it is a chat message like the others: world info scans it, the
    Author's Note's interval counts it, the prompt's regex scripts see it at depth 0 and
    ``{{lastMessage}}`` in the prompt is it. Only the last message is read."""
    text = preset_text(preset, "send_if_empty", "").strip()
    shown = assembler.visible_chat()[0]
    last = shown[-1] if shown else None
    if not text or last is None or last.role != "assistant" or last.tool_calls:
        return
    stored = assembler.regex_scripts.apply(text, USER_INPUT, depth=None, prompt=False)
    assembler.context = with_user_message(assembler.context, assembler.fill(stored))
    for cached in ("macro_values", "world_entries"):
        assembler.__dict__.pop(cached, None)  # they read the chat without it


def start_with_greeting(assembler: Assembler) -> None:
    """An empty chat starts with the card's greeting before anything reads the chat, as
    SillyTavern's getChat puts ``first_mes`` in it: world info scans it, ``{{lastMessage}}``
    is it, the macro seed derives from it (as it will once the chat goes on)."""
    if assembler.context.messages:
        return
    text = _chosen_greeting(assembler)
    if text is None:
        return
    # as SillyTavern stores it (the card's regex scripts, macros filled); the prompt-time
    # scripts run on it with the rest of the chat
    stored = assembler.regex_scripts.apply(text, AI_OUTPUT, depth=None, prompt=False)
    text = assembler.fill(stored.replace("\r\n", "\n"))
    if not text.strip():
        return
    chat = [ChatMessageIn(role="assistant", content=text)]
    assembler.context = assembler.context.model_copy(update={"chat": chat})
    for cached in ("macro_values", "macro_env", "world_entries"):
        assembler.__dict__.pop(cached, None)  # they read the empty chat


def split_examples(text: str, user: str, char: str) -> list[list[tuple[str, str]]]:
    """SillyTavern's dialogue examples (OA ``parseExampleIntoIndividual``): ``<START>``
    blocks, each a list of ``(name, content)`` messages, ``example_user`` /
    ``example_assistant``. A message starts where a ``{user}:`` / ``{char}:`` line changes
    the speaker and runs to the next such line; the first ``Name:`` is cut from it."""
    text = text.replace("\r\n", "\n").strip()
    if not text or text.upper() == "<START>":
        return []
    if not text.upper().startswith("<START>"):
        text = "<START>\n" + text
    names = {"example_user": user + ":", "example_assistant": char + ":"}
    blocks: list[list[tuple[str, str]]] = []
    for block in _START_ANY.split(text)[1:]:
        runs: list[tuple[str | None, list[str]]] = [(None, [])]  # (speaker, lines)
        for line in block.strip().split("\n"):
            now = next((n for n, prefix in names.items() if line.startswith(prefix)), None)
            speaker = runs[-1][0]
            if now is not None and speaker is not None and now != speaker:
                runs.append((now, [line]))
            else:  # lines before the first speaker join the first message, as in ST
                runs[-1] = (speaker or now, [*runs[-1][1], line])
        messages = [
            (who, "\n".join(lines).replace(names[who], "", 1).strip())
            for who, lines in runs
            if who is not None
        ]
        if messages:
            blocks.append(messages)
    return blocks


_START_ANY = re.compile(r"<START>", re.IGNORECASE)


def add_examples(assembler: Assembler, preset: TavernPreset, prompt: PresetPrompt) -> None:
    """The card's dialogue examples as SillyTavern sends them: each ``<START>`` block after
    a ``new_example_chat_prompt`` system message, one system message per example message,
    named ``example_user`` / ``example_assistant``."""
    card = assembler.context.card
    if card is None:
        return
    text = card.mes_example.replace("\r", "")
    if assembler.visible("world.activated"):  # world info at positions 5/6 wraps them
        text = with_example_entries(assembler.world_entries, text)
    if not text.strip():
        return
    source = f"{card.origin}#mes_example"
    assembler.resources.require(CARD_RESOURCE, what=f"'{source}'", where=source)
    values = assembler.macro_values
    header = assembler.fill(preset_text(preset, "new_example_chat_prompt", "[Example Chat]"))
    examples = split_examples(assembler.fill(text), values["user"], values["char"])
    legacy = assembler.mode == "legacy"  # granted after history, block by block
    for k, block in enumerate(examples):
        fill: dict[str, object] = {FILL_BLOCK: k} if legacy else {}
        if header.strip():
            assembler.add_text(
                header,
                role="system",
                source=f"{preset.source}#new_example_chat_prompt",
                resource=None,
                # SillyTavern's 'newChat' message: never squashed (OA squashSystemMessages)
                metadata={"origin": "preset", "entry": prompt.identifier, NO_SQUASH: True}
                | fill
                | ({FILL_HEAD: True} if legacy else {}),
            )
        for name, content in block:
            assembler.add_text(
                content,
                role="system",
                source=source,
                resource=CARD_RESOURCE,
                kind=ComponentKind.CHARACTER_CARD,
                metadata={"origin": "card", "entry": prompt.identifier, MESSAGE_NAME: name} | fill,
            )
            if legacy:
                comp = assembler.components[-1]
                comp.strategy, comp.priority = "drop_optional", EXAMPLES_PRIORITY
        if legacy and header.strip():
            head = assembler.components[-len(block) - 1]
            head.strategy, head.priority = "drop_optional", EXAMPLES_PRIORITY
