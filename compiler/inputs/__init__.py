"""The readers of a run's inputs, and the run context's schema: :class:`RunContext` and the
parts its fields hold (chat messages, tools, the persona, the card, lorebooks, the
workspace, ...).

The names here are imported on first use (as :mod:`compiler`'s are), so importing a reader
never loads the run-context schema. Readers only: what SillyTavern does with what they read
(world-info activation, regex scripts, macros) is :mod:`compiler.st`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._base.lazy import lazy_exports

if TYPE_CHECKING:
    from compiler.inputs.cards import CharacterCard
    from compiler.inputs.chat import ChatMetadata
    from compiler.inputs.chat_log import ChatLog
    from compiler.inputs.lorebook import CharacterFilter, Lorebook, SelectiveLogic, WorldEntry
    from compiler.inputs.lorebooks import BookSource, Lorebooks
    from compiler.inputs.read import (
        Parsed,
        collect_warnings,
        decode_text,
        is_file,
        lexists,
        parse_json,
        read_bytes,
        real_dir,
    )
    from compiler.inputs.run import (
        ChatMessageIn,
        InlineWorkspace,
        NoteSettings,
        Persona,
        RunContext,
        ToolIn,
        ToolResultIn,
        WorldInfoSettings,
        load_context,
    )
    from compiler.inputs.sandbox import admit, confine
    from compiler.inputs.workspace import Workspace
    from compiler.inputs.world_inline import WorldEntryIn

_HOMES = {
    "compiler.inputs.cards": "CharacterCard",
    "compiler.inputs.chat": "ChatMetadata",
    "compiler.inputs.chat_log": "ChatLog",
    "compiler.inputs.lorebook": "CharacterFilter Lorebook SelectiveLogic WorldEntry",
    "compiler.inputs.lorebooks": "BookSource Lorebooks",
    "compiler.inputs.read": "Parsed collect_warnings decode_text is_file lexists parse_json "
    "read_bytes real_dir",
    "compiler.inputs.sandbox": "admit confine",
    "compiler.inputs.run": "ChatMessageIn InlineWorkspace NoteSettings Persona RunContext ToolIn "
    "ToolResultIn WorldInfoSettings load_context",
    "compiler.inputs.workspace": "Workspace",
    "compiler.inputs.world_inline": "WorldEntryIn",
}
__all__ = [
    "BookSource",
    "CharacterCard",
    "CharacterFilter",
    "ChatLog",
    "ChatMessageIn",
    "ChatMetadata",
    "InlineWorkspace",
    "Lorebook",
    "Lorebooks",
    "NoteSettings",
    "Parsed",
    "Persona",
    "RunContext",
    "SelectiveLogic",
    "ToolIn",
    "ToolResultIn",
    "Workspace",
    "WorldEntry",
    "WorldEntryIn",
    "WorldInfoSettings",
    "admit",
    "collect_warnings",
    "confine",
    "decode_text",
    "is_file",
    "lexists",
    "load_context",
    "parse_json",
    "read_bytes",
    "real_dir",
]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
