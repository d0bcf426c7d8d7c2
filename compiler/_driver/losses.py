"""What a fit left out that a reader of the request would miss, as a compile reports it:
the warnings (:meth:`compiler.fit.record.Recorder.losses`), their promotion under
``strict``, and the hint of a request the budget left empty.

Internal: the compile's.
"""

from __future__ import annotations

from compiler.errors import Diagnostic, LoweringError, StrictError
from compiler.fit import FitResult
from compiler.providers.dialect import Dialect, ModelRequest

#: the warnings of what a budget left out that a reader would miss (a compile's and
#: ``apc check --budget``'s)
LOSS_CODES = frozenset({"context.component_dropped", "context.no_chat_message"})


def checked_losses(
    dialect: Dialect, request: ModelRequest, fitted: FitResult, *, strict: bool
) -> list[Diagnostic]:
    """The dialect's check of the fitted request, then the fit's warnings (an error under
    ``strict``). A request the budget left empty says so in its hint."""
    try:
        dialect.check(request)
    except LoweringError as exc:
        cut = [e.id for e in fitted.ledger.entries if e.action in _CUT]
        if exc.code == "lower.empty_request" and cut:
            exc.hint = (
                f"the budget ({fitted.ledger.budget} tokens) cut {', '.join(cut)}: raise it, "
                "or keep the newest turn (the profile's context.required: newestTurn)"
            )
        raise
    if strict and fitted.warnings:
        raise StrictError(fitted.warnings)
    return [*fitted.lowered, *fitted.warnings]


_CUT = frozenset({"dropped", "truncated", "summarized"})
