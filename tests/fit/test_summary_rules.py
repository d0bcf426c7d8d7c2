"""Summaries of dropped history in agent mode (issue 12, item 16): never a fragment cut
mid-word, never a ``[... N tokens cut ...]`` marker in a roleplay prompt (a preset compile),
no summary when less than a useful one fits (its room goes to history), a summarizer asked
at most once per compile and never for fewer than MIN_SUMMARY_TOKENS, and only tools that
are in the request named."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import compiler
from compiler._base.tokens import counter_for
from compiler.fit import SummaryRequest, truncate_text
from compiler.fit.summarize import (
    MIN_SUMMARY_TOKENS,
    ExtractiveSummarizer,
    SummaryCache,
    SummaryChain,
    _first_sentence,
    _grid,
)
from compiler.fit.truncate import ELLIPSIS, fit_sentences

COUNTER = counter_for("o200k_base")
MARKER = re.compile(r"\[\.\.\. \d+ tokens cut \.\.\.\]")
WORDS = [
    "lantern",
    "ferry",
    "river",
    "night",
    "Mira",
    "harbour",
    "tide",
    "gull",
    "rope",
    "anchor",
    "keeper",
]
AGENT_SCHEMA = {"enabled": True, "defaultProfile": "p", "profiles": [{"id": "p"}]}


def prose(n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    sentences = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def chat(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Turn {i}. {prose(3, i)}"}
        for i in range(n)
    ]


def whole_words_of(out: str, source: str) -> bool:
    """Every word of ``out`` is a whole word of ``source`` (no word cut short)."""
    known = set(re.findall(r"\w+", source))
    return all(w in known for w in re.findall(r"\w+", out))


# -- the text tools -----------------------------------------------------------------------


def test_fit_sentences_keeps_whole_sentences_then_whole_words() -> None:
    text = prose(40)
    for target in (1, 3, 5, 9, 17, 33, 80, 200):
        out = fit_sentences(text, target, COUNTER)
        assert COUNTER.count(out) <= target
        assert not MARKER.search(out) and whole_words_of(out, text)
        if out and not out.endswith(ELLIPSIS):
            assert out.endswith(".") and text.startswith(out)  # whole sentences
    assert fit_sentences(text, 10_000, COUNTER) == text
    assert fit_sentences("", 50, COUNTER) == "" and fit_sentences(text, 0, COUNTER) == ""
    one = "Supercalifragilisticexpialidocious " * 3
    assert fit_sentences(one, 2, COUNTER) == ""  # not even a word fits: nothing, not a stub
    cjk = "灯塔守护者在夜里点亮了灯。渡船慢慢靠岸。" * 5
    out = fit_sentences(cjk, 12, COUNTER)
    assert out and COUNTER.count(out) <= 12 and cjk.startswith(out.rstrip(ELLIPSIS))


@pytest.mark.parametrize("mode", ["head", "tail", "head_tail"])
def test_plain_truncation_cuts_between_words_without_a_marker(mode: Any) -> None:
    text = prose(60, 7)
    for target in (2, 5, 11, 40, 120, 400):
        out = truncate_text(text, target, COUNTER, mode, plain=True)
        assert COUNTER.count(out) <= target and not MARKER.search(out)
        assert whole_words_of(out, text)
        if out:
            assert ELLIPSIS in out
    marked = truncate_text(text, 40, COUNTER, mode)  # templates keep their marker
    assert MARKER.search(marked)


def test_the_extractive_summary_is_whole_lines() -> None:
    msgs = [{"role": "user", "content": prose(2, i) + " " + "x" * 400} for i in range(30)]
    made = ExtractiveSummarizer(COUNTER)(SummaryRequest("h", "ChatHistory", 90, messages=msgs))
    assert made is not None and COUNTER.count(made) <= 90
    for line in made.splitlines():
        assert line.startswith("- user: ")
        assert not MARKER.search(line)
    long_sentence = "word " * 300 + "end."
    picked = ExtractiveSummarizer(COUNTER).lines(
        SummaryRequest(
            "h", "ChatHistory", 500, messages=[{"role": "user", "content": long_sentence}]
        )
    )
    assert picked[0].endswith("word…")  # a long first sentence is cut between words


def test_no_summarizer_is_asked_below_the_floor_or_twice() -> None:
    asked: list[int] = []

    def llm(request: SummaryRequest) -> str:
        asked.append(request.target_tokens)
        return prose(30, 3)  # far longer than asked: fitted by whole sentences

    chain = SummaryChain(COUNTER, user=llm, cache=SummaryCache())
    msgs = chat(10)
    assert (
        chain.summarize(SummaryRequest("h", "ChatHistory", MIN_SUMMARY_TOKENS - 1, messages=msgs))
        is None
    )
    assert asked == []  # below a sentence: nobody is asked, and there is no summary
    made = chain.summarize(SummaryRequest("h", "ChatHistory", 60, messages=msgs))
    assert made is not None and made[1] == "callable" and COUNTER.count(made[0]) <= 60
    assert made[0].endswith(".") and not MARKER.search(made[0])
    again = chain.summarize(SummaryRequest("h", "ChatHistory", 45, messages=msgs[:-2]))
    assert again is not None and again[1] == "callable" and COUNTER.count(again[0]) <= 45
    assert asked == [60]  # once per compile: the first answer stands for the history
    # a precomputed summary fits any room, by whole sentences
    pre = chain.summarize(SummaryRequest("x", "ChatHistory", 5, messages=msgs), "Short. Long " * 9)
    assert pre is not None and pre[1] == "precomputed" and pre[0].startswith("Short.")
    assert pre[0].endswith(".") and COUNTER.count(pre[0]) <= 5


# -- whole compiles -----------------------------------------------------------------------


def agent_preset(tmp_path: Path, results_first: bool = False) -> Path:
    tail = [{"identifier": "chatHistory", "marker": True}]
    tail.insert(0 if results_first else 1, {"identifier": "agentResults", "marker": True})
    preset = {
        "prompts": [
            {"identifier": "main", "content": "You are {{char}}. Stay in character."},
            {"identifier": "charDescription", "marker": True},
            *tail,
        ],
        "agent": AGENT_SCHEMA,
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset), encoding="utf-8")
    return path


CARD = {"name": "Mira", "description": "Mira keeps the lighthouse. " * 5}


def test_a_preset_compile_never_carries_a_token_marker(tmp_path: Path) -> None:
    path = agent_preset(tmp_path, results_first=True)  # the results are cut, not dropped
    ctx = {
        "chat": chat(200),
        "character": CARD,
        "toolResults": [{"callId": "c1", "tool": "dice.roll", "content": prose(300, 5)}],
    }
    cut_at: list[str] = []
    for budget in (2500, 3000, 4000, 6000):
        result = compiler.compile(path, context=ctx, budget=budget, mode="agent")
        text = json.dumps(result.request, ensure_ascii=False)
        assert not MARKER.search(text), budget
        messages = result.request["messages"]
        summaries = [m for m in messages if "older messages are not shown" in str(m["content"])]
        assert len(summaries) <= 1
        for m in summaries:
            body = str(m["content"]).split("\n", 1)[1:]  # the summary under the note
            assert all(line.startswith("- ") for b in body for line in b.splitlines())
        (tool,) = [m for m in messages if m["role"] == "tool"]
        results = next(e for e in result.ledger.entries if e.kind == "ToolResults")
        cut_at.append(results.action)
        if results.action != "kept":  # cut between words, marked with a bare ellipsis
            content = re.sub(r"^\[summary of \d+ tokens\]\n", "", str(tool["content"]))
            assert ELLIPSIS in content
            assert whole_words_of(content, ctx["toolResults"][0]["content"])
    assert "kept" in cut_at and len(set(cut_at)) > 1  # both cases were seen
    # a template keeps its marker: the rule is for roleplay prompts
    template = "S.\n<<agent.tool_results>>\n<<agent.chat.history>>"
    plain = compiler.compile_string(template, context=ctx, budget=2500)
    assert MARKER.search(json.dumps(plain.request))


def test_a_summarizer_is_asked_once_per_compile(tmp_path: Path) -> None:
    asked: list[SummaryRequest] = []

    def llm(request: SummaryRequest) -> str:
        asked.append(request)
        return "Mira and the traveller talked about the ferry. They agreed to meet at dawn."

    path = agent_preset(tmp_path)
    ctx = {"chat": chat(300), "character": CARD}
    result = compiler.compile(path, context=ctx, budget=3000, mode="agent", summarizer=llm)
    assert len(asked) == 1 and asked[0].target_tokens >= MIN_SUMMARY_TOKENS
    history = next(e for e in result.ledger.entries if e.kind == "ChatHistory")
    assert history.action == "summarized"
    assert "They agreed to meet at dawn." in json.dumps(result.request)


def test_less_than_a_useful_summary_gives_its_room_to_history(tmp_path: Path) -> None:
    path = agent_preset(tmp_path)
    no_search = compiler.resolve_profile(
        preset={"agent": AGENT_SCHEMA}, run={"tools": {"deny": ["chat.search"]}}
    )
    asked: list[int] = []

    def llm(request: SummaryRequest) -> str:
        asked.append(request.target_tokens)
        return "A summary."

    ctx = {"chat": chat(40), "character": CARD}
    full = compiler.compile(path, context=ctx, mode="agent", profile=no_search)
    history = next(e for e in full.ledger.entries if e.kind == "ChatHistory")
    fixed = full.ledger.total_tokens - history.tokens_used
    for room in (150, 250, 350):  # a tenth of it holds the note, not a sentence more
        budget = fixed + room
        result = compiler.compile(
            path, context=ctx, budget=budget, mode="agent", profile=no_search, summarizer=llm
        )
        text = json.dumps(result.request["messages"])
        # a roleplay prompt without the search tool: no bare note, and no tool named
        assert "older messages are not shown" not in text
        assert "chat_search" not in text and "chat.search" not in text
        entry = next(e for e in result.ledger.entries if e.kind == "ChatHistory")
        assert entry.summary_tokens == 0 and entry.action == "truncated"
        assert result.ledger.total_tokens >= budget - 80  # the room went to messages
    assert asked == []  # never asked for less than a sentence
    # with the search tool offered, the note stays (it says where the rest is), still no
    # summary below a sentence
    searching = compiler.compile(path, context=ctx, budget=fixed + 250, mode="agent")
    if "chat_search" in {t["alias"] for t in searching.tools}:
        assert "the chat_search tool can read them" in json.dumps(searching.request)


def test_only_tools_in_the_request_are_named(tmp_path: Path) -> None:
    path = agent_preset(tmp_path)
    ctx = {"chat": chat(300), "character": CARD}
    offered = compiler.compile(path, context=ctx, budget=3000, mode="agent")
    names = {t["alias"] for t in offered.tools}
    text = json.dumps(offered.request["messages"])
    if "chat_search" in names:
        assert "the chat_search tool can read them" in text
    hidden = compiler.resolve_profile(
        preset={"agent": AGENT_SCHEMA}, run={"tools": {"deny": ["chat.search"]}}
    )
    denied = compiler.compile(path, context=ctx, budget=3000, mode="agent", profile=hidden)
    assert "chat_search" not in {t["alias"] for t in denied.tools}
    assert "chat_search" not in json.dumps(denied.request["messages"])
    assert "chat.search" not in json.dumps(denied.request["messages"])


def test_the_builtin_system_prompt_names_finish_only_when_offered(tmp_path: Path) -> None:
    ctx = {"chat": chat(2)}
    bare = compiler.compile_string("<<agent.system_prompt>>\n<<agent.chat.history>>", context=ctx)
    system = str(bare.request["messages"][0]["content"])
    assert "workspace.finish" not in system and "checked, stop." in system  # no tools sent
    tools = "<<agent.system_prompt>>\n<<agent.tools.available>>\n<<agent.chat.history>>"
    offered = compiler.compile_string(tools, context=ctx)
    assert "call workspace.finish" in str(offered.request["messages"][0]["content"])
    assert "workspace.finish" in {t["name"] for t in offered.tools}
    path = agent_preset(tmp_path)
    denied = compiler.resolve_profile(
        preset={"agent": AGENT_SCHEMA}, run={"tools": {"deny": ["workspace.finish"]}}
    )
    result = compiler.compile(
        path, context={"chat": chat(2), "character": CARD}, mode="agent", profile=denied
    )
    assert "workspace.finish" not in {t["name"] for t in result.tools}
    text = json.dumps(result.request["messages"])
    assert "workspace.finish" not in text and "workspace_finish" not in text


@given(st.integers(min_value=0, max_value=5000), st.integers(min_value=1, max_value=64))
def test_history_sample_stays_put_as_the_cut_grows(n: int, k: int) -> None:
    """The messages a cut history's extractive summary samples: at most ``k``, in order,
    within the cut; one more message cut keeps every one of them (new ones join at the end),
    or, when the grid's step doubles, keeps every other one: never a fresh sample."""
    before, after = _grid(n, k), _grid(n + 1, k)
    assert len(after) <= k and after == sorted(set(after)) and all(0 <= i <= n for i in after)
    old = [i for i in after if i < n]  # what was cut before: all sampled before, too
    assert set(old) <= set(before)
    assert after[: len(before)] == before or len(old) >= len(before) // 2
    if n:
        assert before[0] == 0 and len(before) >= min(n, k) // 2


