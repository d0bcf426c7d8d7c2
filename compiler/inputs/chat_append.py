"""A message added to a run's chat before anything reads it, as SillyTavern adds one to
its chat before it builds the prompt (``sendMessageAsUser``: a preset's ``send_if_empty``).

Internal: :mod:`compiler.tavern` adds the message; the chat stays as cheap to read as it
was (a lazily validated chat stays lazy, its messages the same objects).
"""

from __future__ import annotations

from compiler.inputs.lazy_chat import LazyChat
from compiler.inputs.run import ChatMessageIn, RunContext


def with_user_message(ctx: RunContext, content: str) -> RunContext:
    """``ctx`` (not changed) with ``content`` as the persona's newest message: the world
    info scan reads it, the Author's Note's interval counts it (:attr:`RunContext.
    user_messages` is one more, a chat file's hidden lines included)."""
    chat = ctx.messages
    users = ctx.user_messages
    grown = (
        chat.appended("user", content)
        if isinstance(chat, LazyChat)
        else [*chat, ChatMessageIn(role="user", content=content)]
    )
    out = ctx.model_copy(update={"chat": grown})
    if out._user_lines is not None:  # a chat file's count, which its hidden lines are in
        at = (out._user_lines_at or [])[: len(chat)]
        out._user_lines, out._user_lines_at = users + 1, [*at, users + 1]
    return out
