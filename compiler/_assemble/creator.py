"""The expanders of creator content: the character card, the persona and the activated world
info, with SillyTavern's {{char}}/{{user}} filled as SillyTavern fills them.

Internal: the assemble stage's (:mod:`compiler._assemble.assemble`). SillyTavern's engines
(macros, the world info scan) are loaded when a compile expands one of these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compiler._assemble.markers import ALLOWANCE, openers
from compiler._assemble.required import entry_pieces

if TYPE_CHECKING:
    from compiler._assemble.assemble import Assembler
    from compiler._assemble.macros import MacroCall


def world(a: Assembler, call: MacroCall) -> dict[str, Any]:
    from compiler.st.world.run import world_pieces

    pieces = world_pieces(a.world_entries, call.args.get("position"))
    return entry_pieces(creator_text(a, "\n".join(pieces), "world.activated"), pieces, a.fill)


def creator_text(a: Assembler, text: str, resource: str) -> dict[str, Any]:
    """Creator content (world entries, card fields, the persona), with SillyTavern's
    {{char}}/{{user}} filled as SillyTavern does; only the openers of the raw text are its
    own (:mod:`compiler._assemble.markers`)."""
    from compiler.st.macros import inert

    content, from_values = a.filled(text)
    return {
        "inline_content": content,
        "resource": resource,
        "metadata": {ALLOWANCE: openers(inert(text)) + from_values},
    }


def character(a: Assembler, call: MacroCall) -> dict[str, Any]:
    field = str(call.args.get("field", "description"))
    card = a.context.character if isinstance(a.context.character, dict) else {}
    data = card.get("data", card) if isinstance(card.get("data"), dict) else card
    text = str(data.get(field) or "")
    if field == "mes_example" and a.visible("world.activated"):
        from compiler.st.world.place import with_example_entries

        text = with_example_entries(a.world_entries, text)
    return creator_text(a, text, "character.instructions")


def user(a: Assembler, call: MacroCall) -> dict[str, Any]:
    persona = a.context.persona
    return creator_text(a, persona.description if persona else "", "user.profile")
