"""<<agent.tool_results mode=...>>: summary shortens every long result in the fit stage."""

from __future__ import annotations

import compiler
from compiler.fit.allocator import SUMMARY_MODE_TOKENS
from compiler.tokens import counter_for

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
