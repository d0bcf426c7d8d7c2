"""The HTML report of ``apc explain --format html`` and ``apc bench --format html``: one
self-contained page (inline CSS, JavaScript and SVG; no network, opens from ``file://``)
drawn in the browser from the JSON document ``--format json`` prints, embedded in the page.

A front-end of the public API: it imports only :mod:`compiler`, :mod:`compiler.errors` and
:mod:`compiler.providers` (a test holds it to that).

>>> import compiler, compiler.report
>>> result = compiler.compile_string("Hi <<agent.plan>>", context={"plan": "p"})
>>> page = compiler.report.explain_html(result, source="inline")
>>> page.startswith("<!DOCTYPE html>")
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compiler.report.page import render_page

if TYPE_CHECKING:
    from compiler import BenchReport, BudgetLedger, CompileResult, WorldInfoReport
    from compiler.errors import Diagnostic

__all__ = ["bench_html", "explain_document", "explain_html", "explain_page", "render_page"]


def explain_document(ledger: BudgetLedger, world: WorldInfoReport | None = None) -> dict[str, Any]:
    """``apc explain --format json``'s document: the ledger (camelCase keys) and, under
    ``worldInfo``, the lorebook debugger's report (null when no lorebook was scanned)."""
    data: dict[str, Any] = ledger.model_dump(mode="json", by_alias=True)
    data["worldInfo"] = world.as_json() if world is not None else None
    return data


def explain_page(
    document: dict[str, Any],
    *,
    source: str,
    messages: dict[str, Any] | None = None,
    diagnostics: Sequence[Diagnostic] = (),
    failed: bool = False,
) -> str:
    """The page of an explain ``document`` (:func:`explain_document`), with the request's
    messages (:func:`compiler.request_messages`; None: not compiled, e.g. a failed fit)
    and the compile's diagnostics (its warnings, or the errors it failed with: ``failed``)."""
    payload = {
        "report": "explain",
        "source": source,
        "failed": failed,
        "explain": document,
        "messages": messages,
        "diagnostics": [d.to_json() for d in diagnostics],
    }
    return render_page("explain", f"apc explain: {source}", payload)


def explain_html(result: CompileResult, *, source: str) -> str:
    """The page of one compile (what ``apc explain SOURCE --format html`` writes)."""
    import compiler

    document = explain_document(result.ledger, result.world_info_report)
    messages = compiler.request_messages(result)
    return explain_page(document, source=source, messages=messages, diagnostics=result.warnings)


def bench_html(report: BenchReport) -> str:
    """The page of a replay (what ``apc bench --format html`` writes): its document is
    ``apc bench --format json``'s (:meth:`compiler.BenchReport.to_json`)."""
    payload = {"report": "bench", "source": report.source, "bench": report.to_json()}
    return render_page("bench", f"apc bench: {report.source}", payload)
