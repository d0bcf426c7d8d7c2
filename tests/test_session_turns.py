"""A session's warm turns give exactly what one-shot compiles give, whatever the caller does
to its chat between turns (appends, edits in place, fresh copies, bad messages)."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.errors import APCError
from compiler.inputs.lazy_chat import ChatMemo

TEMPLATE = "You narrate. <<agent.character>>\n<<agent.chat.history>>"
CARD = {"name": "Mira", "description": "A keeper of the lighthouse."}
WORDS = ["the", "ferry", "creaked", "across", "grey", "river.", "Mira", "counted", "lanterns!"]


def message(i: int, words: int = 12) -> dict[str, Any]:
    text = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(words)) + f" #{i}"
    return {"role": "user" if i % 2 == 0 else "assistant", "content": text}


def fickle_key(text: str) -> tuple[str, Callable[[], None]]:
    """A key (a str subclass) equal to ``text`` until ``stop()`` is called; the state is its
    class's, so a deep copy of the key stops too."""

    class Key(str):
        __hash__ = str.__hash__
        live = True

        def __eq__(self, other: object) -> bool:
            return Key.live and str.__eq__(self, other)

    def stop() -> None:
        Key.live = False

    return Key(text), stop


def outcome(run: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``run(*args, **kwargs)`` (a compile) gives: the request, the ledger and the
    warnings' codes, or the error."""
    try:
        result = run(*args, **kwargs)
    except APCError as exc:
        return ("error", exc.code, exc.message)
    return (result.request, result.ledger, [w.code for w in result.warnings])


# a turn: what the caller does to its chat before compiling it again
TURNS = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 3)),
    st.tuples(st.just("edit"), st.integers(0, 10_000)),  # an earlier message, in place
    st.tuples(st.just("fresh"), st.just(0)),  # every message a new dict of the same content
    st.tuples(st.just("drop"), st.integers(1, 2)),  # the newest messages taken back
    st.tuples(st.just("name"), st.integers(0, 10_000)),  # a name given in place
    st.tuples(st.just("odd"), st.integers(0, 10_000)),  # not plain: extra key or bad value
    st.tuples(st.just("same"), st.just(0)),
)


def turn(chat: list[dict[str, Any]], op: str, arg: int, counter: list[int]) -> list[Any]:
    if op == "append":
        for _ in range(arg):
            counter[0] += 1
            chat.append(message(counter[0], 4 + counter[0] % 30))
    elif op == "edit" and chat:
        edited = chat[arg % len(chat)]
        edited["content"] = f"edited {arg} {edited.get('content')}"
    elif op == "fresh":
        return [dict(m) for m in chat]
    elif op == "drop":
        del chat[-arg:]
    elif op == "name" and chat:
        chat[arg % len(chat)]["name"] = f"N{arg % 3}"
    elif op == "odd" and chat:
        odd: Any = {0: ("sendDate", "2024-01-01"), 1: ("content", 7), 2: ("extra", "x")}[arg % 3]
        chat[arg % len(chat)][odd[0]] = odd[1]
    return chat


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.lists(TURNS, min_size=1, max_size=8), st.sampled_from([400, 900]))
def test_turns_through_a_session_are_one_shot_compiles(
    start: int, turns: list[tuple[str, int]], budget: int
) -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=budget)
    chat = [message(i) for i in range(start)]
    counter = [start]
    for op, arg in [("same", 0), *turns]:
        chat = turn(chat, op, arg, counter)
        ctx = {"chat": chat, "character": CARD}
        warm = outcome(session.compile, ctx)
        cold = outcome(compiler.compile_string, TEMPLATE, context=copy.deepcopy(ctx), budget=budget)
        assert warm == cold, (op, arg)


def test_two_threads_compiling_different_chats_on_one_session() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=500)
    chats = [[message(i + 1000 * t) for i in range(40)] for t in range(2)]
    barrier = threading.Barrier(2)

    def one(t: int) -> list[Any]:
        barrier.wait(timeout=30)
        out = []
        for n in range(20, 41):
            ctx = {"chat": chats[t][:n], "character": CARD}
            out.append(outcome(session.compile, ctx))
        return out

    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(one, range(2)))
    for t in range(2):
        want = [
            outcome(
                compiler.compile_string,
                TEMPLATE,
                context={"chat": chats[t][:n], "character": CARD},
                budget=500,
            )
            for n in range(20, 41)
        ]
        assert got[t] == want


