"""A SillyTavern preset's frame lowered for Gemini as SillyTavern 1.12.6 sends Google.

Internal: used by :mod:`compiler.providers.gemini`.

A frame compiled from a SillyTavern preset carries the preset's Gemini settings
(:data:`~compiler._base.frame.TAVERN_GEMINI`, set by :mod:`compiler.tavern.assemble`). Such a frame
is lowered as SillyTavern's ``convertGooglePrompt`` (src/prompt-converters.js) and
``sendMakerSuiteRequest`` (src/endpoints/backends/chat-completions.js) build the body, with
the request options ``sendOpenAIRequest`` (public/scripts/openai.js) gives them:

- with the preset's ``use_makersuite_sysprompt`` on (SillyTavern's default), the leading
  system messages (all but the last message at most) become ``systemInstruction``: each
  followed by a blank line, the whole trimmed, as one text part; a dialogue example there is
  written ``Persona: text`` / ``Character: text`` (its ``example_user`` /
  ``example_assistant`` name replaced by the speaker's, unless the text already starts so).
  SillyTavern 1.12.6 gates this on the model names it knew (``gemini-1.5-flash``,
  ``gemini-1.5-pro``); here every model that takes a system instruction does
  (:func:`takes_system_instruction`: not Gemini 1.0, ``gemini-pro`` or Gemma).
- every other system message is a ``user`` turn as it is (no ``[System note]`` tag, not
  reported: that is SillyTavern's conversion); a named message is written ``name: text``,
  an example's name as the speaker's (as in the system instruction; SillyTavern 1.12.6
  writes ``example_user: `` there).
- consecutive turns of one role join into one text part with a blank line between (their
  function calls and responses stay parts of their own).
- ``generationConfig``: the stop sequences SillyTavern sends Google first (``\\n{user}:``
  and the ``new_chat_prompt``; an empty one is left out), then the preset's (or the
  caller's) own, at most 5 in all; ``topK`` when above 0; the preset's penalties and seed
  are not sent (SillyTavern sends Google none), the caller's are.

The API's turn rules stay those of :mod:`compiler.providers.gemini` and
:mod:`compiler.providers.gemini_turns`; contents that would open with the model get
``[Start a new chat]`` first (SillyTavern 1.12.6 sends them as they are; the preset's
``human_sysprompt_message`` is Claude's setting, which SillyTavern never sends Google).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

from compiler._base.frame import TAVERN_GEMINI, ContextFrame, Message
from compiler._records import record
from compiler.providers.dialect import LoweringOptions

#: JavaScript's ``String.prototype.trim`` whitespace (Python's ``str.strip()`` differs:
#: it strips ``\x1c``-``\x1f`` and ``\x85`` and keeps ``\ufeff``)
JS_WHITESPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(
    map(chr, range(0x2000, 0x200B))
)
EXAMPLE_NAMES = ("example_user", "example_assistant")
#: what joins the texts of consecutive turns of one role (convertGooglePrompt)
TURN_JOINER = "\n\n"
#: samplers SillyTavern 1.12.6 never sends Google: a preset's are left out quietly
NOT_SENT = ("frequency_penalty", "presence_penalty", "seed")

Part = dict[str, Any]


@record(frozen=True)
class TavernGemini:
    """A preset's settings for Gemini: ``system_instruction`` (``use_makersuite_sysprompt``),
    the persona's and the card's names, and SillyTavern's own stop strings for Google."""

    system_instruction: bool
    user: str
    char: str
    stop: tuple[str, ...]


def tavern_settings(frame: ContextFrame) -> TavernGemini | None:
    """The frame's :data:`~compiler._base.frame.TAVERN_GEMINI` entry, or None (not a preset's)."""
    raw = frame.metadata.get(TAVERN_GEMINI)
    if not isinstance(raw, dict):
        return None
    stop = raw.get("stop")
    return TavernGemini(
        system_instruction=raw.get("systemInstruction") is True,
        user=str(raw.get("user") or ""),
        char=str(raw.get("char") or ""),
        stop=tuple(s for s in stop if isinstance(s, str) and s) if isinstance(stop, list) else (),
    )


def takes_system_instruction(model: str) -> bool:
    """Whether ``model`` takes ``systemInstruction``: not Gemini 1.0 (``gemini-pro``,
    ``gemini-1.0-*``, ``gemini-pro-vision``) nor Gemma ("Developer instruction is not
    enabled")."""
    name = model.split("/")[-1]
    return not (
        name.startswith(("gemini-1.0", "gemma"))
        or name == "gemini-pro"
        or name.startswith("gemini-pro-")
    )


def _speaker(m: Message, settings: TavernGemini) -> str | None:
    """The name written before a message's text: an example's speaker, else its ``name``."""
    name = m.get("name")
    if name == "example_user":
        return settings.user or None
    if name == "example_assistant":
        return settings.char or None
    return name or None


def _named(m: Message, settings: TavernGemini) -> str:
    text = m.get("content") or ""
    name = _speaker(m, settings)
    if name and not (m.get("name") in EXAMPLE_NAMES and text.startswith(f"{name}: ")):
        text = f"{name}: {text}"
    return text


def system_lead(messages: Sequence[Message], settings: TavernGemini, model: str) -> tuple[int, str]:
    """How many leading messages go into ``systemInstruction``, and its text (``''``: none):
    the leading system messages, all but the last message at most, when the preset's
    ``use_makersuite_sysprompt`` is on and the model takes one."""
    if not settings.system_instruction or not takes_system_instruction(model):
        return 0, ""
    lead = 0
    while lead < len(messages) - 1 and messages[lead]["role"] in ("system", "developer"):
        lead += 1
    text = "".join(_lead_text(m, settings) + TURN_JOINER for m in messages[:lead])
    return lead, text.strip(JS_WHITESPACE)


def _lead_text(m: Message, settings: TavernGemini) -> str:
    """A system-instruction message: only an example's speaker is written (convertGooglePrompt)."""
    return _named(m, settings) if m.get("name") in EXAMPLE_NAMES else m.get("content") or ""


def as_turn(m: Message, settings: TavernGemini) -> Message:
    """A message after the system instruction as SillyTavern sends it: system as user, its
    name written before its text (a tool result and a message without a name as they are)."""
    system = m["role"] in ("system", "developer")
    if m["role"] == "tool" or (not system and "name" not in m):
        return m
    out = {k: v for k, v in m.items() if k != "name"}
    out["role"] = "user" if system else m["role"]
    if m.get("content"):
        out["content"] = _named(m, settings)
    return cast(Message, out)


def join_turn(previous: list[Part], parts: list[Part]) -> None:
    """Add a message's ``parts`` to the turn of the same role before it: text to text with a
    blank line between (convertGooglePrompt), other parts as parts of their own."""
    texts = [p for p in parts if "text" in p]
    if previous and "text" in previous[0] and len(texts) == 1 and parts[0] is texts[0]:
        previous[0] = {"text": previous[0]["text"] + TURN_JOINER + texts[0]["text"]}
        previous.extend(parts[1:])
    else:
        previous.extend(parts)


def without_unsent(options: LoweringOptions) -> LoweringOptions:
    """``options`` without the preset's penalties and seed (SillyTavern sends Google none;
    the caller's own are kept)."""
    gone = {k: None for k in NOT_SENT if k in options.quiet and getattr(options, k) is not None}
    return replace(options, **gone) if gone else options  # type: ignore[arg-type]
