"""``apc bench`` / ``compiler.bench``: a chat replayed turn by turn, its numbers taken from
each turn's ledger, budgets side by side, prefix stability, the chart's optional extra."""

from __future__ import annotations

import functools
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.cli.commands.bench import ProgressBar
from compiler.inputs.run import ChatMessageIn
from compiler.replay.turns import prefix_shares, request_turns, thin

TEMPLATE = "You are a careful narrator.\n<<agent.chat.history strategy=truncate>>\nGo on.\n"
PRESET = {
    "prompts": [
        {"identifier": "main", "content": "Write {{char}}'s next reply."},
        {"identifier": "chatHistory", "marker": True},
    ],
    "openai_max_context": 100000,
}


def _chat(n: int, first: str = "user") -> list[dict[str, Any]]:
    other = "assistant" if first == "user" else "user"
    return [
        {"role": first if i % 2 == 0 else other, "content": f"line {i} of the story " * 4}
        for i in range(n)
    ]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "t.txt").write_text(TEMPLATE)
    (tmp_path / "p.json").write_text(json.dumps(PRESET))
    (tmp_path / "run.json").write_text(json.dumps({"chat": _chat(9)}))
    greeting = {"chat": _chat(8, first="assistant"), "character": {"name": "Ayla"}}
    (tmp_path / "st.json").write_text(json.dumps(greeting))
    return {p.stem: p for p in tmp_path.iterdir()}


def _compile_alone(files: dict[str, Path], k: int, **opts: Any) -> compiler.CompileResult:
    ctx = {"chat": _chat(9)[:k]}
    return compiler.compile(files["t"], context=ctx, **opts)


def test_turns_are_the_prefixes_the_model_answers() -> None:
    def msgs(*roles: str) -> list[ChatMessageIn]:
        return [ChatMessageIn(role=r, content="x") for r in roles]  # type: ignore[arg-type]

    assert request_turns(msgs("user", "assistant", "user", "assistant")) == [1, 3]
    assert request_turns(msgs("assistant", "user", "system")) == [2, 3]
    # inside a run of tool results the call is not answered yet: no turn there
    chat = msgs("user", "assistant", "tool", "tool", "assistant", "user")
    assert request_turns(chat) == [1, 4, 6]
    assert request_turns(msgs("assistant")) == []
    assert thin([1, 3, 5, 7, 9], every=2) == [1, 5, 9]  # counted back from the last
    assert thin([1, 3, 5, 7, 9], every=3, last=1) == [9]


def test_template_replay_reports_the_ledgers_numbers(files: dict[str, Path]) -> None:
    report = compiler.bench(files["t"], context=files["run"], budgets=[90], compare=False)
    assert report.turns == [1, 3, 5, 7, 9] and report.messages == 9
    assert (report.model, report.encoding) == ("gpt-4o", "o200k_base")
    (run,) = report.runs
    assert run.primary and run.budget == 90 and run.cache_stable == 0 and run.turns == 5
    alone = [_compile_alone(files, k, budget=90).ledger for k in report.turns]
    assert [t.total_tokens for t in run.per_turn] == [ledger.total_tokens for ledger in alone]
    assert [t.categories.get("history", 0) for t in run.per_turn] == [
        ledger.categories["history"].used for ledger in alone
    ]
    assert [t.cuts for t in run.per_turn] == [
        {
            a: n
            for a in ("truncated", "dropped")
            if (n := [e.action for e in ledger.entries].count(a))
        }
        for ledger in alone
    ]
    totals = sorted(ledger.total_tokens for ledger in alone)
    assert run.total_tokens.median == totals[2] and run.total_tokens.max == totals[-1]
    assert run.budget_use.max is not None and run.budget_use.max <= 1.0
    history = next(c for c in run.components if c.kind == "ChatHistory")
    assert history.turns == 5 and history.category == "history"
    assert history.messages_offered is not None and history.messages_offered.max == 9
    cut = sum(1 for ledger in alone if ledger.entries[1].action == "truncated")
    assert 0 < cut < 5 and history.actions.get("truncated", 0) == cut
    assert history.offered_uncounted == cut  # a cut history is not counted whole
    assert next(c for c in run.categories if c.name == "history").cuts == {"truncated": cut}
    # the per-turn categories add up to the request
    assert all(sum(t.categories.values()) == t.total_tokens for t in run.per_turn)
    assert run.compile_ms.count == 5 and run.prefix_stability.count == 4


