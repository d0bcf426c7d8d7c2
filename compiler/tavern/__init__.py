"""SillyTavern preset import: prompts, prompt order, markers and in-chat injections.

SillyTavern's ``{{macro}}`` substitution is :mod:`compiler.st.macros`.
"""

from __future__ import annotations

from compiler.tavern.injections import ExtensionPrompt, apply_injections
from compiler.tavern.preset import (
    AGENT_MARKERS,
    DEFAULT_PROMPTS,
    MARKERS,
    PresetPrompt,
    PresetSettings,
    PromptOrder,
    PromptOrderEntry,
    TavernPreset,
    ordered_prompts,
    read_preset,
)

__all__ = [
    "AGENT_MARKERS",
    "DEFAULT_PROMPTS",
    "MARKERS",
    "ExtensionPrompt",
    "PresetPrompt",
    "PresetSettings",
    "PromptOrder",
    "PromptOrderEntry",
    "TavernPreset",
    "apply_injections",
    "ordered_prompts",
    "read_preset",
]
