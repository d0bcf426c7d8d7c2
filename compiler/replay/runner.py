"""``compiler.bench``: replay a run's chat turn by turn and measure how the budgets behave.

Internal: the API is :func:`compiler.bench`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Unpack

from compiler._driver.api import Context
from compiler._driver.options import CACHE_STABLE_STEP, CompileOptions, OptionFields
from compiler.errors import (
    APCError,
    BudgetError,
    ContextError,
    Diagnostic,
    LoweringError,
    StrictError,
)
from compiler.fit import SummaryCache
from compiler.fit.ledger import BudgetLedger
from compiler.inputs.read import collect_warnings
from compiler.inputs.run import RunContext, load_context
from compiler.providers import get_dialect
from compiler.replay.aggregate import RunAccumulator
from compiler.replay.bill import Biller, choose_step, finish, history_cut, record_bill, rule_for
from compiler.replay.cutplan import NO_CACHE
from compiler.replay.report import BenchReport, RunReport
from compiler.replay.turns import (
    CompilerFactory,
    TurnCompiler,
    prefix_shares,
    request_turns,
    sessions,
    thin,
)

TURN_ERRORS = (BudgetError, LoweringError, StrictError)
"""The errors that depend on what a turn holds and on the budget (over budget; a request
the provider would reject, e.g. a history cut to nothing; a warning under ``strict``): a
replay counts them as failed turns and goes on. Any other error is the set-up's: it stops
the replay."""

MAX_TURNS = 10_000
"""The most turns one bench replays (per run): more is ``bench.too_many_turns``."""
MAX_BUDGETS = 64
"""The most distinct budgets one bench compares (each is replayed in full, twice with
``compare``); more is a ValueError (a usage error from the CLI)."""
MAX_WARNINGS = 200
"""The most distinct warnings a replay keeps."""

Progress = Callable[[int, int], None]
"""Called after each compile with (compiles done, compiles in all)."""


def bench(
    source: str | os.PathLike[str],
    *,
    context: Context,
    budgets: Iterable[int] | None = None,
    options: CompileOptions | None = None,
    compare: bool = True,
    auto: bool = False,
    every: int = 1,
    last: int | None = None,
    progress: Progress | None = None,
    compile_with: CompilerFactory | None = None,
    **overrides: Unpack[OptionFields],
) -> BenchReport:
    """Replay the run context's chat turn by turn (turn k = its first k messages, for each
    k after which the model speaks: see :func:`request_turns`) and report, per budget, what
    every compile kept, cut and spent (:class:`BenchReport`).

    ``budgets``: the total budgets to compare (None: the one ``options`` says, or the
    default); ``options``/``overrides`` as for :func:`compiler.compile`. Each budget is
    replayed with ``options.cache_stable`` as given (the primary run) and, with ``compare``,
    once more the other way (off, or on with the default step) to compare prefix stability.
    ``auto``: the primary run's cache-stable step is chosen for the provider's prompt-cache
    rule (:func:`compiler.replay.cutplan.auto_step`: the smallest that meets the caching
    goals, else the cheapest), from a first replay without cache-stable cuts; with
    ``compare``, the default step is replayed beside it. Every run is billed (:class:`BillStats`).
    ``every``/``last``: replay every ``every``-th turn counted back from the last, then only
    the last ``last`` turns. A turn that fails with one of :data:`TURN_ERRORS` is counted
    (``failed``); any other error stops the replay (``details["turn"]`` says where).
    ``compile_with`` makes each run's per-turn compile (default :func:`sessions`:
    a :class:`compiler.Session` per run). A run context without a ``now`` replays at
    one fixed clock (the start).
    """
    opts = (options or CompileOptions()).with_fields(**overrides)
    asked = _budgets(budgets, opts.budget)
    if every < 1 or (last is not None and last < 1):
        raise ValueError("every and last must be at least 1")
    with collect_warnings() as found:
        ctx = load_context(context)
    make = compile_with or sessions(source)
    messages = ctx.messages
    turns = _select(ctx, every, last)
    if ctx.now is None:  # {{time}} and friends: one clock (the compile's default) every turn
        ctx = ctx.model_copy(update={"now": datetime.now().astimezone()})
    report = BenchReport(
        source=str(source),
        context=ctx.file,
        provider=opts.provider,
        messages=len(messages),
        every=every,
        turns=turns,
        cache_stable=opts.step or CACHE_STABLE_STEP,
        auto=auto,
        warnings=list(found),
    )
    runs = _auto_runs(asked, compare) if auto else _runs(asked, opts.step, compare)
    _replay(report, runs, ctx, opts, make, progress)
    return report


def _select(ctx: RunContext, every: int, last: int | None) -> list[int]:
    """The turns to replay (see :func:`request_turns` and :func:`thin`): at least one, at
    most :data:`MAX_TURNS`."""
    messages = ctx.messages
    turns = thin(request_turns(messages), every, last)
    if not turns:
        raise ContextError(
            code="bench.no_turns",
            message=f"the chat has no turn to replay ({len(messages)} messages; a turn ends "
            "with a message the model answers: user, system or the last tool result)",
            file=ctx.file,
            path="chat",
        )
    if len(turns) > MAX_TURNS:
        fits = every * -(-len(turns) // MAX_TURNS)
        raise ContextError(
            code="bench.too_many_turns",
            message=f"the chat has {len(turns):,} turns to replay; at most {MAX_TURNS:,} are "
            "replayed in one bench",
            hint=f"replay fewer: --every {fits} or --last {MAX_TURNS} (every= or last= in Python)",
            file=ctx.file,
            path="chat",
        )
    return turns


def _replay(
    report: BenchReport,
    runs: list[RunReport],
    ctx: RunContext,
    opts: CompileOptions,
    make: CompilerFactory,
    progress: Progress | None,
) -> None:
    """Every run, turn by turn, into ``report.runs``.

    One untimed compile comes first, so that loading the tokenizer is not counted as the
    first turn's compile time. Each run is then compiled as a runtime compiles its turns,
    with token counts and summaries of its own (a :class:`compiler.Session`'s), so compile
    times compare across runs: a run never reads what an earlier one counted. A caller's
    token counter or summary cache in the options is theirs, shared; with a caller's
    summarizer the runs share one summary cache, so it is asked once per content.
    """
    messages, turns = ctx.messages, report.turns
    first = ctx.model_copy(update={"chat": messages[: turns[0]]})
    dialect = get_dialect(opts.provider)
    warm = Biller(dialect, NO_CACHE, False)
    _turn(make(_for_run(opts, runs[0])), first, RunAccumulator(RunReport()), None, report, warm)
    rule = rule_for(dialect, report.model)
    if opts.summary_cache is None and opts.summarizer is not None:
        opts = opts.with_fields(summary_cache=SummaryCache())
    total, done = len(runs) * len(turns), 0
    for run in runs:
        if run.auto:
            off = next(r for r in report.runs if r.budget == run.budget and not r.cache_stable)
            run.cache_stable = choose_step(off, messages, dialect, rule, report.encoding)
        compile_turn = make(_for_run(opts, run))
        acc = RunAccumulator(run)
        biller = Biller(dialect, rule, marked=run.cache_stable > 0)
        previous: bytes | None = None
        for k in turns:
            turn = ctx.model_copy(update={"chat": messages[:k]})
            previous = _turn(compile_turn, turn, acc, previous, report, biller)
            done += 1
            if progress is not None:
                progress(done, total)
        report.runs.append(acc.report())
    finish(report, messages, dialect, rule)


def _for_run(opts: CompileOptions, run: RunReport) -> CompileOptions:
    return opts.with_fields(budget=run.budget, cache_stable=run.cache_stable)


def _turn(
    compile_turn: TurnCompiler,
    ctx: RunContext,
    acc: RunAccumulator,
    previous: bytes | None,
    report: BenchReport,
    biller: Biller,
) -> bytes | None:
    """Compile one turn into ``acc``, billed by ``biller``; the request's bytes (None when
    the turn failed)."""
    k = len(ctx.messages)
    start = time.perf_counter()
    try:
        result = compile_turn(ctx)
    except TURN_ERRORS as exc:
        acc.failed(k, exc.code, exc.message, (time.perf_counter() - start) * 1000)
        biller.failed()
        _describe(report, exc.details.get("ledger"))
        return None
    except APCError as exc:
        exc.details["turn"] = k
        raise
    ms = (time.perf_counter() - start) * 1000
    view, body = biller.body(result.request)
    acc.add(k, result.ledger, ms, prefix_shares(previous, body))
    rec = acc.run.per_turn[-1]
    rec.cut, rec.summary_tokens = history_cut(result.ledger)
    record_bill(rec, biller.turn(view, body, result.ledger.total_tokens))
    _describe(report, result.ledger)
    _warn(report.warnings, result.warnings)
    return body


def _describe(report: BenchReport, ledger: BudgetLedger | dict[str, object] | None) -> None:
    """The model and encoding of the report, from the first ledger seen."""
    if report.model is not None or ledger is None:
        return
    if isinstance(ledger, dict):
        ledger = BudgetLedger.model_validate(ledger)
    report.model, report.encoding = ledger.model, ledger.encoding


def _warn(seen: list[Diagnostic], new: list[Diagnostic]) -> None:
    """Add the warnings not seen yet (the same warning every turn is said once; at most
    :data:`MAX_WARNINGS` in all)."""
    for w in new:
        if len(seen) < MAX_WARNINGS and w not in seen:
            seen.append(w)


def _budgets(budgets: Iterable[int] | None, default: int | None) -> list[int | None]:
    """The budgets to replay with, in order, each once (None: the options' own)."""
    if budgets is None:
        return [default]
    out: dict[int | None, None] = {}  # ordered, each once (a set's look-up, not a scan)
    for b in budgets:
        if not isinstance(b, int) or isinstance(b, bool) or b < 1:
            raise ValueError(f"budgets must be integers of at least 1, not {b!r}"[:200])
        out[b] = None
        if len(out) > MAX_BUDGETS:  # read no further: budgets may be endless
            raise ValueError(f"at most {MAX_BUDGETS} budgets are compared in one bench")
    if not out:
        raise ValueError("budgets is empty: give at least one, or None for the default")
    return list(out)


def _auto_runs(budgets: Sequence[int | None], compare: bool) -> list[RunReport]:
    """Per budget the run without cache-stable cuts (the auto step is chosen from it), with
    ``compare`` the default step, then the auto run (the primary; its step set when its
    turn comes)."""
    runs = []
    for b in budgets:
        runs.append(RunReport(budget=b, cache_stable=0, primary=False))
        if compare:
            runs.append(RunReport(budget=b, cache_stable=CACHE_STABLE_STEP, primary=False))
        runs.append(RunReport(budget=b, cache_stable=0, primary=True, auto=True))
    return runs


def _runs(budgets: Sequence[int | None], step: int, compare: bool) -> list[RunReport]:
    """Per budget the primary run (cache-stable as the options say) and, with ``compare``,
    the run the other way."""
    other = 0 if step else CACHE_STABLE_STEP
    runs = []
    for b in budgets:
        runs.append(RunReport(budget=b, cache_stable=step, primary=True))
        if compare:
            runs.append(RunReport(budget=b, cache_stable=other, primary=False))
    return runs
