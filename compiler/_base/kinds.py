"""The names every stage shares: message roles, component kinds, fit strategies.

Internal: the public name is :class:`compiler.ComponentKind`. Kept free of pydantic so that
checking a template (``apc check``) loads no model code.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

Role = Literal["system", "user", "assistant", "tool", "developer"]
"""A message's role."""
PromptRole = Literal["system", "user", "assistant"]
"""The roles SillyTavern sends prompt text in: a preset entry, an in-chat injection, a world
info entry placed at a depth."""
Strategy = Literal["truncate", "summarize", "drop_optional", "fail"]

MAX_TOKENS = 2**53
"""The largest token count a budget, a reserve or a response's limit may be (JSON's exact
integers): the compile options' bound, and a preset's."""
MIN_SEED, MAX_SEED = -(2**63), 2**64 - 1
"""The seeds the compile options take (64 bits, signed or not), and a preset's."""


class ComponentKind(StrEnum):
    """The thirteen component kinds of the specification (seed section 3)."""

    SYSTEM_INSTRUCTION = "SystemInstruction"
    CHAT_HISTORY = "ChatHistory"
    WORLD_INFO = "WorldInfo"
    CHARACTER_CARD = "CharacterCard"
    USER_PROFILE = "UserProfile"
    PRESET_GUIDE = "PresetGuide"
    WORKSPACE_TREE = "WorkspaceTree"
    WORKSPACE_FILE = "WorkspaceFile"
    TOOL_DEFINITIONS = "ToolDefinitions"
    TOOL_RESULTS = "ToolResults"
    PLAN = "Plan"
    DIFF_SUMMARY = "DiffSummary"
    SKILL = "Skill"
