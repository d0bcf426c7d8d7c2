"""``apc explain SOURCE --context RUN.json``: the budget ledger, as a table or JSON, and the
lorebook debugger's report (every world info entry the scan considered).

Internal: the interface is the ``apc`` command line.
"""

from __future__ import annotations

import argparse
from typing import Any

from compiler import BudgetLedger, WorldInfoReport
from compiler.cli.commands._common import (
    add_format,
    check_output,
    diagnostics_format,
    dumps,
    usage_error,
    write_output,
)
from compiler.cli.commands._compile_options import (
    add_compile_arguments,
    compile_from_args,
    usage_problem,
)
from compiler.cli.render import print_diagnostics
from compiler.errors import BudgetError
from compiler.report import explain_document, explain_html, explain_page


def register(sub: Any) -> None:
    p = sub.add_parser("explain", help="show how a compile spends its token budget")
    add_compile_arguments(p)
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    add_format(p, html=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    problem = usage_problem(args)
    if problem:
        return usage_error(problem)
    check_output(args.output)  # before compiling: a FIFO or symlink at OUT is refused
    try:
        result = compile_from_args(args)
    except BudgetError as exc:  # show what was decided up to the failure, then the error
        data = exc.details.get("ledger")
        if data is not None and args.format == "html":
            document = explain_document(BudgetLedger.model_validate(data))
            page = explain_page(
                document, source=args.source, diagnostics=exc.diagnostics, failed=True
            )
            write_output(page, args.output)
        elif data is not None:
            _emit(BudgetLedger.model_validate(data), args)
        print_diagnostics(exc.diagnostics, fmt=diagnostics_format(args))
        return 1
    if result.warnings:
        print_diagnostics(result.warnings, fmt=diagnostics_format(args))
    if args.format == "html":
        write_output(explain_html(result, source=args.source), args.output)
    else:
        _emit(result.ledger, args, result.world_info_report)
    return 0


def _emit(
    ledger: BudgetLedger, args: argparse.Namespace, world: WorldInfoReport | None = None
) -> None:
    """The ledger, with the world info report when the compile scanned lorebooks (JSON:
    its ``worldInfo``, null when none)."""
    if args.format == "json":
        write_output(dumps(explain_document(ledger, world)), args.output)
    else:
        text = render_ledger(ledger)
        write_output(text + ("\n" + world.table() if world is not None else ""), args.output)


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def render_ledger(ledger: BudgetLedger) -> str:
    """The ledger as a terminal table: one row per component, the tokens by category of a
    component in several (a chat history with world info, notes or injections placed in it),
    then the totals."""
    head = ["id", "kind", "offered", "own", "category", "total", "granted", "used", "action"]
    rows: list[list[str]] = []
    notes: list[str] = []
    split: list[str] = []  # the entries whose tokens are in several categories
    for e in ledger.entries:
        offered = _n(e.tokens_offered)
        if e.messages_offered is not None:
            offered += f" ({e.messages_kept}/{e.messages_offered} msgs)"
        action = e.action if e.strategy is None else f"{e.action} [{e.strategy}]"
        rows.append(
            [
                e.id,
                e.kind,
                offered,
                _n(e.budget.own),
                _n(e.budget.category),
                _n(e.budget.total),
                _n(e.tokens_granted),
                _n(e.tokens_used) + (f" (+{e.summary_tokens} sum.)" if e.summary_tokens else ""),
                action,
            ]
        )
        if e.reason and e.action != "kept":
            notes.append(f"  {e.id} ({e.source}): {e.reason}")
        if e.used_by_category:
            split.append(
                f"  {e.id}: " + ", ".join(f"{k} {_n(v)}" for k, v in e.used_by_category.items())
            )
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    numeric = {2, 3, 4, 5, 6, 7}

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [
        f"{ledger.provider} {ledger.model} ({ledger.encoding}); budget {_n(ledger.budget)} "
        f"from {ledger.budget_source}"
        + (f", window {_n(ledger.window)}" if ledger.window else "")
        + (f", reserve {_n(ledger.reserve)}" if ledger.reserve else "")
        + (f", cache-stable step {ledger.cache_stable}" if ledger.cache_stable else ""),
        "",
        line(head),
        line(["-" * w for w in widths]),
        *(line(r) for r in rows),
        "",
    ]
    if notes:
        out += ["why:", *notes, ""]
    if split:
        out += ["used by category (text placed in the chat history counts in its own):", *split, ""]
    cats = [
        f"{name} {_n(c.used)}/{_n(c.budget)}"
        for name, c in ledger.categories.items()
        if c.used or c.budget is not None
    ]
    if cats:
        out.append("categories (used/budget): " + ", ".join(cats))
    out += _totals(ledger)
    return "\n".join(out) + "\n"


def _totals(ledger: BudgetLedger) -> list[str]:
    """The request's totals, and what the budget counted where that differs."""
    out = [
        f"request: {_n(ledger.total_tokens)} tokens = components "
        f"{_n(ledger.total_tokens - ledger.overhead_tokens)} + overhead "
        f"{_n(ledger.overhead_tokens)}; budget {_n(ledger.budget)}"
        + (
            f" (counts are an estimate: {ledger.safety_margin:.0%} of the budget held back)"
            if ledger.counts == "estimate"
            else ""
        )
    ]
    if ledger.squash_saved_tokens:
        out.append(
            f"the budget counted {_n(ledger.total_tokens + ledger.squash_saved_tokens)} tokens: "
            "each system message apart, before squash_system_messages merged them "
            f"({_n(ledger.squash_saved_tokens)} fewer sent), as SillyTavern counts them"
        )
    return out
