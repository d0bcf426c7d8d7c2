"""What a run lacks that the compiled source reads: each a warning, never a silent request
that reads "a chat between  and User".

Internal: part of :func:`compiler.compile`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from compiler._base.journal import Journal
from compiler.errors import Diagnostic
from compiler.inputs.run import RunContext

_CHAR_MACRO = re.compile(r"\{\{\s*char\s*\}\}", re.IGNORECASE)


def run_warnings(
    source: str,
    ctx: RunContext,
    journal: Journal,
    given: bool,
    preset_texts: Sequence[str] | None = None,
    *,
    task_sent: bool = False,
) -> list[Diagnostic]:
    """``context.no_run_context`` when no run context was ``given`` (it says it all); else
    ``context.empty_chat`` when the chat is empty and the source places a chat history (a
    ChatHistory component in the ``journal``, sent or left out empty) but sends no task
    (``task_sent``: an agent run may start from its task alone), and
    ``context.no_character`` when the run has no card but a preset's sent entries
    (``preset_texts``; None for a template) name ``{{char}}``."""
    if not given:
        return [
            Diagnostic(
                code="context.no_run_context",
                severity="warning",
                message="no run context: the request has no chat, character, persona or task",
                file=source,
                hint="pass --context RUN.json (compile(..., context=...))",
            )
        ]
    out: list[Diagnostic] = []
    places_chat = any(e.payload.get("kind") == "ChatHistory" for e in journal.events)
    if places_chat and not ctx.messages and not task_sent:
        out.append(
            Diagnostic(
                code="context.empty_chat",
                severity="warning",
                message="the run's chat is empty: the request has no conversation (a preset "
                "starts one with the card's greeting, when there is a card)",
                file=ctx.file,
                path="chat",
                hint="give the chat so far in the run context's 'chat'",
            )
        )
    no_card = ctx.card is None and ctx.character is None
    if no_card and any(_CHAR_MACRO.search(t) for t in preset_texts or ()):
        out.append(
            Diagnostic(
                code="context.no_character",
                severity="warning",
                message="the run has no character card: {{char}} in the preset is empty",
                file=ctx.file,
                path="character",
                hint="give the card in the run context's 'character'",
            )
        )
    return out
