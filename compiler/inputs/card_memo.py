"""A session's memo of the inline card it read last.

Internal: the card reader is :mod:`compiler.inputs.cards`, loaded only when a run gives a card
(a session keeps this memo whether or not its runs have one).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compiler.inputs.cards import CharacterCard


class CardMemo:
    """The inline card a session read last, by where it came from and its JSON text: a turn
    with the same card does not parse it again: reading a card reports nothing, and its
    fields and its embedded lorebook are only read (the scan reads copies of the book's
    entries); at most one."""

    def __init__(self) -> None:
        self._last: tuple[str, CharacterCard] | None = None

    def read(
        self, data: dict[str, Any], *, origin: str, json_path: str
    ) -> tuple[CharacterCard, str | None]:
        """:func:`read_card` of ``data``, and its JSON text (None: not JSON)."""
        try:
            text: str | None = json.dumps(data, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            text = None
        key = None if text is None else f"{origin}\x00{json_path}\x00{text}"
        last = self._last
        if key is not None and last is not None and last[0] == key:
            return last[1], text
        from compiler.inputs.cards import read_card

        card = read_card(data, origin=origin, json_path=json_path)
        if key is not None:
            self._last = (key, card)
        return card, text