def test_the_memo_reuses_its_copies_only_for_the_same_content() -> None:
    memo = ChatMemo()
    chat = [message(i) for i in range(5)]
    first = memo.plain(chat)
    assert (
        first is not None
        and first == chat
        and all(a is not b for a, b in zip(first, chat, strict=True))
    )
    chat.append(message(5))
    second = memo.plain(chat)
    assert second is not None and second == chat
    assert all(a is b for a, b in zip(first, second[:5], strict=True))  # the checked head is reused
    chat[2]["content"] = "changed"  # in place: the same dict, other content
    third = memo.plain(chat)
    assert third is not None and third[2]["content"] == "changed" and third[2] is not first[2]
    fresh = [dict(m) for m in chat]  # other dicts, the same content: reused
    assert all(a is b for a, b in zip(memo.plain(fresh) or [], third, strict=True))


def test_the_memo_checks_again_what_is_not_an_exact_dict_or_is_bad() -> None:
    class Sneaky(dict[str, Any]):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]

    memo = ChatMemo()
    chat = [message(i) for i in range(4)]
    assert memo.plain(chat) is not None
    assert memo.plain([Sneaky(role="user", content=None), *chat[1:]]) is None
    assert memo.plain([*chat, {"role": "user", "content": 3}]) is None
    assert memo.plain([*chat, {"role": "robot", "content": "hi"}]) is None
    assert memo.plain(chat[:2]) == chat[:2]  # a shorter chat: its head reused


def test_first_sentences_are_remembered_within_bounds() -> None:
    from compiler.fit.summarize import FirstSentences, _first_sentence

    memo = FirstSentences()
    texts = [f"Line {i} is here. And more {i}!" for i in range(FirstSentences.ENTRIES + 10)]
    texts.append("A long one. " + "x " * FirstSentences.LONGEST)
    for text in texts + texts[:50]:
        assert memo.first(text) == _first_sentence(text)
    assert 0 < len(memo._memo) <= FirstSentences.ENTRIES
    assert texts[-1] not in memo._memo


def test_a_session_s_warm_turn_summarizes_what_a_one_shot_compile_does() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=700)
    chat = [message(i, 6 + i % 40) for i in range(300)]
    for n in range(250, 300, 7):
        ctx = {"chat": chat[:n], "character": CARD}
        warm = session.compile(ctx)
        cold = compiler.compile_string(TEMPLATE, context=ctx, budget=700)
        assert warm.request == cold.request and warm.ledger == cold.ledger
        assert "Earlier conversation" in warm.request["messages"][1]["content"]


def agent_card(profile: dict[str, Any]) -> dict[str, Any]:
    """A V2 card whose embedded agent profile ``bard`` holds the fields ``profile``."""
    profile = {"id": "bard", **profile}
    return {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Ann",
            "description": "A bard.",
            "extensions": {
                "agent": {"defaultProfile": "bard"},
                "tauritavern": {"agentProfiles": {"version": 1, "items": [profile]}},
            },
        },
    }


