"""The allocator's strategies, budgets, ledger and cache-stable mode, case by case."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler._base.frame import Component, ComponentKind, ContextFrame, Message
from compiler._base.journal import Journal
from compiler._base.tokens import TokenCounter, counter_for
from compiler.cli import main
from compiler.errors import BudgetError
from compiler.fit import CategoryBudgets, SummaryRequest, fit, truncate_text
from compiler.fit.summarize import SummaryCache
from compiler.providers import get_dialect
from compiler.providers.openai_chat import DIALECT

COUNTER = counter_for("o200k_base")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TEMPLATE = EXAMPLES / "writer" / "template.txt"
RUN = EXAMPLES / "writer" / "run.json"
PROSE = " ".join(f"Sentence {i} tells of the ferry and the river at night." for i in range(400))


def chat(n: int, words: int = 12) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Turn {i}. " + "word " * words}
        for i in range(n)
    ]


def exact(result: compiler.CompileResult) -> int:
    return DIALECT.count_request(result.request, COUNTER)


# -- truncate ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["head", "tail", "head_tail"])
@pytest.mark.parametrize("target", [1, 5, 17, 60, 333])
def test_truncate_is_token_exact(mode: Any, target: int) -> None:
    text = PROSE + " 東京の夜 🙂" * 30
    out = truncate_text(text, target, COUNTER, mode)
    n = COUNTER.count(out)
    assert n <= target
    assert n >= target - 2
    if target >= 17:
        assert "tokens cut ...]" in out
    if mode == "head" and target >= 17:
        assert out.startswith("Sentence 0 tells")
    if mode == "tail" and target >= 17:
        assert out.endswith("🙂")
    assert "\ufffd" not in out  # never half a character


def test_truncate_keeps_text_that_fits() -> None:
    assert truncate_text("short text", 100, COUNTER) == "short text"
    assert truncate_text("short text", 0, COUNTER) == ""


# -- defaults of the seed ------------------------------------------------------------------


def frame_of(*comps: Component) -> ContextFrame:
    return ContextFrame(components=list(comps))


def text(
    cid: str, content: str, kind: ComponentKind = ComponentKind.WORKSPACE_FILE, **kw: Any
) -> Component:
    return Component(id=cid, kind=kind, source=f"src:{cid}", inline_content=content, **kw)


def run(frame: ContextFrame, budget: int | None, **kw: Any) -> tuple[Any, Journal]:
    journal = Journal()
    result = fit(
        frame,
        dialect=DIALECT,
        counter=COUNTER,
        model="gpt-4o",
        budget=budget,
        journal=journal,
        **kw,
    )
    return result, journal


def test_optional_components_drop_lowest_priority_first_with_events() -> None:
    frame = frame_of(
        text("sys", "System.", ComponentKind.PRESET_GUIDE),
        text("a", PROSE[:400], priority=1),
        text("b", PROSE[:400], priority=5),
        text("c", PROSE[:400], priority=1),
    )
    full, _ = run(frame, None)
    result, journal = run(frame, full.total_tokens - 10)
    actions = {e.id: e.action for e in result.ledger.entries}
    # ties: the later in the frame goes first
    assert actions == {"sys": "kept", "a": "kept", "b": "kept", "c": "dropped"}
    result, journal = run(frame, full.total_tokens - 100)
    actions = {e.id: e.action for e in result.ledger.entries}
    assert actions == {"sys": "kept", "a": "dropped", "b": "kept", "c": "dropped"}
    skipped = [e.payload for e in journal.events if e.type == "context_component_skipped"]
    assert [(p["component"], p["reason"]) for p in skipped] == [("a", "budget"), ("c", "budget")]


def test_required_over_budget_fails_fast_with_the_ledger() -> None:
    frame = frame_of(text("sys", "System."), text("f", PROSE, required=True))
    with pytest.raises(BudgetError) as info:
        run(frame, 300)
    assert info.value.code == "context.budget_exceeded"
    ledger = compiler.BudgetLedger.model_validate(info.value.details["ledger"])
    assert ledger.entry("f").tokens_offered == COUNTER.count(PROSE)
    assert ledger.budget == 300
    with pytest.raises(BudgetError):  # its own budget= too
        run(frame_of(text("f", PROSE[:200], required=True, token_budget=5)), None)


def test_budgets_compose_own_category_and_total() -> None:
    frame = frame_of(
        text("sys", "System.", ComponentKind.PRESET_GUIDE),
        text("a", PROSE[:600], strategy="truncate"),
        text("b", PROSE[:600], strategy="truncate", token_budget=40),
        Component(id="h", kind=ComponentKind.CHAT_HISTORY, source="chat", messages=chat(30)),
    )
    budgets = CategoryBudgets(workspace_file=100, history=200)
    result, _ = run(frame, 2000, budgets=budgets)
    a, b, _h = (result.ledger.entry(x) for x in "abh")
    assert 98 <= a.tokens_used <= 100 and a.action == "truncated" and a.budget.category == 100
    assert b.tokens_used == 0 or b.action == "dropped"  # the category is spent
    result, _ = run(frame, 2000, budgets=CategoryBudgets(workspace_file=1000, history=200))
    b = result.ledger.entry("b")
    assert 38 <= b.tokens_used <= 40 and b.budget.own == 40  # its own cap is smaller
    assert result.ledger.entry("h").tokens_used - result.ledger.entry("h").summary_tokens <= 200
    assert result.ledger.categories["workspaceFile"].used <= 1000


def test_a_history_budget_alone_still_notes_what_was_cut() -> None:
    comp = Component(id="h", kind=ComponentKind.CHAT_HISTORY, source="c", messages=chat(60))
    result, journal = run(frame_of(comp), None, budgets=CategoryBudgets(history=300))
    entry = result.ledger.entry("h")
    assert entry.tokens_used - entry.summary_tokens <= 300 and entry.summary_tokens > 0
    out = result.frame.components[0].messages
    # no tool definitions in the frame: the note names no tool (issue 8, item 13)
    assert out is not None and "older messages are not shown" in (out[0]["content"] or "")
    assert "chat.search" not in (out[0]["content"] or "")
    assert result.ledger.categories["summary"].used == entry.summary_tokens
    # a history sent shorter is cut, not skipped (issue 12, item 19)
    assert not [e for e in journal.events if e.type == "context_component_skipped"]
    (event,) = [e for e in journal.events if e.type == "context_component_cut"]
    assert event.payload["reason"] == "budget" and event.payload["messagesDropped"] > 0
    assert event.payload["action"] == "truncated"  # a note: no room for a useful summary


def test_tool_results_summarize_then_truncate() -> None:
    msgs: list[Message] = [
        {
            "role": "assistant",
            "content": None,
            "toolCalls": [{"id": "c1", "name": "x", "arguments": {}}],
        },
        {"role": "tool", "content": PROSE, "toolCallId": "c1"},
    ]
    comp = Component(id="t", kind=ComponentKind.TOOL_RESULTS, source="run", messages=msgs)
    result, _ = run(frame_of(comp), None, budgets=CategoryBudgets(tool_result=300))
    entry = result.ledger.entry("t")
    out = result.frame.components[0].messages
    assert out is not None and out[1]["content"].startswith("[summary of")
    assert entry.action == "summarized" and entry.tokens_used <= 300
    assert entry.summary_tokens > 0
    result, _ = run(frame_of(comp), None, budgets=CategoryBudgets(tool_result=300, summary=0))
    out = result.frame.components[0].messages
    assert out is not None and "tokens cut ...]" in (out[1]["content"] or "")
    assert result.ledger.entry("t").action == "truncated"


def test_history_keeps_newest_whole_units_and_notes_chat_search() -> None:
    result = compiler.compile_string(
        "System.<<agent.chat.history>>", context={"chat": chat(400)}, budget=1500
    )
    messages = result.request["messages"]
    # the request offers no tools, so the note names none (issue 8, item 13)
    assert messages[1]["role"] == "system" and "older messages" in messages[1]["content"]
    assert "chat.search" not in messages[1]["content"]
    with_tools = compiler.compile_string(
        "System.<<agent.tools.available>><<agent.chat.history>>",
        context={"chat": chat(400)},
        budget=2500,
    )
    note = with_tools.request["messages"][1]["content"]
    assert "the chat_search tool can read them" in note
    assert messages[-1]["content"].startswith("Turn 399.")
    assert "- user: Turn 0." in messages[1]["content"]  # the extractive summary
    assert 0.95 * 1500 <= exact(result) <= 1500
    entry = result.ledger.entry("001:chat.history")
    assert entry.tokens_offered is None  # the cut part was never counted
    assert entry.messages_offered == 400 and entry.messages_kept == len(messages) - 2


def test_precomputed_and_callable_summaries() -> None:
    ctx = {"chat": chat(300)}
    pre = compiler.compile_string(
        "S.<<agent.chat.history>>", context=ctx, budget=1500, summaries={"ChatHistory": "PRE"}
    )
    assert pre.request["messages"][1]["content"].endswith("\nPRE")
    calls: list[SummaryRequest] = []

    def llm(request: SummaryRequest) -> str:
        calls.append(request)
        return f"LLM summary of {len(request.messages)} messages"

    # the callable's results live in a cache the caller owns (issue 8, item 16)
    owned = SummaryCache()
    first = compiler.compile_string(
        "S.<<agent.chat.history>>", context=ctx, budget=1500, summarizer=llm, summary_cache=owned
    )
    assert "LLM summary of" in first.request["messages"][1]["content"]
    made = len(calls)
    again = compiler.compile_string(
        "S.<<agent.chat.history>>", context=ctx, budget=1500, summarizer=llm, summary_cache=owned
    )
    assert again.request == first.request
    assert len(calls) == made  # cached by (content hash, target)


def test_a_long_history_is_never_tokenized_whole() -> None:
    counter = TokenCounter("o200k_base")
    msgs = chat(10_000)
    frame = frame_of(
        text("sys", "System.", ComponentKind.PRESET_GUIDE),
        Component(id="h", kind=ComponentKind.CHAT_HISTORY, source="chat", messages=msgs),
    )
    journal = Journal()
    result = fit(
        frame, dialect=DIALECT, counter=counter, model="gpt-4o", budget=16_000, journal=journal
    )
    assert result.total_tokens <= 16_000
    counted = len(counter._cache)
    assert counted < 1_000  # the kept messages, a summary sample, not 10,000


def test_cache_stable_keeps_a_byte_identical_prefix() -> None:
    base = chat(200)
    prefixes = []
    for turn in range(12):
        ctx = {"chat": base + chat(turn + 1)}
        result = compiler.compile_string(
            "S.<<agent.chat.history>>", context=ctx, budget=2000, cache_stable=16
        )
        assert exact(result) <= 2000
        prefixes.append(json.dumps(result.request["messages"][:4]))
    changes = sum(a != b for a, b in itertools.pairwise(prefixes))
    assert changes <= 1  # the cut moved at most once in 12 turns (16-message steps)
    plain = [
        json.dumps(
            compiler.compile_string(
                "S.<<agent.chat.history>>", context={"chat": base + chat(t + 1)}, budget=2000
            ).request["messages"][:4]
        )
        for t in range(4)
    ]
    assert len(set(plain)) > 1  # without it the cut moves every turn


def test_cache_stable_summary_keeps_its_first_lines_when_the_cut_moves() -> None:
    """With cache-stable cuts the note that counts the cut follows the summary, so when the
    cut moves the new request still starts with the old one's system text and first summary
    lines (what a provider's prefix cache can read); without, the note comes first as ever."""
    base = chat(200)
    summaries = []
    for turn in range(0, 40, 2):
        result = compiler.compile_string(
            "S.<<agent.chat.history>>", context={"chat": base + chat(turn + 1)}, budget=2000,
            cache_stable=16,
        )  # fmt: skip
        assert exact(result) <= 2000
        summaries.append(result.request["messages"][1]["content"])
    moved = [(a, b) for a, b in itertools.pairwise(summaries) if a != b]
    assert moved  # the cut moved within 40 messages of 16-message steps
    for before, after in moved:
        assert after.endswith("older messages are not shown here (cut to fit the context budget).]")
        first = before.split("\n")[0]
        assert not first.startswith("[Earlier conversation") and after.startswith(first + "\n")
    plain = compiler.compile_string(
        "S.<<agent.chat.history>>", context={"chat": base}, budget=2000
    ).request["messages"][1]["content"]
    assert plain.startswith("[Earlier conversation: ")


def test_total_budget_is_the_window_minus_the_reserve() -> None:
    model_window = get_dialect("openai").window  # the windows are the dialect's (issue 11)
    assert model_window("gpt-4o-2024-08-06") == 128_000 and model_window("gpt-4") == 8192
    assert model_window("mystery") is None
    ctx = {"chat": chat(10)}
    r = compiler.compile_string(
        "S.<<agent.chat.history>>", context=ctx, model="gpt-4", max_completion_tokens=1000
    )
    assert r.ledger.budget == 7192 and r.ledger.budget_source == "window"
    r = compiler.compile_string("S.<<agent.chat.history>>", context=ctx, model="gpt-4", reserve=192)
    assert r.ledger.budget == 8000
    r = compiler.compile_string("S.<<agent.chat.history>>", context=ctx, model="gpt-4", budget=100)
    assert r.ledger.budget == 100 and r.ledger.budget_source == "--budget"


# -- CLI ------------------------------------------------------------------------------------


def test_explain_prints_a_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", str(TEMPLATE), "--context", str(RUN), "--budget", "1200"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "012:chat.history" in out and "truncated [summarize]" in out
    assert "request: " in out and "budget 1,200" in out
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["budget"] == 1200 and data["totalTokens"] <= 1200
    assert {
        "id",
        "kind",
        "source",
        "tokensOffered",
        "budget",
        "tokensGranted",
        "tokensUsed",
        "strategy",
        "reason",
    } <= set(data["entries"][0])
    assert main([*args[:-1], "100"]) == 1  # over: the partial ledger, then the error
    captured = capsys.readouterr()
    assert "000:system_prompt" in captured.out
    assert "context.budget_exceeded" in captured.err


def test_check_reports_an_infeasible_setup(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(TEMPLATE)]) == 0  # unchanged without budget options
    capsys.readouterr()
    args = ["check", str(TEMPLATE), "--context", str(RUN), "--model", "gpt-4"]
    assert main(args) == 0
    assert main([*args, "--reserve", "7900"]) == 1
    err = capsys.readouterr().err
    assert "error[context.budget_infeasible]" in err
    assert "+ 7900" not in err and "7900 are reserved" in err and "8192-token window" in err
    assert main(["check", str(TEMPLATE), "--context", str(RUN), "--budget", "100"]) == 1
    assert "the budget is 100" in capsys.readouterr().err


