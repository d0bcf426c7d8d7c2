"""The regex script runner's bounds, on the runner itself (issue 12, item 18)."""

from __future__ import annotations

import time

import pytest

from compiler.context import regex_run
from compiler.context.regex_run import ScriptRunner
from compiler.context.regex_scripts import read_scripts
from compiler.context.run import ChatMessageIn
from compiler.errors import Diagnostic


def runner(scripts: list[dict[str, object]], warnings: list[Diagnostic]) -> ScriptRunner:
    read, bad = read_scripts(
        scripts, file="card.json", path="extensions.regex_scripts", migrate=False
    )
    assert bad == []
    return ScriptRunner(read, lambda text: (text, 0), warnings)


def test_choosing_scripts_counts_towards_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scripts outside every message's depth range still cost time to rule out: a huge chat
    cannot make a compile spend more than the budget on them."""
    monkeypatch.setattr(regex_run, "SCRIPTS_BUDGET", 0.2)
    never = {"findRegex": "/x/", "replaceString": "", "placement": [1], "minDepth": 10**9}
    warnings: list[Diagnostic] = []
    scripts = runner([never] * 1000, warnings)
    chat = [ChatMessageIn(role="user", content="x")] * 50_000
    start = time.perf_counter()
    scripts.chat(chat)
    assert time.perf_counter() - start < 5
    assert [w.code for w in warnings] == ["regex.timeout"]


def test_each_message_is_done_once_per_compile() -> None:
    calls: list[str] = []
    read, _ = read_scripts(
        [{"findRegex": "/a/g", "replaceString": "{{b}}", "placement": [1, 2]}],
        file=None,
        path="regexScripts",
        migrate=True,
    )
    run = ScriptRunner(read, lambda text: (calls.append(text) or text.upper(), 0), [])
    chat = [ChatMessageIn(role="user", content="aa"), ChatMessageIn(role="assistant", content="a")]
    first, second = run.chat(chat), run.chat(chat)
    assert [m.content for m in first] == [m.content for m in second] == ["{{B}}{{B}}", "{{B}}"]
    assert len(calls) == 3  # one fill per match, not per call
    assert chat[0].content == "aa"  # the run's own messages are never changed


def test_scripts_that_never_run_on_prompts_are_left_out() -> None:
    read, _ = read_scripts(
        [
            {"findRegex": "/a/", "replaceString": "", "placement": [1], "markdownOnly": True},
            {"findRegex": "/a/", "replaceString": "", "placement": [1], "disabled": 1},
            {"findRegex": "", "replaceString": "", "placement": [1]},
            {"findRegex": "/a/", "replaceString": "", "placement": [3]},
            {"findRegex": "/a/", "replaceString": "B", "placement": [1], "markdownOnly": True,
             "promptOnly": True},
        ],
        file=None,
        path="regexScripts",
        migrate=False,
    )  # fmt: skip
    assert [s.runs_on_prompts for s in read] == [False, False, False, False, True]