def test_summary_of_a_growing_cut_keeps_its_lines() -> None:
    """Turn after turn (one more message cut each time), the summary lines stay the same
    until the sample's step doubles; the first sentences are not read again."""
    messages: list[Any] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i}. More text."}
        for i in range(400)
    ]
    summarizer = ExtractiveSummarizer(COUNTER)
    request = SummaryRequest("h", "ChatHistory", 1000, messages=messages[:300])
    grown = SummaryRequest("h", "ChatHistory", 1000, messages=messages[:301])
    assert summarizer.lines(grown) == summarizer.lines(request)


def _first_sentence_of_whole(text: str, limit: int) -> str:
    """The rule as first written: the whole text normalized, then cut at a sentence end."""
    from compiler.fit.summarize import _SENTENCE
    from compiler.fit.truncate import snap_back

    text = " ".join(text.split())
    head = _SENTENCE.split(text, maxsplit=1)[0] if text else ""
    if len(head) <= limit:
        return head
    return head[: snap_back(head, limit - 1)].rstrip() + "…"


@given(
    st.text(alphabet=st.sampled_from(list("ab .!?\n\t。！？\u3000\xa0")), max_size=40),
    st.integers(1, 30),
)
def test_a_first_sentence_reads_only_the_sentence(text: str, limit: int) -> None:
    assert _first_sentence(text, limit) == _first_sentence_of_whole(text, limit)