def test_compile_cli_cache_stable_and_reserve(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compile", str(TEMPLATE), "--context", str(RUN), "--emit", "ledger"]
    assert main([*args, "--cache-stable", "--reserve", "100", "--model", "gpt-4"]) == 0
    ledger = json.loads(capsys.readouterr().out)
    assert ledger["cacheStable"] == 32 and ledger["budget"] == 8092
    assert main([*args, "--cache-stable", "0"]) == 2
    assert main([*args, "--reserve", "-1"]) == 2


def test_summary_cache_is_bounded() -> None:
    from compiler.fit.summarize import SummaryCache

    cache = SummaryCache(max_entries=3)
    for i in range(5):
        assert cache.get_or_make(("s", str(i), 10), lambda i=i: f"summary {i}") == f"summary {i}"
    assert list(cache._data) == [("s", "2", 10), ("s", "3", 10), ("s", "4", 10)]  # LRU kept
    assert cache.get_or_make(("s", "4", 10), lambda: "recomputed") == "summary 4"
    assert (cache.hits, cache.misses) == (1, 5)


def test_the_profile_budgets_apply_end_to_end(tmp_path: Path) -> None:
    from compiler.profile import resolve_profile

    run_fragment = tmp_path / "run-profile.json"
    run_fragment.write_text(
        json.dumps({"context": {"totalContextBudget": 1200, "historyBudgetTokens": 400}})
    )
    profile = resolve_profile(run=run_fragment)
    result = compiler.compile_string(
        "S.<<agent.chat.history>>", context={"chat": chat(200)}, profile=profile
    )
    assert result.ledger.budget == 1200 and result.ledger.budget_source == "profile"
    history = result.ledger.categories["history"]
    assert history.budget == 400 and history.used <= 400
    assert exact(result) <= 1200
