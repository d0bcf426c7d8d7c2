"""The bill of a replay (``apc bench``): each provider's prompt-cache arithmetic on
hand-computed cases, the least bill of a cut sequence (a dynamic programme, checked by brute
force and as a lower bound of every step), ``--cache-stable auto``, and the JSON it adds."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.cli import main
from compiler.providers import get_dialect
from compiler.providers.dialect import CacheRule, TurnBill
from compiler.providers.registry import PROVIDERS
from compiler.replay.cutplan import (
    AUTO_BILL_GOAL,
    AUTO_CACHED_GOAL,
    AUTO_CACHED_MARGIN,
    NO_CACHE,
    ReplayModel,
    TurnShape,
    auto_limit,
    auto_step,
    brute_force,
    cached_share,
    least_bill,
    stepped_cuts,
)

CHAT_WORDS = "the ferry crossed the grey river while the lanterns burned low on the bank"


def _rule(provider: str, model: str) -> CacheRule:
    rule = get_dialect(provider).cache_rule(model)
    assert rule is not None
    return rule


# -- the providers' arithmetic ---------------------------------------------------------


def test_openai_caches_the_shared_prefix_in_steps_of_128_from_1024_tokens() -> None:
    rule = _rule("openai", "gpt-4o-2024-08-06")
    # 3,000 shared tokens: 23 steps of 128 (2,944) cached at half the price
    assert rule.bill(5000, 3000) == TurnBill(2944, 0, 2056, 2056 + 2944 * 0.5)
    assert rule.bill(5000, 1023) == TurnBill(0, 0, 5000, 5000)  # below the minimum
    assert rule.bill(5000, 1024) == TurnBill(1024, 0, 3976, 3976 + 512)
    assert rule.bill(900, 900).cached == 0  # a short prompt is never cached
    assert _rule("openai", "gpt-4.1-mini").read == 0.25
    assert _rule("openai-responses", "gpt-5").read == 0.1


def test_anthropic_reads_what_the_previous_request_wrote_and_writes_up_to_its_mark() -> None:
    rule = _rule("anthropic", "claude-sonnet-4-5-20250929")
    assert (rule.read, rule.write, rule.minimum, rule.explicit) == (0.1, 1.25, 1024, True)
    # the previous request wrote 3,000 tokens and this one shares them: read 3,000, write
    # up to its own breakpoint (4,800), the newest 200 tokens in full
    assert rule.bill(5000, 3100, previous_mark=3000, mark=4800) == TurnBill(
        3000, 1800, 200, 200 + 300 + 1800 * 1.25
    )
    # the cut moved: nothing is read, the whole marked prefix is written again
    assert rule.bill(5000, 500, previous_mark=3000, mark=4800) == TurnBill(
        0, 4800, 200, 200 + 4800 * 1.25
    )
    assert rule.bill(5000, 5000) == TurnBill(0, 0, 5000, 5000)  # no breakpoints: no cache
    assert rule.bill(900, 0, 0, mark=800) == TurnBill(0, 0, 900, 900)  # below the minimum
    haiku = _rule("anthropic", "claude-haiku-4-5-20251001")
    assert haiku.minimum == 4096
    assert haiku.bill(5000, 4000, previous_mark=3000, mark=4800).cached == 0


def test_gemini_caches_implicitly_from_2048_tokens_at_a_tenth() -> None:
    rule = _rule("gemini", "gemini-2.5-flash")
    assert rule.bill(5000, 3000) == TurnBill(3000, 0, 2000, 2000 + 300)
    assert rule.bill(5000, 2047).cached == 0
    assert _rule("gemini", "gemini-3-pro-preview").minimum == 4096
    assert get_dialect("gemini").cache_rule("gemini-2.0-flash") is None  # no implicit cache


def test_every_rule_is_dated_and_sourced_and_unknown_models_have_none() -> None:
    for provider in PROVIDERS:
        dialect = get_dialect(provider)
        for rule in dialect.cache_rules.values():
            assert rule.as_of and rule.source.startswith("https://")
            assert 0 < rule.read < 1 <= rule.write and rule.minimum > 0
    assert get_dialect("openai-compatible").cache_rule("llama-3") is None
    assert get_dialect("openai").cache_rule("my-finetune") is None


# -- the least bill ---------------------------------------------------------------------


@st.composite
def replays(draw: st.DrawFn, max_turns: int = 8) -> ReplayModel:
    """A small replay: message prices, and turns whose least cut grows with the chat."""
    n = draw(st.integers(3, 24))
    prices = draw(st.lists(st.integers(1, 400), min_size=n, max_size=n))
    count = draw(st.integers(1, max_turns))
    ends = sorted(draw(st.lists(st.integers(1, n), min_size=count, max_size=count)))
    turns, low = [], 0
    for k in ends:
        low = draw(st.integers(min(low, k - 1), k - 1))
        keep = draw(st.integers(low, k - 1))
        other = draw(st.integers(0, 3000))
        head = draw(st.integers(0, other))
        turns.append(TurnShape(k, low, keep, other, head, prices[k - 1]))
    return ReplayModel(prices, turns)


RULES = [
    _rule("openai", "gpt-4o"),
    _rule("anthropic", "claude-sonnet-4-5"),
    _rule("gemini", "gemini-2.5-flash"),
    CacheRule(minimum=1, read=0.1, write=1.25, explicit=True),
    CacheRule(minimum=1, read=0.5, increment=16),
    NO_CACHE,
]


@settings(max_examples=150, deadline=None)
@given(replays(max_turns=4), st.sampled_from(RULES), st.integers(0, 3))
def test_the_least_bill_is_the_brute_force_minimum(
    model: ReplayModel, rule: CacheRule, window: int
) -> None:
    plan = least_bill(model, rule, window)
    assert plan.billed == pytest.approx(brute_force(model, rule, window))
    assert model.bill(rule, plan.cuts) == pytest.approx(plan.billed)
    assert all(c in model.span(t, window) for t, c in enumerate(plan.cuts))


@settings(max_examples=150, deadline=None)
@given(replays(), st.sampled_from(RULES), st.integers(0, 40), st.data())
def test_the_least_bill_is_at_most_every_strategys(
    model: ReplayModel, rule: CacheRule, window: int, data: st.DataObject
) -> None:
    bound = least_bill(model, rule, window).billed
    for step in range(window + 2):  # a step of window + 1 never cuts more than window
        cuts = stepped_cuts(model, step)
        assert all(c in model.span(t, window) for t, c in enumerate(cuts))
        assert bound <= model.bill(rule, cuts) + 1e-6
    chosen = [data.draw(st.sampled_from(model.span(t, window))) for t in range(len(model.turns))]
    assert bound <= model.bill(rule, chosen) + 1e-6
    best = auto_step(model, rule, window + 1)
    assert bound <= model.bill(rule, stepped_cuts(model, best)) + 1e-6


def test_auto_picks_the_cheapest_step_and_the_smallest_on_a_tie() -> None:
    prices = [100] * 40
    turns = [TurnShape(k, max(0, k - 10), k - 1, 2000, 500, 100) for k in range(12, 40, 2)]
    model = ReplayModel(prices, turns)
    rule = CacheRule(minimum=1, read=0.1)
    best = auto_step(model, rule, 9)
    bills = {s: model.bill(rule, stepped_cuts(model, s)) for s in range(1, 10)}
    assert bills[best] == min(bills.values())
    assert best == min(s for s, b in bills.items() if b == bills[best])
    assert auto_step(model, NO_CACHE, 9) == 9  # no cache: the smallest requests


def _meets_goals(
    model: ReplayModel,
    rule: CacheRule,
    step: int,
    share: float = AUTO_CACHED_GOAL + AUTO_CACHED_MARGIN,
) -> bool:
    """Whether ``step`` meets ``auto``'s goals: the cached ``share`` (the goal with its
    margin unless told), and the bill within the goal of the bound the bench compares it
    with (window: the larger of the step and the quarter limit, less one)."""
    cuts = stepped_cuts(model, step)
    window = max(auto_limit(model), step) - 1
    bound = least_bill(model, rule, window).billed
    return (
        cached_share(model, rule, cuts) >= share
        and model.bill(rule, cuts) <= AUTO_BILL_GOAL * bound + 1e-6
    )


def _long_chat_model(kept: int, turns: int = 100) -> ReplayModel:
    """Two messages a turn, the least cut keeping ``kept`` messages, a small head."""
    prices = [50] * (kept + 2 * turns + 2)
    shapes = [
        TurnShape(k, k - kept, k - 1, 1500, 200, 50) for k in range(kept + 1, kept + 2 * turns, 2)
    ]
    return ReplayModel(prices, shapes)


def test_auto_keeps_the_most_history_that_meets_the_goals() -> None:
    """Where no step up to a quarter of the kept history reaches the cached share, ``auto``
    takes the smallest larger step that reaches it with the bill within the goal."""
    model = _long_chat_model(200)
    rule = CacheRule(minimum=1, read=0.1)
    limit = auto_limit(model)
    assert not any(_meets_goals(model, rule, s) for s in range(1, limit + 1))
    best = auto_step(model, rule)
    assert limit < best <= 100 and _meets_goals(model, rule, best)
    assert not any(_meets_goals(model, rule, s) for s in range(limit + 1, best))
    # every turn of the step keeps the newest turn
    assert all(c <= t.keep for c, t in zip(stepped_cuts(model, best), model.turns, strict=True))


@settings(max_examples=100, deadline=None)
@given(replays(max_turns=8), st.sampled_from(RULES))
def test_auto_meets_the_goals_with_the_smallest_step_or_bills_the_least(
    model: ReplayModel, rule: CacheRule
) -> None:
    best = auto_step(model, rule)
    limit = auto_limit(model)
    if _meets_goals(model, rule, best):  # the goals with the margin: the smallest such step
        assert not any(_meets_goals(model, rule, s) for s in range(1, best))
    elif _meets_goals(model, rule, best, AUTO_CACHED_GOAL):  # no step met them with it
        assert not any(_meets_goals(model, rule, s) for s in range(1, best))
        assert not any(_meets_goals(model, rule, s, AUTO_CACHED_GOAL) for s in range(1, best))
    else:  # no goal met: the cheapest step up to the quarter limit, the smallest on a tie
        assert best == auto_step(model, rule, limit)
    assert auto_step(model, rule) == best  # deterministic


# -- end to end -------------------------------------------------------------------------


def _chat(n: int) -> list[dict[str, str]]:
    words = CHAT_WORDS.split()
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": " ".join(words[(i * 7 + j) % len(words)] for j in range(12 + i % 9)),
        }
        for i in range(n)
    ]


@pytest.fixture
def chat_files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "t.txt").write_text("You narrate a ferry crossing.\n<<agent.chat.history>>\n")
    (tmp_path / "run.json").write_text(json.dumps({"chat": _chat(160)}))
    return {p.stem: p for p in tmp_path.iterdir()}


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_auto_keeps_the_budget_and_the_newest_turn(
    chat_files: dict[str, Path], provider: str
) -> None:
    budget = 1500
    report = compiler.bench(
        chat_files["t"], context=chat_files["run"], budgets=[budget], last=30, auto=True,
        provider=provider,
    )  # fmt: skip
    off, default, auto = report.runs
    assert (off.cache_stable, default.cache_stable) == (0, 32) and auto.auto and auto.primary
    assert auto.cache_stable >= 1 and report.auto
    chat = _chat(160)
    for run in report.runs:
        assert run.failed == {}
        for turn in run.per_turn:
            assert turn.total_tokens is not None and turn.total_tokens <= budget
            newest_user = max(i for i in range(turn.messages) if chat[i]["role"] == "user")
            assert turn.cut is not None and turn.cut <= newest_user
            assert turn.cached_tokens is not None and turn.uncached_tokens is not None
            written = turn.written_tokens or 0
            assert turn.cached_tokens + written + turn.uncached_tokens == turn.total_tokens
    for run in report.runs:
        bill = run.bill
        assert bill.bound is not None and bill.bound_ratio is not None
        assert bill.model_billed is not None and bill.model_billed >= bill.bound - 1e-6
    # the auto step bills the least in the model, and the cache pays off against no steps
    assert auto.bill.model_billed is not None and off.bill.model_billed is not None
    assert auto.bill.model_billed <= off.bill.model_billed
    assert auto.bill.billed < off.bill.billed
    assert report.cache_rule is not None and report.cache_rule["asOf"]


def test_a_provider_without_a_rule_bills_everything(chat_files: dict[str, Path]) -> None:
    report = compiler.bench(
        chat_files["t"], context=chat_files["run"], budgets=[1500], last=5,
        provider="openai-compatible", model="llama-3",
    )  # fmt: skip
    assert report.cache_rule is None
    for run in report.runs:
        assert run.bill.cached == 0 and run.bill.billed == run.bill.request_tokens


def test_cli_auto_text_and_json(
    chat_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", str(chat_files["t"]), "--context", str(chat_files["run"])]
    args += ["--budget", "1500", "--last", "12", "--cache-stable", "auto"]
    assert main(args) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("cache-stable"))
    assert row.split()[1:4] == ["off", "(cmp)", "32"] and row.split()[-2] == "auto"
    assert "prompt cache of openai gpt-4o: automatic prefix, from 1,024 tokens" in text
    assert "billed input (base tokens)" in text and "bill / least bound" in text
    assert main([*args, "--format", "json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert out["auto"] is True
    assert set(out["cacheRule"]) == {
        "caching", "minimumTokens", "incrementTokens", "readMultiplier", "writeMultiplier",
        "ttl", "source", "asOf",
    }  # fmt: skip
    auto = out["runs"][-1]
    assert auto["auto"] is True and auto["primary"] is True
    assert set(auto["bill"]) == {
        "requestTokens", "cached", "written", "uncached", "billed", "cachedShare",
        "modelBilled", "bound", "boundWindow", "boundRatio",
    }  # fmt: skip
    turn = auto["perTurn"][-1]
    assert {"cut", "summaryTokens", "cachedTokens", "writtenTokens", "uncachedTokens"} <= set(turn)
    assert main([*args[:-1], "sometimes"]) == 2  # neither a step nor auto: a usage error


def test_anthropic_breakpoints_that_move_leave_the_cached_prefix(
    chat_files: dict[str, Path],
) -> None:
    """Anthropic's markers move to the newest turn and the marked message becomes blocks:
    its cache sees the same prefix, so a stable turn reads what the last one wrote."""
    report = compiler.bench(
        chat_files["t"], context=chat_files["run"], budgets=[3000], last=8,
        provider="anthropic", cache_stable=8, compare=False,
    )  # fmt: skip
    (run,) = report.runs
    stable = [t for t in run.per_turn[1:] if t.cached_tokens]
    assert stable and all((t.written_tokens or 0) < (t.cached_tokens or 0) for t in stable)
    # the newest user turn is marked: a turn whose cut stayed reads all the previous request
    # sent, and writes only the reply and its own newest turn
    pairs = list(itertools.pairwise(run.per_turn))
    same = [(a, b) for a, b in pairs if a.cut == b.cut]
    assert same and all(abs((b.cached_tokens or 0) - (a.total_tokens or 0)) <= 1 for a, b in same)
    assert all(b.uncached_tokens == 0 for a, b in same)


def test_anthropic_reads_up_to_the_turn_before_when_text_follows_the_history(
    tmp_path: Path,
) -> None:
    """Text placed after the history rides in the newest user turn and moves on with it:
    a turn whose cut stayed still reads the previous request up to the turn before its
    newest (the breakpoint there), only the rest is written again."""
    (tmp_path / "t.txt").write_text(
        "You narrate a ferry crossing.\n<<agent.chat.history>>\nBe brief.\n"
    )
    (tmp_path / "run.json").write_text(json.dumps({"chat": _chat(160)}))
    report = compiler.bench(
        tmp_path / "t.txt", context=tmp_path / "run.json", budgets=[3000], last=8,
        provider="anthropic", cache_stable=8, compare=False,
    )  # fmt: skip
    (run,) = report.runs
    same = [(a, b) for a, b in itertools.pairwise(run.per_turn) if a.cut == b.cut]
    assert same
    for a, b in same:
        assert a.total_tokens is not None and b.cached_tokens is not None
        assert a.total_tokens - 150 < b.cached_tokens < a.total_tokens


def test_real_preset_bill(corpus: Path, tmp_path: Path) -> None:
    chat = [{"role": "assistant", "content": "Welcome to the glade, traveller."}]
    for i in range(40):
        chat.append({"role": "user", "content": f"Tell me more about the path, part {i}. " * 5})
        chat.append({"role": "assistant", "content": f"The path winds on, part {i}. " * 30})
    run = {"chat": chat, "character": str(corpus / "cards" / "Seraphina-v2v3.png")}
    (tmp_path / "run.json").write_text(json.dumps(run))
    preset = corpus / "presets" / "st-default-2024.json"
    report = compiler.bench(
        preset, context=tmp_path / "run.json", budgets=[4000], last=10, auto=True,
        provider="anthropic", model="claude-sonnet-4-5",
    )  # fmt: skip
    off, default, auto = report.runs
    assert default.cache_stable == 32 and default.bill.cached > 0
    assert all(r.failed == {} for r in report.runs)
    assert all(t.total_tokens is not None and t.total_tokens <= 4000 for t in auto.per_turn)
    assert auto.bill.billed < off.bill.billed and auto.bill.cached > 0
