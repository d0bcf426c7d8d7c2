"""<<agent.tool_results mode=...>>: summary shortens every long result in the fit stage."""

from __future__ import annotations

import compiler
from compiler._base.tokens import counter_for
from compiler.fit.allocator import SUMMARY_MODE_TOKENS

LONG = " ".join(f"Line {i}: the search found item {i} in chapter {i % 7}." for i in range(120))
CTX = {
    "toolResults": [
        {"callId": "c1", "tool": "chat.search", "arguments": {"query": "x"}, "content": LONG},
        {"callId": "c2", "tool": "workspace.read_file", "content": "short"},
    ]
}


def tool_contents(mode: str) -> list[str]:
    result = compiler.compile_string(f'Go.<<agent.tool_results mode="{mode}">>', context=CTX)
    return [m["content"] for m in result.request["messages"] if m["role"] == "tool"]


def test_summary_mode_summarizes_long_results_only() -> None:
    full = tool_contents("full")
    summary = tool_contents("summary")
    assert full == [LONG, "short"]
    assert summary[1] == "short"
    assert summary[0].startswith("[summary of ")
    assert counter_for("o200k_base").count(summary[0]) <= SUMMARY_MODE_TOKENS


def test_latest_mode_keeps_only_the_last_call() -> None:
    assert tool_contents("latest") == ["short"]


def test_a_result_with_too_little_room_is_left_empty_not_cut_to_a_scrap() -> None:
    """Many results in a small budget: each result's share of what their calls' framing
    leaves may be a token or two. A result cut to less than MIN_KEEP tokens would be a
    scrap (the '[' of a summary's head): it is left empty instead; each call keeps its
    result message, and what is kept of a result is whole or at least MIN_KEEP tokens."""
    from compiler.fit.text import MIN_KEEP

    counter = counter_for("o200k_base")
    results = [
        {"callId": f"c{i}", "tool": "workspace.read_file", "content": f"{i}: {LONG}"}
        for i in range(60)
    ]
    template = '<<agent.tool_results mode="summary" budget=1200>>'
    out = compiler.compile_string(template, context={"toolResults": results})
    messages = out.request["messages"]
    tool = [m["content"] for m in messages if m["role"] == "tool"]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert tool and len(tool) == len(calls)  # every call kept has its result
    assert all(c == "" or counter.count(c) >= MIN_KEEP for c in tool), sorted(set(tool))[:5]
