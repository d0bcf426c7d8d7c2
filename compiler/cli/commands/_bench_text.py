"""``apc bench``'s text report: the runs side by side, then per category and per component
for each run the options asked for."""

from __future__ import annotations

from compiler.replay import BenchReport, RunReport, Stats

CUT_NAMES = ("truncated", "summarized", "dropped", "skipped")


def _n(value: float | None) -> str:
    return "-" if value is None else f"{round(value):,}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _three(s: Stats) -> str:
    """median / p95 / max (``-`` for an empty sample)."""
    if not s.count:
        return "-"
    return f"{_n(s.median)} / {_n(s.p95)} / {_n(s.max)}"


def table(head: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    """Aligned columns: the first ``left`` columns to the left, the rest to the right."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(head), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _budget(run: RunReport) -> str:
    if run.budget is not None:
        return f"{run.budget:,}"
    return f"default {_n(run.effective_budget)}" if run.effective_budget else "default"


def _summary(report: BenchReport) -> list[str]:
    """The runs side by side, one column each."""
    runs = report.runs
    rows = [
        ["cache-stable"]
        + [
            ("auto " if r.auto else "")
            + (str(r.cache_stable) if r.cache_stable else "off")
            + ("" if r.primary else " (cmp)")
            for r in runs
        ],
        ["turns compiled"] + [str(r.turns - sum(r.failed.values())) for r in runs],
        ["turns failed"] + [str(sum(r.failed.values())) for r in runs],
        ["tokens med / p95 / max"] + [_three(r.total_tokens) for r in runs],
        ["budget use med / max"]
        + [f"{_pct(r.budget_use.median)} / {_pct(r.budget_use.max)}" for r in runs],
        ["compile ms med / p95 / max"]
        + [
            f"{_ms(r.compile_ms.median)} / {_ms(r.compile_ms.p95)} / {_ms(r.compile_ms.max)}"
            for r in runs
        ],
        ["prefix stability mean / min"]
        + [f"{_pct(r.prefix_stability.mean)} / {_pct(r.prefix_stability.min)}" for r in runs],
        ["cached share mean / min"]
        + [f"{_pct(r.cached_share.mean)} / {_pct(r.cached_share.min)}" for r in runs],
        *_bill_rows(runs),
    ]
    return table(["budget", *(_budget(r) for r in runs)], rows)


def _bill_rows(runs: list[RunReport]) -> list[list[str]]:
    """The bill of each run: tokens read from the cache, written, billed in full; the whole
    replay's input in base-price tokens and per request token; the bound's ratio."""
    return [
        ["input tokens cached"] + [_n(r.bill.cached) for r in runs],
        ["input tokens cache-written"] + [_n(r.bill.written) for r in runs],
        ["input tokens uncached"] + [_n(r.bill.uncached) for r in runs],
        ["billed input (base tokens)"] + [_n(r.bill.billed) for r in runs],
        ["billed per request token"]
        + [
            f"{r.bill.billed / r.bill.request_tokens:.3f}x" if r.bill.request_tokens else "-"
            for r in runs
        ],
        ["cached share of request, mean"] + [_pct(r.bill.cached_share) for r in runs],
        ["bill / least bound (window)"]
        + [
            "-"
            if r.bill.bound_ratio is None
            else f"{r.bill.bound_ratio:.3f}x ({r.bill.bound_window})"
            for r in runs
        ],
    ]


def _rule(report: BenchReport) -> str:
    """The prompt-cache rule the bills follow, in one line."""
    rule = report.cache_rule
    where = f"{report.provider} {report.model or '?'}"
    if rule is None:
        return f"prompt cache: no rule known for {where}: every input token billed in full"
    how = (
        f"explicit breakpoints, writes at {rule['writeMultiplier']}x"
        if rule["caching"] == "explicit"
        else "automatic prefix"
    )
    step = f" in steps of {rule['incrementTokens']:,}" if rule["incrementTokens"] > 1 else ""
    return (
        f"prompt cache of {where}: {how}, from {rule['minimumTokens']:,} tokens{step}, "
        f"reads at {rule['readMultiplier']}x the input price (as of {rule['asOf']})"
    )


def _categories(run: RunReport) -> list[str]:
    head = ["category", "budget", "kept med/p95/max", "offered med/p95/max", *CUT_NAMES]
    rows = []
    for c in run.categories:
        offered = _three(c.offered)
        if c.offered_uncounted:
            offered += f" ({c.offered_uncounted} uncounted)"
        rows.append(
            [c.name, _n(c.budget), _three(c.kept), offered]
            + [str(c.cuts.get(name, 0)) for name in CUT_NAMES]
        )
    return table(head, rows)


def _components(run: RunReport) -> list[str]:
    head = ["id", "kind", "category", "turns", "kept med/p95/max", "offered med/p95/max"]
    head += ["msgs kept/offered", *CUT_NAMES]
    rows = []
    for c in run.components:
        offered = _three(c.offered)
        if c.offered_uncounted:
            offered += f" ({c.offered_uncounted} uncounted)"
        msgs = "-"
        if c.messages_offered is not None and c.messages_kept is not None:
            msgs = f"{_n(c.messages_kept.median)}/{_n(c.messages_offered.median)}"
        rows.append(
            [c.id, c.kind, c.category or "-", str(c.turns), _three(c.kept), offered, msgs]
            + [str(c.actions.get(name, 0)) for name in CUT_NAMES]
        )
    return table(head, rows, left=3)


def render_report(report: BenchReport) -> str:
    """The whole text report."""
    every = "every turn" if report.every == 1 else f"one turn in {report.every}"
    out = [
        f"{report.source}: {len(report.turns)} turns of a {report.messages}-message chat "
        f"({every}), {report.provider} {report.model or '?'} ({report.encoding or '?'})",
        _rule(report),
        "",
        *_summary(report),
    ]
    for run in report.primary:
        if run.components:
            out += ["", f"{run.label}: per category (tokens; cuts: turns with one)", ""]
            out += _categories(run)
            out += ["", f"{run.label}: per component (tokens; cuts: turns)", ""]
            out += _components(run)
        if run.failed:
            failed = ", ".join(f"{n} with {code}" for code, n in run.failed.items())
            out += ["", f"{run.label}: turns failed: {failed}; first, {run.first_failure}"]
    out += [
        "",
        "prefix stability: the share of a turn's request that the next turn's keeps byte for "
        "byte from the start; cached share: the share of the next request that prefix is",
        "billed input: the replay's input tokens at the prompt cache's multipliers; the least "
        "bound: the cheapest cut sequence that cuts at most (window) messages more than fits",
    ]
    return "\n".join(out) + "\n"
