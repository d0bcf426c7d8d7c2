"""Anthropic Messages requests for a SillyTavern preset, as SillyTavern 1.12.6 sends Claude.

Internal: part of :mod:`compiler.providers.anthropic`.

A frame compiled from a SillyTavern preset carries the preset's Claude settings
(:data:`compiler._base.frame.CLAUDE`); :func:`tavern_layout` converts its messages as
SillyTavern's ``convertClaudeMessages`` (src/prompt-converters.js) does before
``sendClaudeRequest`` posts them:

- with ``claude_use_sysprompt``, the leading system messages are the ``system`` string,
  joined with a blank line and trimmed; a dialogue example among them starts with its
  speaker's name (``Lin: ``, unless it already does). The conversation then starts with a
  user turn: where it does not, ``human_sysprompt_message`` (macros filled; empty:
  ``[Start a new chat]``) is put first;
- without it, no ``system`` is sent: every system message is user text;
- a system message inside the conversation is plain user text (no tag); a dialogue example
  there starts with ``example_user: Lin: `` (its name, then its speaker's);
- a message ``name`` is written ``name: `` before the text (SillyTavern's name rule,
  ``[A-Za-z0-9_]``; speakers it would merge keep their own names, as the OpenAI-compatible
  dialect writes them);
- ``assistant_prefill`` (macros filled, trailing whitespace trimmed) is the final assistant
  turn;
- consecutive messages of one role are one turn, their texts joined with a blank line into
  one string (a turn with tool blocks keeps blocks, its adjacent texts joined the same way).

The samplers (:func:`tavern_samplers`): SillyTavern sends ``temperature``, ``top_p`` and
``top_k`` to every Claude model; the models before Opus 4.1 take all three
(:func:`takes_samplers`). Those fields are the Messages API of ``anthropic-version``
2023-06-01 (SillyTavern's); the SDK from 2.0 sends 2026-10-21, on which they are refused,
and takes no such arguments: :func:`create_arguments` gives a body to the SDK as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compiler._base.frame import Message
from compiler.providers.anthropic_limits import claude_version
from compiler.providers.conversation import START_CHAT
from compiler.providers.dialect import LoweringOptions, ModelRequest
from compiler.providers.openai_chat import distinct_names
from compiler.providers.openai_compatible import st_name

if TYPE_CHECKING:
    from compiler.providers.anthropic import Anthropic, _Turns

#: How SillyTavern joins the system prompt's parts and the texts of one turn.
JOIN = "\n\n"
SYSTEM_ROLES = ("system", "developer")
#: The first Claude version that refuses ``temperature`` with ``top_p`` ("cannot both be
#: specified for this model": Opus 4.1, Sonnet 4.5, Haiku 4.5, Opus 4.5, the 4.6 models;
#: from Opus 4.7 on, each is "deprecated for this model"). Earlier models take all three.
SAMPLERS_REFUSED_FROM = (4, 1)
#: The samplers sent to a model that takes them, and SillyTavern's ``top_k`` default.
SAMPLERS = ("temperature", "top_p", "top_k")
DEFAULT_TOP_K = 0
#: SillyTavern's API version (sendClaudeRequest's ``anthropic-version`` header): the one on
#: which the samplers are taken.
API_VERSION = "2023-06-01"


def takes_samplers(model: str) -> bool:
    """Whether ``model`` takes ``temperature``, ``top_p`` and ``top_k`` together (Claude 3,
    3.5, 3.7, Sonnet 4 and Opus 4; not a name without a version)."""
    version = claude_version(model)
    return version is not None and version < SAMPLERS_REFUSED_FROM


def tavern_samplers(options: LoweringOptions) -> dict[str, Any]:
    """The samplers as SillyTavern sends them: the given ``temperature`` and ``top_p`` (a
    preset always gives them), ``top_k`` (0 when none is given, as SillyTavern sends its
    ``top_k_openai`` default)."""
    out: dict[str, Any] = {k: getattr(options, k) for k in SAMPLERS[:2]}
    out["top_k"] = DEFAULT_TOP_K if options.top_k is None else options.top_k
    return {k: v for k, v in out.items() if v is not None}


def create_arguments(request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of the SDK's ``client.messages.create`` for ``request``: the
    samplers (which the SDK from 2.0 takes no argument for) in ``extra_body``, with the API
    version that takes them (:data:`API_VERSION`) in ``extra_headers``; a request without
    them as it is. The body on the wire is ``request``."""
    extra = {k: request[k] for k in SAMPLERS if k in request}
    if not extra:
        return dict(request)
    args = {k: v for k, v in request.items() if k not in extra}
    return args | {"extra_body": extra, "extra_headers": {"anthropic-version": API_VERSION}}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def example_text(m: Message, settings: dict[str, Any], *, once: bool) -> str:
    """A system message's text, a dialogue example's after its speaker's name (the persona's
    for ``example_user``, the card's for ``example_assistant``); ``once``: not when it
    already starts with it."""
    text = m.get("content") or ""
    who = {"example_user": "user", "example_assistant": "char"}.get(m.get("name") or "")
    speaker = str(settings.get(who) or "") if who else ""
    if not speaker or (once and text.startswith(f"{speaker}: ")):
        return text
    return f"{speaker}: {text}"