def test_preset_replay_skips_the_greeting_and_compares_budgets(files: dict[str, Path]) -> None:
    report = compiler.bench(files["p"], context=files["st"], budgets=[80, 400, 80])
    assert report.turns == [2, 4, 6, 8]  # the greeting alone is not a request
    assert [(r.budget, r.cache_stable, r.primary) for r in report.runs] == [
        (80, 0, True),
        (80, 32, False),
        (400, 0, True),
        (400, 32, False),
    ]
    small, big = report.primary
    for a, b in zip(small.per_turn, big.per_turn, strict=True):
        assert a.total_tokens is not None and b.total_tokens is not None
        assert a.total_tokens <= 80 and a.total_tokens <= b.total_tokens <= 400
    assert next(c for c in big.components if c.kind == "ChatHistory").actions == {"kept": 4}
    cuts = next(c for c in small.components if c.kind == "ChatHistory").actions
    assert cuts.get("truncated", 0) >= 1
    assert {c.name for c in small.categories} >= {"history", "PresetGuide", "overhead"}


def test_prefix_stability() -> None:
    assert prefix_shares(None, b"abc") is None
    assert prefix_shares(b'{"m":[1]}', b'{"m":[1]}') == (1.0, 1.0)
    kept, cached = prefix_shares(b'{"m":[1,2]}', b'{"m":[1,2,3]}') or (0, 0)
    assert kept == 9 / 11 and cached == 9 / 13
    assert prefix_shares(b'{"m":[1]}', b'{"m":[2]}') == (6 / 9, 6 / 9)


def test_identical_requests_are_fully_stable_and_a_moving_head_is_not(
    files: dict[str, Path], tmp_path: Path
) -> None:
    static = tmp_path / "static.txt"
    static.write_text("Always the same request.")
    report = compiler.bench(static, context=files["run"], compare=False)
    assert report.runs[0].prefix_stability.min == 1.0 == report.runs[0].cached_share.min
    # a step of 8 over a longer chat: the default 32 would cut into the newest turn of a
    # short chat, and such a turn falls back to the unstepped cut
    long_chat = {"chat": _chat(41)}
    moving = compiler.bench(files["t"], context=long_chat, budgets=[300], cache_stable=8)
    on, off = moving.runs
    assert off.prefix_stability.min is not None and off.prefix_stability.min < 0.9
    assert on.cache_stable == 8 and on.primary
    assert on.prefix_stability.mean is not None and off.prefix_stability.mean is not None
    assert on.prefix_stability.mean > off.prefix_stability.mean


def test_budget_failures_are_counted_and_the_replay_goes_on(files: dict[str, Path]) -> None:
    report = compiler.bench(files["t"], context=files["run"], budgets=[5, 200], compare=False)
    tiny, fine = report.runs
    assert tiny.failed == {"context.budget_exceeded": 5} and tiny.total_tokens.count == 0
    assert [t.error for t in tiny.per_turn] == ["context.budget_exceeded"] * 5
    assert tiny.first_failure is not None and tiny.first_failure.startswith("turn of 1 messages")
    assert fine.failed == {} and fine.turns == 5


