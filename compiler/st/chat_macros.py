"""The SillyTavern macros the chat fills: ``{{input}}``, ``{{lastMessage}}``,
``{{lastUserMessage}}``, ``{{lastCharMessage}}`` and ``{{idle_duration}}``.

Internal: used by :mod:`compiler._assemble.assemble`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from compiler.inputs.run import ChatMessageIn
from compiler.st.macros import humanize, send_time


def _hidden(m: ChatMessageIn) -> bool:
    """A tool result or a tool call: SillyTavern keeps them as ``is_system`` rows."""
    return m.role == "tool" or (m.role == "assistant" and bool(m.tool_calls))


def idle_duration(chat: Sequence[ChatMessageIn], now: datetime) -> str:
    """``{{idle_duration}}``: the time since the user's last message before the newest one,
    as SillyTavern words it (public/scripts/macros.js getTimeSinceLastMessage): the newest
    message (the one just sent) is passed over, tool rows are skipped; ``just now`` when
    there is no such message or it has no send time; ``Invalid date`` (as SillyTavern) when
    its send time cannot be read. A send time without a zone is in ``now``'s zone."""
    rows = (m for m in reversed(chat) if not _hidden(m))  # newest first; O(what is read)
    next(rows, None)  # the message just sent
    previous = next((m for m in rows if m.role == "user"), None)
    if previous is None or not previous.send_date:
        return "just now"
    sent = send_time(previous.send_date)
    if sent is None:
        return "Invalid date"
    now = now if now.tzinfo else now.astimezone()
    sent = sent if sent.tzinfo else sent.replace(tzinfo=now.tzinfo)
    return humanize(now - sent)


def chat_values(chat: Sequence[ChatMessageIn], now: datetime) -> dict[str, str]:
    """``lastMessage``, ``lastUserMessage``, ``lastCharMessage`` (the newest message, user
    message and assistant message of ``chat``, tool messages left out), ``input`` and
    ``idle_duration``.

    ``input`` is SillyTavern's input box, what the user just sent: the newest message's
    text when it is the user's, else empty (a chat ending with the assistant, a tool call or
    result, or a system message, an empty chat: Send with nothing typed)."""
    out: dict[str, str] = {}
    for m in reversed(chat):  # newest first, until all three are known
        if m.role != "tool":
            text = m.content or ""
            out.setdefault("lastMessage", text)
            if m.role in ("user", "assistant"):
                out.setdefault("lastUserMessage" if m.role == "user" else "lastCharMessage", text)
            if len(out) == 3:
                break
    values = {k: out.get(k, "") for k in ("lastMessage", "lastUserMessage", "lastCharMessage")}
    newest = chat[-1] if chat else None
    values["input"] = (newest.content or "") if newest and newest.role == "user" else ""
    values["idle_duration"] = idle_duration(chat, now)
    return values