def opening(settings: dict[str, Any]) -> str:
    """The user turn put first: ``human_sysprompt_message``, else ``[Start a new chat]``."""
    text = settings.get("opening")
    return text if isinstance(text, str) and text.strip() else START_CHAT


def tavern_layout(
    dialect: Anthropic, messages: Sequence[Message], settings: dict[str, Any], out: _Turns
) -> tuple[str, list[dict[str, Any]]]:
    """The ``system`` string and the turns SillyTavern sends for ``messages`` (see the
    module docstring); the turns' content is blocks (:func:`as_string` makes a text turn a
    string)."""
    messages = distinct_names(list(messages), st_name)
    system: list[str] = []
    use_system = bool(settings.get("useSysPrompt"))
    start = 0
    while use_system and start < len(messages) and messages[start]["role"] in SYSTEM_ROLES:
        system.append(example_text(messages[start], settings, once=True))
        start += 1
    rest = messages[start:]
    if use_system and (not rest or rest[0]["role"] != "user"):
        out.add("user", _text(opening(settings)))
    for m in rest:
        role = m["role"]
        if role == "tool":
            out.add("user", dialect.tool_result(m, out), join=JOIN)
            continue
        text = example_text(m, settings, once=False) if role in SYSTEM_ROLES else None
        text = m.get("content") or "" if text is None else text
        if m.get("name") and text.strip():
            text = f"{st_name(str(m['name']))}: {text}"
        calls = m.get("toolCalls") or []
        blocks = [_thinking(c["thinking"]) for c in calls if "thinking" in c]
        blocks += [_text(text)] if text.strip() else []
        blocks += [dialect.tool_use(c, out.call_id(c["id"])) for c in calls]
        out.add("assistant" if role == "assistant" else "user", *blocks, join=JOIN)
    prefill = str(settings.get("prefill") or "").rstrip()
    if prefill:
        out.add("assistant", _text(prefill), join=JOIN)
    if out.turns and out.turns[0]["role"] != "user":  # the API's first turn is the user's
        out.turns.insert(0, {"role": "user", "content": [_text(opening(settings))]})
    return JOIN.join(system).strip(), out.turns


def _thinking(block: Any) -> dict[str, Any]:
    return {"type": "thinking", "thinking": block["thinking"], "signature": block["signature"]}


def as_string(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn of text blocks only with its content one string (the texts joined with a
    blank line), as SillyTavern sends it; a turn with other blocks as it is."""
    content = turn["content"]
    if not all(b.get("type") == "text" and set(b) == {"type", "text"} for b in content):
        return turn
    return {"role": turn["role"], "content": JOIN.join(b["text"] for b in content)}