def test_the_profile_is_resolved_again_when_the_card_changes_and_its_copy_is_the_caller_s() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=900)
    chat = [message(i) for i in range(80)]
    card = agent_card(
        {
            "context": {"historyBudgetTokens": 300},
            "tools": {"allow": ["chat.*", "workspace.*", "nosuch.*"]},
        }
    )
    steps = [
        lambda: None,
        lambda: card["data"]["extensions"]["tauritavern"]["agentProfiles"]["items"][0].update(
            context={"historyBudgetTokens": 500}
        ),
        lambda: None,
        lambda: card["data"].update(description="Another bard."),
        lambda: card["data"]["extensions"]["tauritavern"]["agentProfiles"]["items"][0].update(
            tools={"alow": []}
        ),  # an error, every time
        lambda: card["data"]["extensions"]["tauritavern"]["agentProfiles"]["items"][0].update(
            tools={"allow": ["chat.*", "workspace.*"]}
        ),
        lambda: None,
    ]
    seen = []
    for step in steps:
        step()
        ctx = {"chat": chat, "character": card}
        warm = outcome(session.compile, ctx)
        cold = outcome(compiler.compile_string, TEMPLATE, context=copy.deepcopy(ctx), budget=900)
        assert warm == cold
        seen.append(warm)
        if warm[0] != "error":
            # what a caller does to its result's profile is not the next turn's profile
            result = session.compile(ctx)
            assert result.profile is not None
            result.profile.context.history_budget_tokens = 5
            result.profile.warnings.clear()
    assert seen[0][0]["messages"] != seen[1][0]["messages"]  # the budget took effect
    assert seen[0][2] == seen[2][2]
    assert any(s[0] == "error" for s in seen)


def test_a_kept_profile_tells_its_readers_warnings_again(monkeypatch: Any) -> None:
    from compiler.errors import Diagnostic
    from compiler.inputs.read import report
    from compiler.profile import ProfileLayers

    resolve = ProfileLayers.resolve
    calls = []

    def reporting(self: ProfileLayers) -> Any:
        calls.append(1)
        report(Diagnostic(code="context.lone_surrogate", message="read", severity="warning"))
        return resolve(self)

    monkeypatch.setattr(ProfileLayers, "resolve", reporting)
    session = compiler.Session.from_string(TEMPLATE, budget=900)
    ctx = {"chat": [message(i) for i in range(30)], "character": CARD}
    first, second = session.compile(ctx), session.compile(ctx)
    assert len(calls) == 1  # the second turn kept the first one's profile
    assert [w.code for w in first.warnings] == [w.code for w in second.warnings]
    assert "context.lone_surrogate" in [w.code for w in second.warnings]


def test_a_warm_turn_prices_only_what_it_has_not_priced(priced: list[Any]) -> None:
    """The history walk of a warm turn reads the prices of the messages the last turn
    priced: one appended message is the one message priced again (the summary aside)."""
    session = compiler.Session.from_string(TEMPLATE, budget=600)
    chat = [message(i) for i in range(200)]
    session.compile({"chat": chat, "character": CARD})
    chat.append(message(200))
    priced.clear()
    warm = session.compile({"chat": chat, "character": CARD})
    history = [m for m in priced if m.get("content", "").endswith("#200")]
    others = [m for m in priced if m["role"] != "system" and m not in history]
    # twice: the allocator holds the newest turn's room first (it is never cut), then the
    # walk prices it
    assert len(history) == 2 and others == []
    cold = compiler.compile_string(TEMPLATE, context={"chat": chat, "character": CARD}, budget=600)
    assert warm.request == cold.request and warm.ledger == cold.ledger


def test_turns_for_other_providers_on_one_session_price_by_their_own_model() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=700)
    chat = [message(i) for i in range(120)]
    for n, provider in enumerate(["openai", "anthropic", "anthropic", "gemini", "openai"]):
        chat.append(message(120 + n))
        ctx = {"chat": chat, "character": CARD}
        warm = outcome(session.compile, ctx, provider=provider)
        cold = outcome(
            compiler.compile_string,
            TEMPLATE,
            context=copy.deepcopy(ctx),
            budget=700,
            provider=provider,
        )
        assert warm == cold, provider


def test_a_session_s_copies_share_no_key_with_the_caller() -> None:
    """The session's copies of a plain chat are made from the values its check read, under
    keys of exact text: a caller's key (a str subclass) that later stops equalling "role"
    changes nothing the session kept (no KeyError mid-compile; the next turn is the one-shot
    compile of what the caller holds then)."""

    key, stop = fickle_key("role")
    session = compiler.Session.from_string(TEMPLATE, budget=100_000)
    chat = [message(0), {key: "user", "content": "hi"}]
    first = outcome(session.compile, {"chat": chat, "character": CARD})
    assert first[0] != "error"
    stop()
    chat.append(message(2))
    got = outcome(session.compile, {"chat": chat, "character": CARD})
    want = outcome(
        compiler.compile_string, TEMPLATE, context={"chat": chat, "character": CARD}, budget=100_000
    )
    assert got == want


