"""The regex scripts of a run that gives none: every text as it is.

Internal: a compile whose run gives no regex script (none in the run context, none on its
card) runs :data:`UNCHANGED` where :class:`compiler.st.regex_run.ScriptRunner` would run the
scripts, so the script engine (the JavaScript regex translation and its limits) is not loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from compiler.inputs.run import RunContext

_T = TypeVar("_T")


def has_scripts(ctx: RunContext) -> bool:
    """Whether the run gives any regex script: its own, or its card's (allowed or not: the
    runner reports a card's it does not run)."""
    card = ctx.card
    return bool(ctx.regex_scripts) or (card is not None and "regex_scripts" in card.extensions)


class Unchanged:
    """A script runner with no script (:class:`~compiler.st.regex_run.ScriptRunner`'s methods)."""

    def apply(self, text: str, placement: int, *, depth: int | None, prompt: bool = True) -> str:
        return text

    def chat(self, messages: Sequence[_T]) -> Sequence[_T]:
        return messages

    def world(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return entries

    def greeting(self, text: str, fill: Callable[[str], str]) -> str:
        return fill(text)


UNCHANGED = Unchanged()
