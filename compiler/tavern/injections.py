"""In-chat injections: preset entries with ``injection_position`` 1, placed inside the history.

Internal: the API is :mod:`compiler.tavern`.

Follows SillyTavern's ``populationInjectionPrompts`` (chat completion):

- only enabled entries with ``injection_position`` 1 and non-empty ``content`` take part;
  an entry with an ``injection_trigger`` list only fires for those generation types;
- depth ``d`` means "``d`` original messages follow it": depth 0 goes after the newest
  message, depth 1 just before it, a depth past the start goes to the top of the history;
  injected messages never count towards another entry's depth;
- at one depth, entries are grouped by ``injection_order`` (default 100), higher order
  first; inside a group, one message per role in the order system, user, assistant, whose
  text is the group's entries of that role joined by ``\\n`` and stripped (a blank result
  is dropped);
- SillyTavern builds that list newest-first and reverses the chat afterwards, so in the
  final (oldest-first) history the messages of one depth appear in reverse: the
  highest-order system message ends up last, nearest the end ("most important go lower").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from compiler.frame import PromptRole
from compiler.tavern.preset import PresetPrompt

T = TypeVar("T")
ROLE_ORDER: tuple[PromptRole, ...] = ("system", "user", "assistant")


def _fires(prompt: PresetPrompt, generation_type: str) -> bool:
    return (
        prompt.enabled
        and prompt.in_chat
        and bool(prompt.content)
        and (not prompt.injection_trigger or generation_type in prompt.injection_trigger)
    )


def injection_messages(
    prompts: Sequence[PresetPrompt],
) -> list[tuple[PromptRole, str, list[PresetPrompt]]]:
    """The messages one depth's entries become, in SillyTavern's (newest-first) build order."""
    out: list[tuple[PromptRole, str, list[PresetPrompt]]] = []
    for order in sorted({p.injection_order for p in prompts}, reverse=True):
        group = [p for p in prompts if p.injection_order == order]
        for role in ROLE_ORDER:
            members = [p for p in group if p.role == role]
            text = "\n".join(p.content for p in members).strip()
            if text:
                out.append((role, text, members))
    return out


def apply_injections(
    history: Sequence[T],
    injections: Iterable[PresetPrompt],
    make_message: Callable[[PromptRole, str, list[PresetPrompt]], T],
    *,
    generation_type: str = "normal",
    answers_a_call: Callable[[T], bool] | None = None,
) -> list[T]:
    """``history`` (oldest first) with the in-chat injections inserted at their depths.

    ``make_message(role, content, source_prompts)`` builds one injected message; the
    history items are never changed. Entries that are not in-chat injections are ignored,
    so a whole ordered prompt list can be passed. With ``answers_a_call`` (true for a tool
    result), an injection never lands between a tool call and its results, which no
    provider accepts: it moves up to just before the call.
    """
    eligible = [p for p in injections if _fires(p, generation_type)]
    newest_first: list[T] = list(reversed(history))
    inserted = 0
    for depth in sorted({p.injection_depth for p in eligible}):
        built = injection_messages([p for p in eligible if p.injection_depth == depth])
        if not built:
            continue
        at = min(depth + inserted, len(newest_first))
        while answers_a_call is not None and 0 < at <= len(newest_first):
            if not answers_a_call(newest_first[at - 1]):
                break
            at += 1  # inside a call and its results: before the call instead
        newest_first[at:at] = [make_message(role, text, src) for role, text, src in built]
        inserted += len(built)
    newest_first.reverse()
    return newest_first
