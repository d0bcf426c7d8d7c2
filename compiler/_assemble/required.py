"""What the budget may never cut, and what it may cut a part of: the profile's
``context.required``, applied to the components a compile assembles, and the entries of a
world-info block (:data:`~compiler._base.frame.PIECES`).

By default (:data:`~compiler.profile.models.DEFAULT_REQUIRED`) a reader would miss all of
them: in agent mode the card's text (not its dialogue examples), the persona and the run's
task are required components (kept whole, or ``context.budget_exceeded``); in every mode a
chat history's newest turn (the newest user message and what follows it) is never cut. A
profile that leaves a part out of the list lets the budget cut it like any other; a macro's
own ``required=`` always wins.

Internal: the assembler's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compiler._base.frame import NEWEST_TURN, PIECES, Component, ComponentKind
from compiler.profile import ResolvedAgentProfile
from compiler.profile.models import RequiredPart


def requires(profile: ResolvedAgentProfile, mode: str, part: RequiredPart) -> bool:
    """Whether the budget may never cut ``part`` (the card, the persona and the task only
    in agent mode)."""
    if part != "newestTurn" and mode != "agent":
        return False
    return part in profile.context.required


def default_required(
    profile: ResolvedAgentProfile,
    mode: str,
    kind: ComponentKind,
    args: dict[str, Any],
    fields: dict[str, Any],
) -> bool:
    """Whether a macro's component (its expanded ``fields``) is required: its
    ``required=``, else for the card's text and the persona whether the profile requires
    them (when there is any)."""
    if "required" in args:
        return bool(args["required"])
    if not fields.get("inline_content"):
        return False
    if kind == ComponentKind.CHARACTER_CARD:
        return args.get("field") != "mes_example" and requires(profile, mode, "character")
    return kind == ComponentKind.USER_PROFILE and requires(profile, mode, "persona")


def mark_history(comp: Component, profile: ResolvedAgentProfile, mode: str) -> None:
    """A chat history whose newest turn the profile lets the budget cut says so."""
    if comp.kind == ComponentKind.CHAT_HISTORY and not requires(profile, mode, "newestTurn"):
        comp.metadata[NEWEST_TURN] = False


def entry_pieces(
    fields: dict[str, Any], entries: list[str], fill: Callable[[str], str]
) -> dict[str, Any]:
    """A world-info block's ``fields`` (``entries`` joined and filled), with the metadata
    that lets the fit keep its leading entries instead of dropping it whole; none when there
    is one entry, or when filling the entries one by one does not give the same text."""
    if len(entries) > 1:
        items = [fill(e) for e in entries]
        if "\n".join(items) == fields["inline_content"]:
            fields["metadata"][PIECES] = {"items": items, "head": "", "tail": ""}
    return fields


def framed_pieces(comp: Component, before: str) -> None:
    """After ``comp``'s text ``before`` was framed (a preset's ``wi_format``), its pieces
    carry the frame's head and tail (or none, when the frame does not hold the text)."""
    pieces = comp.metadata.get(PIECES)
    if pieces is None:
        return
    after = comp.inline_content or ""
    at = after.find(before) if before else -1
    if at < 0:
        del comp.metadata[PIECES]
        return
    head = pieces["head"] + after[:at]
    comp.metadata[PIECES] = {
        **pieces,
        "head": head,
        "tail": after[at + len(before) :] + pieces["tail"],
    }
