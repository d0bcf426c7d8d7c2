"""What a run may see: the resource id each macro reads, and the visible chat window.

Internal: the assemble stage (:class:`compiler._assemble.assemble.Assembler`) checks these ids
against the profile's :class:`~compiler.policy.resources.VisibleResourcePolicy` before anything is
read, and offers (and activates world info against) only the visible chat.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler._assemble.macros import MacroCall
from compiler._base.frame import ComponentKind
from compiler.inputs.run import ChatMessageIn
from compiler.inputs.workspace import safe_relpath
from compiler.policy.resources import VisibleResourcePolicy

#: SillyTavern macros whose values are resources.
MACRO_RESOURCES: dict[str, str] = {
    "description": "character.instructions",
    "personality": "character.instructions",
    "scenario": "character.instructions",
    "mesExamples": "character.instructions",
    "charVersion": "character.instructions",
    "char_version": "character.instructions",
    "persona": "user.profile",
}

#: The resource each macro kind reads (files and skills depend on their argument).
RESOURCES: dict[ComponentKind, str] = {
    ComponentKind.CHAT_HISTORY: "chat.history",
    ComponentKind.WORLD_INFO: "world.activated",
    ComponentKind.CHARACTER_CARD: "character.instructions",
    ComponentKind.USER_PROFILE: "user.profile",
    ComponentKind.PLAN: "agent.plan",
    ComponentKind.TOOL_RESULTS: "agent.tool_results",
    ComponentKind.DIFF_SUMMARY: "agent.diff",
}


def file_resource(path: str) -> str:
    """``scratch/private/notes.md`` -> ``workspace.scratch.private.notes`` (checked path)."""
    parts = safe_relpath(path).split("/")
    parts[-1] = parts[-1].split(".")[0] or parts[-1]
    return "workspace." + ".".join(parts)


def file_resource_pattern(path: str) -> str:
    """A workspace path or glob (a plan node's ``visibleFiles``: ``output/main.md``,
    ``scratch/*``) as a resource pattern (``workspace.output.main``, ``workspace.scratch.*``);
    a folder covers everything under it."""
    return file_resource(path.rstrip("/"))


def resource_of(call: MacroCall) -> str | None:
    """The resource id a macro reads, mapped before anything is read."""
    if call.kind == ComponentKind.WORKSPACE_FILE:
        return file_resource(str(call.args["path"]))
    if call.kind == ComponentKind.SKILL:
        return f"skill.{call.args['name']}"
    return RESOURCES.get(call.kind)


#: How many of the newest messages ``chat.history.tail`` shows when the profile does not say
#: (``context.historyTailMessages``).
DEFAULT_TAIL_MESSAGES = 20


def visible_chat(
    chat: Sequence[ChatMessageIn],
    resources: VisibleResourcePolicy,
    tail_messages: int | None,
) -> tuple[Sequence[ChatMessageIn], str | None]:
    """The messages of ``chat`` that ``resources`` shows, and the window (``"tail"`` or None):
    all of them, the newest ``tail_messages`` (the profile's ``context.historyTailMessages``,
    default :data:`DEFAULT_TAIL_MESSAGES`) when only ``chat.history.tail`` is granted (never
    starting with a tool result whose call is cut), or none. A suffix of ``chat`` (a slice:
    a lazily validated chat reads only the messages it shows)."""
    if not resources.is_visible("chat.history"):
        return [], None
    window = resources.window("chat.history")
    start = 0
    if window == "tail":
        size = tail_messages or DEFAULT_TAIL_MESSAGES
        start = max(0, len(chat) - size)
        while start < len(chat) and chat[start].role == "tool":
            start += 1
    return chat[start:], window