def test_a_request_the_provider_would_reject_is_a_failed_turn(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("Rules.\n<<agent.chat.history strategy=truncate>>")
    chat = [
        {"role": "user", "content": "hi there"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "word " * 400},  # cannot fit: the history is cut to nothing
    ]
    report = compiler.bench(
        tmp_path / "t.txt", context={"chat": chat}, budgets=[150], provider="anthropic"
    )
    run = report.runs[0]  # the newest turn is required: it does not fit, a coded error
    assert [t.error for t in run.per_turn] == [None, "context.budget_exceeded"]
    assert run.failed == {"context.budget_exceeded": 1} and run.total_tokens.count == 1
    # the profile lets the newest turn go: a request with no message, which Anthropic refuses
    relaxed = compiler.ProfileLayers(run={"context": {"required": []}})
    report = compiler.bench(
        tmp_path / "t.txt",
        context={"chat": chat},
        budgets=[150],
        provider="anthropic",
        profile=relaxed,
    )
    run = report.runs[0]
    assert [t.error for t in run.per_turn] == [None, "lower.empty_request"]
    assert run.failed == {"lower.empty_request": 1} and run.total_tokens.count == 1
    (tmp_path / "bad.txt").write_text("<<agent.nope>>")  # the set-up's error stops the replay
    with pytest.raises(compiler.TemplateError) as info:
        compiler.bench(tmp_path / "bad.txt", context={"chat": chat})
    assert "turn" not in info.value.details  # the session refused the source before turn 1


def test_the_per_turn_compile_is_one_swappable_call(files: dict[str, Path]) -> None:
    made: list[compiler.CompileOptions] = []
    calls: list[int] = []

    def factory(options: compiler.CompileOptions) -> Any:
        made.append(options)

        def turn(ctx: compiler.RunContext) -> compiler.CompileResult:
            calls.append(len(ctx.messages))
            return compiler.compile(files["t"], context=ctx, options=options)

        return turn

    seen: list[tuple[int, int]] = []
    replay = functools.partial(
        compiler.bench,
        files["t"],
        context=files["run"],
        budgets=[90, 300],
        compile_with=factory,
        last=2,
    )
    replay(progress=lambda done, total: seen.append((done, total)))
    runs = [(90, 0), (90, 0), (90, 32), (300, 0), (300, 32)]  # a warm-up, then the runs
    assert [(o.budget, o.step) for o in made] == runs
    # each run counts and summarizes for itself (as a runtime's session does), so compile
    # times compare across runs
    assert all(o.token_counter is None and o.summary_cache is None for o in made)
    assert calls == [7, 7, 9, 7, 9, 7, 9, 7, 9]  # one untimed warm-up, then 2 turns a run
    assert seen[-1] == (8, 8) and len(seen) == 8
    # a caller's summarizer is asked once per content: the runs share one summary cache
    made.clear()
    replay(summarizer=lambda request: "A summary.")
    caches = {id(o.summary_cache) for o in made[1:]}
    assert len(caches) == 1 and made[1].summary_cache is not None


def test_bad_inputs(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for chat in ([], _chat(1, first="assistant")):
        (tmp_path / "empty.json").write_text(json.dumps({"chat": chat}))
        with pytest.raises(compiler.ContextError) as info:
            compiler.bench(files["t"], context=tmp_path / "empty.json")
        assert info.value.code == "bench.no_turns"
    with pytest.raises(ValueError, match="at least 1"):
        compiler.bench(files["t"], context=files["run"], budgets=[0])
    monkeypatch.setattr("compiler.replay.runner.MAX_TURNS", 4)
    with pytest.raises(compiler.ContextError) as many:
        compiler.bench(files["t"], context=files["run"])  # 5 turns
    assert many.value.code == "bench.too_many_turns" and "--every 2" in (many.value.hint or "")
    assert compiler.bench(files["t"], context=files["run"], every=2).turns == [1, 5, 9]
    with pytest.raises(ValueError, match="every"):
        compiler.bench(files["t"], context=files["run"], every=0)


def test_the_budgets_compared_are_bounded(files: dict[str, Path]) -> None:
    """Each budget is a full replay: thousands of them, or an endless iterator, are refused
    before any compile (not after hours of them, or never)."""
    import itertools

    for budgets in (range(1, 2_000), itertools.count(1)):
        with pytest.raises(ValueError, match="at most 64 budgets"):
            compiler.bench(files["t"], context=files["run"], budgets=budgets, last=1)
    report = compiler.bench(
        files["t"], context=files["run"], budgets=[300] * 5_000 + [90], last=1, compare=False
    )
    assert [run.budget for run in report.runs] == [300, 90]
    args = ["bench", str(files["t"]), "--context", str(files["run"]), "--budget"]
    assert main([*args, *(str(b) for b in range(100, 200))]) == 2


def test_cli_json_schema(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", str(files["t"]), "--context", str(files["run"]), "--budget", "90", "300"]
    assert main([*args, "--format", "json", "--every", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {
        "source", "context", "provider", "model", "encoding", "messages", "every",
        "turns", "cacheStable", "auto", "cacheRule", "runs", "warnings",
    }  # fmt: skip
    assert out["turns"] == [1, 5, 9] and out["every"] == 2 and len(out["runs"]) == 4
    run = out["runs"][0]
    assert set(run) == {
        "budget", "effectiveBudget", "budgetSource", "cacheStable", "primary", "auto", "turns",
        "failed", "firstFailure", "totalTokens", "budgetUse", "compileMs", "prefixStability",
        "cachedShare", "bill", "categories", "components", "perTurn",
    }  # fmt: skip
    assert run["budget"] == 90 and run["primary"] and out["runs"][1]["cacheStable"] == 32
    assert set(run["totalTokens"]) == {"count", "min", "median", "mean", "p95", "max"}
    assert set(run["perTurn"][0]) == {
        "messages", "totalTokens", "budget", "compileMs", "prefixStability", "cachedShare",
        "categories", "cuts", "error", "cut", "summaryTokens", "cachedTokens", "writtenTokens",
        "uncachedTokens", "billed",
    }  # fmt: skip
    component = run["components"][0]
    assert {"id", "kind", "category", "turns", "offered", "kept", "actions"} <= set(component)
    assert {"name", "budget", "kept", "offered", "cuts"} <= set(run["categories"][0])


def test_cli_text_shows_budgets_side_by_side(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", str(files["p"]), "--context", str(files["st"]), "--budget", "80", "400"]
    assert main([*args, "--cache-stable", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # no bar when stderr is not a terminal
    text = captured.out
    assert "4 turns of a 8-message chat" in text
    head = next(line for line in text.splitlines() if line.startswith("budget "))
    assert head.split()[1:] == ["80", "80", "400", "400"]
    row = next(line for line in text.splitlines() if line.startswith("cache-stable"))
    assert row.split()[1:] == ["2", "off", "(cmp)", "2", "off", "(cmp)"]
    assert "budget 80, cache-stable 2: per component" in text


def test_cli_bad_inputs(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = str(files["t"])
    assert main(["bench", source]) == 2  # no --context
    assert main(["bench", source, "--context", str(files["run"]), "--budget", "0"]) == 2
    assert main(["bench", source, "--context", str(files["run"]), "--every", "0"]) == 2
    capsys.readouterr()
    (tmp_path / "none.json").write_text(json.dumps({"chat": []}))
    assert main(["bench", source, "--context", str(tmp_path / "none.json")]) == 1
    assert "bench.no_turns" in capsys.readouterr().err


def test_plot_without_matplotlib_is_a_clear_error_before_replaying(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    chart = tmp_path / "chart.png"
    args = ["bench", str(files["t"]), "--context", str(files["run"]), "--plot", str(chart)]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "error[bench.plot_unavailable]" in captured.err and "[plot]" in captured.err
    assert captured.out == "" and not chart.exists()


def test_plot_writes_a_png(files: dict[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    chart = tmp_path / "chart.png"
    args = ["bench", str(files["t"]), "--context", str(files["run"]), "--budget", "60", "300"]
    assert main([*args, "--plot", str(chart), "--no-compare"]) == 0
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_progress_bar_draws_only_on_a_terminal() -> None:
    plain = io.StringIO()
    bar = ProgressBar(plain)
    bar(1, 2)
    bar(2, 2)
    bar.close()
    assert plain.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    bar = ProgressBar(term, width=4)
    bar(2, 2)
    assert "[####] 2/2 compiles" in term.getvalue()
    bar.close()
    assert term.getvalue().endswith("\r\x1b[K")


def test_real_preset_card_and_lorebook(corpus: Path, tmp_path: Path) -> None:
    chat = [{"role": "assistant", "content": "Welcome to the glade, traveller."}]
    for topic in ("Eldoria", "the Shadowfang", "the glade"):
        chat.append({"role": "user", "content": f"Tell me about {topic}. " * 6})
        chat.append({"role": "assistant", "content": f"{topic} is old and wide. " * 50})
    run = {
        "chat": chat,
        "character": str(corpus / "cards" / "Seraphina-v2v3.png"),
        "worldInfo": str(corpus / "worlds" / "Eldoria.json"),
    }
    (tmp_path / "run.json").write_text(json.dumps(run))
    preset = corpus / "presets" / "st-default-2024.json"
    report = compiler.bench(preset, context=tmp_path / "run.json", budgets=[1900], compare=False)
    (result,) = report.runs
    assert report.turns == [2, 4, 6] and result.failed == {}
    kinds = {c.kind for c in result.components}
    assert {"WorldInfo", "CharacterCard", "ChatHistory"} <= kinds
    for turn in result.per_turn:
        assert turn.total_tokens is not None and turn.total_tokens <= 1900
        assert sum(turn.categories.values()) == turn.total_tokens
    history = next(c for c in result.components if c.kind == "ChatHistory")
    assert history.actions.get("truncated", 0) >= 1  # the last turns no longer fit whole
