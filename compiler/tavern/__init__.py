"""SillyTavern preset import: prompts, prompt order, markers, macros and in-chat injections."""

from __future__ import annotations

from compiler.tavern.injections import apply_injections
from compiler.tavern.macros import STANDARD_MACROS, card_values, substitute
from compiler.tavern.preset import (
    AGENT_MARKERS,
    DEFAULT_PROMPTS,
    MARKERS,
    PresetPrompt,
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
    "STANDARD_MACROS",
    "PresetPrompt",
    "PromptOrder",
    "PromptOrderEntry",
    "TavernPreset",
    "apply_injections",
    "card_values",
    "ordered_prompts",
    "read_preset",
    "substitute",
]