def test_a_turn_counted_by_the_caller_leaves_no_summary_for_a_tiktoken_turn() -> None:
    """An extractive summary depends on how its lines are counted: one made in a turn whose
    ``token_counter`` is the caller's (here: summary lines are dear) is not the summary a
    later tiktoken-counted turn of the session makes of the same cut, which gives what a
    one-shot compile gives."""
    from compiler._base.tokens import get_encoding

    encoding = get_encoding("o200k_base")

    def dear_lines(text: str) -> int:
        return len(encoding.encode_ordinary(text)) * (20 if text.startswith("- ") else 1)

    ctx = {"chat": [message(i) for i in range(60)], "character": CARD}
    session = compiler.Session.from_string(TEMPLATE, budget=600)
    session.compile(ctx, token_counter=dear_lines)
    want = outcome(compiler.compile_string, TEMPLATE, context=copy.deepcopy(ctx), budget=600)
    assert outcome(session.compile, ctx) == want


def test_text_samples_are_remembered_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler.fit.summarize import TextSamples

    monkeypatch.setattr(TextSamples, "ENTRIES", 8)
    monkeypatch.setattr(TextSamples, "CHARS", 2_000)
    monkeypatch.setattr(TextSamples, "LONGEST", 500)
    memo = TextSamples()
    made: list[str] = []

    def lines(text: str) -> list[str]:
        made.append(text)
        return text.split(".")

    texts = [f"Text {i}. More {i}." * (1 + i % 5) for i in range(20)] + ["Long. " * 200]
    for text in texts + texts:
        got = memo.get(text, 48, lambda text=text: lines(text))
        assert got == text.split(".")
        got.append("a caller's change")  # handed out as a copy: the memo keeps its own
        assert len(memo._memo) <= TextSamples.ENTRIES and memo._chars <= TextSamples.CHARS
        assert memo._chars == sum(len(t) for _, t in memo._memo)
    assert texts[-1] not in {t for _, t in memo._memo}  # longer than LONGEST: not kept
    fresh, text = TextSamples(), "One. Two. Three."
    before = len(made)
    assert [fresh.get(text, 48, lambda: lines(text)) for _ in range(3)] == [text.split(".")] * 3
    assert len(made) == before + 1  # made once, then remembered
    assert memo.get(texts[0], 48, lambda: lines(texts[0])) == texts[0].split(".")
    assert memo.get(texts[0], 24, lambda: ["other picks"]) == ["other picks"]


def test_a_session_samples_an_unchanged_tool_result_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool results summarized turn after turn (mode="summary") are split into sentences
    once; every turn gives what a one-shot compile gives, an edited result included."""
    from compiler.fit import summarize

    split = summarize._SENTENCE.split
    calls: list[int] = []

    class Counting:
        def split(self, text: str) -> list[str]:
            calls.append(1)
            return split(text)

    monkeypatch.setattr(summarize, "_SENTENCE", Counting())
    template = '<<agent.tool_results mode="summary" budget=300>>\n<<agent.chat.history>>'
    body = "\n".join(f"Line {i} of the file says something. Then more." for i in range(80))
    results = [
        {"callId": f"c{i}", "tool": "workspace.read_file", "content": f"{i}: {body}"}
        for i in range(3)
    ]
    session = compiler.Session.from_string(template, budget=2_000)
    chat = [message(i) for i in range(6)]
    counts = []
    for n in range(3, 7):
        if n == 6:
            results[1]["content"] += "\nAn edit."
        ctx = {"chat": chat[:n], "toolResults": results}
        before = len(calls)
        warm = session.compile(ctx)
        counts.append(len(calls) - before)
        one = compiler.compile_string(template, context=ctx, budget=2_000)
        assert warm.request == one.request
    # the first turn splits each result (and each summary it shrinks); then only the edit
    assert counts[0] >= 3 and counts[1:3] == [0, 0] and 0 < counts[3] < counts[0]
