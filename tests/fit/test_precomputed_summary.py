"""Precomputed summaries: the run context's, else the workspace's summaries/ root."""

from __future__ import annotations

from typing import Any

import compiler

CHAT = [{"role": "user", "content": f"message {i} " + "word " * 30} for i in range(300)]


def history_text(context: dict[str, Any]) -> str:
    result = compiler.compile_string("Go.<<agent.chat.history>>", context=context, budget=1500)
    return "\n".join(str(m["content"]) for m in result.request["messages"])


def test_workspace_summary_is_used_for_the_cut_history() -> None:
    ws = {"files": {"summaries/chat.md": "WS-SUMMARY: the party met the goddess."}}
    text = history_text({"chat": CHAT, "workspace": ws})
    assert "WS-SUMMARY: the party met the goddess." in text
    assert "older messages are not shown" in text  # no tool offered: none named


def test_run_context_summary_wins_over_the_workspace() -> None:
    ws = {"files": {"summaries/chat.md": "WS-SUMMARY"}}
    text = history_text(
        {"chat": CHAT, "workspace": ws, "summaries": {"ChatHistory": "CTX-SUMMARY"}}
    )
    assert "CTX-SUMMARY" in text and "WS-SUMMARY" not in text


def test_hidden_summaries_root_is_not_read() -> None:
    ws = {"files": {"summaries/chat.md": "WS-SUMMARY"}}
    profile = compiler.resolve_profile(run={"context": {"exclude": ["workspace.summaries"]}})
    result = compiler.compile_string(
        "Go.<<agent.chat.history>>",
        context={"chat": CHAT, "workspace": ws},
        budget=1500,
        profile=profile,
    )
    assert "WS-SUMMARY" not in str(result.request)
