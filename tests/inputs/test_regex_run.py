"""The regex script runner's bounds, on the runner itself (issue 12, item 18)."""

from __future__ import annotations

import time

import pytest

from compiler.errors import Diagnostic
from compiler.inputs.run import ChatMessageIn
from compiler.st import regex_run
from compiler.st.regex_run import ScriptRunner
from compiler.st.regex_scripts import read_scripts


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
    scripts.chat(chat)  # the warning says the budget stopped the work
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


def test_a_replacement_never_builds_more_than_the_growth_limit() -> None:
    """``$2`` (past the groups: the whole text) written 2,000 times would make one match's
    replacement 2,000 times the text: it is refused before it is built, not after."""
    import tracemalloc

    warnings: list[Diagnostic] = []
    scripts = runner(
        [{"findRegex": "/^/", "replaceString": "$2" * 2000, "placement": [1]}], warnings
    )
    text = "x" * 100_000
    tracemalloc.start()
    try:
        out = scripts.apply(text, 1, depth=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == text
    assert [w.code for w in warnings] == ["regex.output_too_large"]
    assert peak < regex_run.MAX_GROWTH * 2  # not the 200 MB the replacement would be


def test_trim_strings_count_towards_the_deadline() -> None:
    """Thousands of trim strings, each removed from the whole text for one ``$2``: one
    replacement cannot run past the script's time."""
    warnings: list[Diagnostic] = []
    script = {"findRegex": "/^/", "replaceString": "$2", "trimStrings": ["q"] * 5000}
    scripts = runner([script | {"placement": [1]}], warnings)
    scripts.apply("x" * 1_000_000, 1, depth=0)  # the warning says the deadline stopped it
    assert [w.code for w in warnings] == ["regex.timeout"]


@pytest.mark.parametrize(
    ("find", "text", "expected"),
    [
        ("/x*?|a/g", "a", "<>a<>"),  # JavaScript: "a".replace(/x*?|a/g, "<$&>")
        ("/a*?/g", "aa", "<>a<>a<>"),
        ("/|b/g", "ab", "<>a<>b<>"),
        ("/x*/g", "abxd", "<>a<>b<x><>d<>"),
    ],
)
def test_an_empty_match_moves_the_search_on_as_javascript_does(
    find: str, text: str, expected: str
) -> None:
    """After an empty match JavaScript searches on from the next character; Python's
    ``sub`` would search the same place again for a non-empty match."""
    scripts = runner([{"findRegex": find, "replaceString": "<$0>", "placement": [1]}], [])
    assert scripts.apply(text, 1, depth=0) == expected


def test_a_hex_depth_past_the_largest_number_is_infinity() -> None:
    """``Number("0xfff...")`` past the largest double is Infinity in JavaScript (no limit),
    not an OverflowError."""
    read, bad = read_scripts(
        [{"findRegex": "/a/", "replaceString": "", "placement": [1], "maxDepth": "0x" + "f" * 300}],
        file=None,
        path="regexScripts",
        migrate=False,
    )
    assert bad == []
    assert read[0].max_depth == float("inf")


def test_a_pattern_that_translates_too_long_is_not_compiled() -> None:
    """``\\b`` is 70 characters once translated: 16,000 of them (32 KB of JavaScript)
    would take seconds to compile, outside every timeout."""
    warnings: list[Diagnostic] = []
    scripts = runner(
        [{"findRegex": "/" + "\\b" * 16_000 + "/", "replaceString": "", "placement": [1]}], warnings
    )
    assert scripts.apply("a b", 1, depth=0) == "a b"  # not compiled: the warning says so
    assert [w.code for w in warnings] == ["regex.too_complex"]


def test_choosing_scripts_for_world_info_counts_towards_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many entries at distinct depths, each ruled out by every script's depth range: the
    ruling out is bounded by the budget, not entries times scripts."""
    monkeypatch.setattr(regex_run, "SCRIPTS_BUDGET", 0.2)
    never = {"findRegex": "/x/", "replaceString": "", "placement": [5], "minDepth": 10**9}
    warnings: list[Diagnostic] = []
    scripts = runner([never] * 1000, warnings)
    entries = [{"content": "x", "position": 4, "depth": i} for i in range(50_000)]
    assert scripts.world(entries) == entries  # the warning says the budget stopped the work
    assert [w.code for w in warnings] == ["regex.timeout"]


def test_a_long_depth_text_is_read_in_proportion() -> None:
    """``minDepth`` text of 20,000 digits and a letter is NaN (no limit), found at once: the
    number pattern does not try every split of the digits."""
    start = time.perf_counter()
    read, _ = read_scripts(
        [
            {
                "findRegex": "/a/",
                "replaceString": "",
                "placement": [1],
                "minDepth": "1" * 20_000 + "x",
            }
        ],
        file=None,
        path="regexScripts",
        migrate=False,
    )
    assert time.perf_counter() - start < 60  # a hang guard: backtracking would never end
    assert read[0].min_depth is None
