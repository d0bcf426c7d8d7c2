"""Built-in definitions of the known TauriTavern tools (a run may override any of them).

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.
"""

from __future__ import annotations

from typing import Any


def _obj(required: tuple[str, ...] = (), **props: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _i(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


_PATH = _s("Workspace-relative path under output/, scratch/, plan/, summaries/ or persist/.")

#: name -> (description, JSON Schema of the parameters)
BUILTIN_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "agent.list": ("List the agents this run may delegate to.", _obj()),
    "agent.delegate": (
        "Start a sub-agent on a task; returns a handle to await.",
        _obj(("agent", "task"), agent=_s("Agent id."), task=_s("What the sub-agent should do.")),
    ),
    "agent.handoff": (
        "Hand the run over to another agent and stop.",
        _obj(("agent",), agent=_s("Agent id."), note=_s("Context for the next agent.")),
    ),
    "agent.await": (
        "Wait for a delegated agent and return its result.",
        _obj(("handle",), handle=_s("The handle agent.delegate returned.")),
    ),
    "chat.search": (
        "Search the whole chat history, including messages cut from the prompt.",
        _obj(("query",), query=_s("Words to look for."), limit=_i("Most results.", minimum=1)),
    ),
    "chat.read_messages": (
        "Read chat messages by index range (0 is the oldest).",
        _obj(("start",), start=_i("First index.", minimum=0), count=_i("How many.", minimum=1)),
    ),
    "worldinfo.read_activated": ("Read the world info entries activated for this turn.", _obj()),
    "dice.roll": (
        "Roll dice in standard notation.",
        _obj(("notation",), notation=_s("Dice notation, e.g. 2d6+1.")),
    ),
    "skill.list": ("List the skills visible to this run.", _obj()),
    "skill.search": (
        "Search skills by words.",
        _obj(("query",), query=_s("Words to look for.")),
    ),
    "skill.read": (
        "Read a skill's instructions.",
        _obj(("name",), name=_s("Skill name."), offset=_i("Start character.", minimum=0)),
    ),
    "workspace.list_files": (
        "List files in the workspace.",
        _obj(prefix=_s("Only paths under this prefix.")),
    ),
    "workspace.search_files": (
        "Search workspace files for text.",
        _obj(("query",), query=_s("Text to look for."), prefix=_s("Only under this prefix.")),
    ),
    "workspace.read_file": ("Read a workspace file.", _obj(("path",), path=_PATH)),
    "workspace.write_file": (
        "Write a whole workspace file (creates or replaces it).",
        _obj(("path", "content"), path=_PATH, content=_s("The complete new content.")),
    ),
    "workspace.apply_patch": (
        "Apply a unified diff to workspace files.",
        _obj(("patch",), patch=_s("A unified diff with workspace-relative paths.")),
    ),
    "workspace.commit": (
        "Commit the workspace changes of this run.",
        _obj(message=_s("What changed.")),
    ),
    "workspace.finish": (
        "Finish the run once every required artifact is written.",
        _obj(summary=_s("One line on what was done.")),
    ),
}
