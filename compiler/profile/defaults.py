"""The built-in ``default-writer`` profile (seed section 12) and the default agent system prompt.

Internal: the API is :mod:`compiler.profile`.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any

from compiler.inputs.workspace import WORKSPACE_ROOTS

__all__ = ["DEFAULT_AGENT_SYSTEM_PROMPT", "DEFAULT_WRITER", "default_writer", "system_prompt_for"]

DEFAULT_WRITER: dict[str, Any] = {
    "id": "default-writer",
    "preset": {"mode": "currentPromptSnapshot", "required": False},
    "model": {"mode": "currentPromptSnapshot"},
    "run": {
        "presentation": "foreground",
        "modelRetry": {"maxRetries": 3, "intervalMs": 3000},
    },
    "instructions": {"agentSystemPrompt": None},
    "tools": {
        "allow": [
            "workspace.list_files",
            "workspace.search_files",
            "workspace.read_file",
            "workspace.write_file",
            "workspace.apply_patch",
            "workspace.finish",
            "chat.search",
            "chat.read_messages",
            "worldinfo.read_activated",
            "skill.list",
            "skill.search",
            "skill.read",
        ],
        "deny": [],
        "toolDescriptions": {},
        "maxRounds": 80,
        "maxCallsPerRun": 80,
    },
    "skills": {
        "visible": ["*"],
        "deny": [],
        "maxReadCharsPerCall": 20000,
        "maxReadCharsPerRun": 80000,
    },
    "workspace": {
        "visibleRoots": list(WORKSPACE_ROOTS),
        "writableRoots": list(WORKSPACE_ROOTS),
    },
    "plan": {"mode": "none", "beta": True, "nodes": []},
    "output": {
        "artifacts": [
            {
                "id": "main",
                "path": "output/main.md",
                "kind": "markdown",
                "target": "messageBody",
                "required": True,
            }
        ]
    },
}
"""Seed section 12, verbatim (as Python literals). Do not mutate; use :func:`default_writer`."""


def default_writer() -> dict[str, Any]:
    """A fresh copy of the built-in ``default-writer`` profile JSON."""
    return copy.deepcopy(DEFAULT_WRITER)


DEFAULT_AGENT_SYSTEM_PROMPT = """\
You are a writing agent working inside a story workspace. You write the next reply of the \
roleplay or story described in the conversation, as the character the preset and the \
character card define, and you deliver it as files, not as chat text.

How to work:
- Read before you write. Use the workspace and chat tools to look at what already exists \
(the output files, your notes in scratch/, the plan in plan/, summaries/ and persist/) \
and at the parts of the chat history or world info you need. Read only what helps this reply.
- Write the reply into the message body artifact named in your output policy \
(by default output/main.md). Write complete prose: the file is shown to the reader as the \
message. Put any other required artifact at its stated path.
- Keep working notes, outlines and drafts in scratch/ or plan/; never put them in the \
message body.
- Stay in character and in the story's voice, tense and point of view. Respect the \
character card, the world information and the author's instructions in the prompt; do not \
speak for the user's character unless the prompt asks you to.
- Use only the tools you are given. If a tool is refused or needs approval, continue \
with what you have or say clearly what you could not do.
- When every required artifact is written and checked, call workspace.finish. Do not \
finish with an empty or placeholder message body.
"""
"""The agent system prompt used when ``instructions.agentSystemPrompt`` is null."""


def system_prompt_for(offered: Collection[str]) -> str:
    """The built-in agent system prompt naming only tools the request offers (dotted names):
    without ``workspace.finish``, its last instruction says to stop instead of calling it."""
    if "workspace.finish" in offered:
        return DEFAULT_AGENT_SYSTEM_PROMPT
    return DEFAULT_AGENT_SYSTEM_PROMPT.replace("call workspace.finish", "stop")