@pytest.mark.parametrize(("n", "budget"), [(30, 489), (60, 388), (60, 457), (60, 493)])
def test_a_gemini_history_cut_to_fit_keeps_its_summary(n: int, budget: int) -> None:
    """Gemini writes the summary as a tagged system note, which costs more than the room the
    summary is asked to fit (the frame of an empty message): an extractive summary made to
    use its room exactly would not fit the message, and the history would lose its summary
    altogether. Whole lines, each counted with one token to spare for its newline, leave
    room for the tag."""
    from tests.test_session_turns import message

    chat = [message(i) for i in range(n)]
    result = compiler.compile_string(
        "<<agent.chat.history>>", context={"chat": chat}, budget=budget, provider="gemini"
    )
    system = json.dumps(result.request.get("systemInstruction"))
    assert "[Earlier conversation:" in system and "- user:" in system


@pytest.mark.parametrize(("n", "budget"), [(20, 207), (40, 528), (70, 603)])
def test_a_gemini_summary_that_fills_its_room_is_shortened_not_dropped(n: int, budget: int) -> None:
    """The room a summary is asked to fit is the target less an empty system message's
    frame, which for Gemini lacks the system-note tag a summary message carries: a summary
    that fills that room is over the target, and is cut by whole sentences until it fits,
    never dropped with the history still cut."""
    from tests.test_session_turns import message

    chat = [message(i, 4 + i % 13) for i in range(n)]
    result = compiler.compile_string(
        "<<agent.chat.history>>", context={"chat": chat}, budget=budget, provider="gemini"
    )
    entry = result.ledger.entries[0]
    assert entry.messages_kept < entry.messages_offered and entry.summary_tokens > 0
