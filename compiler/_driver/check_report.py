"""The one check flow behind ``apc check`` and ``POST /v1/check``: each source's own
diagnostics, then, when asked, the budget set-up (the window, and whether what cannot be cut
fits), each finding reported once, and the one strict rule.

Internal: the function is public as :func:`compiler.check_sources`. Checking sources only
loads the parser and the macro catalogue (``apc check`` starts fast); the budget check loads
the pipeline when it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from compiler._driver.checking import add_new, check_string, over_window
from compiler._driver.sources import SourceText, read_source
from compiler._records import record
from compiler.errors import APCError, Diagnostic, promoted
from compiler.inputs.read import collect_warnings

if TYPE_CHECKING:
    from compiler._assemble.assemble import PresetMode
    from compiler._driver.api import Context
    from compiler._driver.options import CompileOptions
    from compiler._driver.session import Session


@record(frozen=True)
class CheckReport:
    """What a check found: every error and warning, in order, each once (under ``strict``,
    every warning is an error), and whether it passed (no error)."""

    diagnostics: tuple[Diagnostic, ...]
    ok: bool


def check_sources(
    sources: Sequence[SourceText | str | os.PathLike[str]],
    *,
    mode: PresetMode | None = None,
    strict: bool = False,
    read: Sequence[Diagnostic] = (),
    budget: CompileOptions | None = None,
    context: Context | Callable[[], Context] = None,
    session_of: Callable[[SourceText, CompileOptions], Session] | None = None,
) -> CheckReport:
    """Check ``sources`` (source texts, or paths of source files: ``.json`` a preset) as
    ``apc check`` does. ``read``: the warnings of reading the request, reported first.
    ``budget``: the options of the budget set-up to check as well (the model's window when
    they name a budget; then, when no source has an error, each source compiled with
    ``context``, a value or what to call for it, against its floors); None: the sources
    only. ``session_of`` gives the :class:`compiler.Session` a budget check runs in
    (default: a new one)."""
    if isinstance(sources, str | os.PathLike | SourceText):
        raise TypeError("sources is a list of paths or SourceTexts: for one file, pass [path]")
    diagnostics = list(read)
    failed = False
    texts: list[SourceText] = []
    for given in sources:
        try:
            source = given if isinstance(given, SourceText) else read_source(given)
            texts.append(source)
            found = check_string(source.text, name=source.name, kind=source.kind, mode=mode)
        except APCError as exc:
            diagnostics.extend(exc.diagnostics)
            failed = True
        else:
            diagnostics.extend(found.warnings)
    if budget is not None:
        if budget.budget is not None:
            diagnostics.extend(
                over_window(
                    budget.provider,
                    budget.model,
                    budget.budget,
                    budget.reserve,
                    budget.max_output_tokens,
                )
            )
        if not failed:
            for source in texts:
                found_budget = _check_budget(source, budget, context, session_of)
                add_new(diagnostics, found_budget)
                failed = failed or any(d.severity == "error" for d in found_budget)
    if strict and any(d.severity == "warning" for d in diagnostics):
        diagnostics, failed = promoted(diagnostics), True
    return CheckReport(tuple(diagnostics), not failed)


def _check_budget(
    source: SourceText,
    options: CompileOptions,
    context: Context | Callable[[], Context],
    session_of: Callable[[SourceText, CompileOptions], Session] | None,
) -> list[Diagnostic]:
    """``context.budget_infeasible`` when what cannot be cut (plus the reserve) does not fit,
    and the compile's warnings; an error of the inputs as its diagnostics."""
    from compiler._driver.session import Session

    try:
        if session_of is not None:
            session = session_of(source, options)
        else:
            session = Session.from_string(
                source.text, kind=source.kind, name=source.name, options=options
            )
        with collect_warnings() as read:  # a context read here reports as one read within
            given = context() if callable(context) else context
        return [*read, *session.check_budget(given).diagnostics(source.name)]
    except APCError as exc:
        return exc.diagnostics
