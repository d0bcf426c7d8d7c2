"""A preset compiled through a session, turn after turn, gives exactly what one-shot compiles
give; the session parses each entry once and a compile never changes what it keeps; the chat
history is framed lazily, only as far as the fit and the injections read it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.tavern.chat_view import ChatView
from compiler.tavern.framing import name_free, namer
from compiler.tavern.injections import apply_injections, inject_newest
from compiler.tavern.preset import PresetPrompt
from tests.test_session_turns import outcome

WORDS = ["the", "ferry", "creaked", "across", "grey", "river.", "Mira", "counted", "lanterns!"]
CARD = {"name": "Mira", "description": "A keeper of the lighthouse.", "first_mes": "Hello."}
ORACLE = Path(__file__).parent.parent / "fixtures" / "st_oracle" / "inputs"


def message(i: int, words: int = 12) -> dict[str, Any]:
    text = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(words)) + f" #{i}"
    return {"role": "user" if i % 2 == 0 else "assistant", "content": text}


def preset(behavior: int, quotes: bool, send_if_empty: str, depths: list[int]) -> str:
    prompts: list[dict[str, Any]] = [
        {"identifier": "main", "role": "system", "content": "You are {{char}} with {{user}}."},
        {"identifier": "charDescription", "marker": True},
        {"identifier": "chatHistory", "marker": True},
        {"identifier": "jailbreak", "role": "system", "content": "Stay {{char}}. <<agent.x"},
    ]
    prompts[-1]["content"] = "Stay {{char}}."
    for k, depth in enumerate(depths):
        prompts.append(
            {
                "identifier": f"inject{k}",
                "role": ["system", "user", "assistant"][k % 3],
                "content": f"Injected {k} for {{{{user}}}}",
                "injection_position": 1,
                "injection_depth": depth,
            }
        )
    return json.dumps(
        {
            "names_behavior": behavior,
            "wrap_in_quotes": quotes,
            "send_if_empty": send_if_empty,
            "prompts": prompts,
        }
    )


TURNS = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 3)),
    st.tuples(st.just("name"), st.integers(0, 10_000)),  # a message's own name, in place
    st.tuples(st.just("persona"), st.integers(0, 2)),  # the run's persona renamed or gone
    st.tuples(st.just("card"), st.integers(0, 2)),  # the card renamed
    st.tuples(st.just("crlf"), st.integers(0, 10_000)),
    st.tuples(st.just("drop"), st.integers(1, 2)),
    st.tuples(st.just("same"), st.just(0)),
)


def turn(ctx: dict[str, Any], op: str, arg: int, counter: list[int]) -> None:
    chat = ctx["chat"]
    if op == "append":
        for _ in range(arg):
            counter[0] += 1
            chat.append(message(counter[0], 4 + counter[0] % 30))
    elif op == "name" and chat:
        chat[arg % len(chat)]["name"] = f"N{arg % 3}"
    elif op == "persona":
        ctx.pop("persona", None)
        if arg:
            ctx["persona"] = {"name": f"P{arg}"}
    elif op == "card":
        ctx["character"] = {**CARD, "name": f"Mira{arg}"}
    elif op == "crlf" and chat:
        chat[arg % len(chat)]["content"] = "line\r\nnext"
    elif op == "drop":
        del chat[-arg:]


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 40),
    st.lists(TURNS, min_size=1, max_size=6),
    st.sampled_from([-1, 0, 1, 2]),
    st.booleans(),
    st.sampled_from(["", "(continue)"]),
    st.lists(st.sampled_from([0, 1, 3, 30]), max_size=3),
    st.sampled_from([300, 900]),
    st.booleans(),
)
def test_a_session_s_preset_turns_are_one_shot_compiles(
    start: int,
    turns: list[tuple[str, int]],
    behavior: int,
    quotes: bool,
    send: str,
    depths: list[int],
    budget: int,
    via_log: bool,
) -> None:
    """The session reads the chat as a list, or as a ChatLog kept in step with it."""
    text = preset(behavior, quotes, send, depths)
    session = compiler.Session.from_string(text, kind="preset", budget=budget)
    ctx: dict[str, Any] = {"chat": [message(i) for i in range(start)], "character": CARD}
    ctx["chatMetadata"] = {"note_prompt": "Note for {{char}}", "note_position": 1}
    counter = [start]
    log = compiler.ChatLog()
    for op, arg in [("same", 0), *turns]:
        turn(ctx, op, arg, counter)
        if via_log:
            in_step(log, ctx["chat"])
        warm = outcome(session.compile, {**ctx, "chat": log} if via_log else ctx)
        cold = outcome(
            compiler.compile_string, text, kind="preset", context=copy.deepcopy(ctx), budget=budget
        )
        assert warm == cold, (op, arg)


def in_step(log: compiler.ChatLog, chat: list[dict[str, Any]]) -> None:
    """Change ``log`` to hold ``chat``'s messages: the first that differs and all after it
    deleted, then the rest of ``chat`` appended."""
    held = list(log)
    same = next(
        (i for i, (a, b) in enumerate(zip(held, chat, strict=False)) if a != b),
        min(len(held), len(chat)),
    )
    if same < len(held):
        del log[same:]
    log.extend(chat[same:])


@pytest.mark.parametrize("name", sorted(p.name for p in ORACLE.glob("*.preset.json")))
def test_oracle_presets_through_a_session_are_one_shot_compiles(name: str) -> None:
    path = ORACLE / name
    session = compiler.Session(path, budget=2000)
    chat = [message(i) for i in range(60)]
    for n in range(3):
        chat.append(message(60 + n))
        ctx = {"chat": chat, "character": CARD, "persona": {"name": "Sam"}}
        warm = outcome(session.compile, ctx)
        cold = outcome(compiler.compile, path, context=copy.deepcopy(ctx), budget=2000)
        assert warm == cold, (name, n)


def test_a_session_parses_each_entry_once_and_a_compile_never_changes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from compiler.tavern import agent_entries

    parsed: list[str] = []
    original = agent_entries.parse_entry

    def spy(text: str, name: str) -> Any:
        parsed.append(name)
        return original(text, name)

    monkeypatch.setattr(agent_entries, "parse_entry", spy)
    text = preset(2, True, "", [0, 3])
    session = compiler.Session.from_string(text, kind="preset", budget=1300)
    chat = [message(i) for i in range(20)]
    session.compile({"chat": chat, "character": CARD})
    first = len(parsed)
    assert first > 0 and len(set(parsed)) == first  # each entry once
    kept = session._source.preset
    assert kept is not None
    snapshot = copy.deepcopy(kept._parsed)
    for n in range(3):
        chat.append(message(20 + n))
        session.compile({"chat": chat, "character": CARD}, mode=["legacy", "agent"][n % 2])
    # nothing a compile did changed a kept entry (agent mode added its own entries)
    assert {key: kept._parsed[key] for key in snapshot} == snapshot
    assert len(parsed) == len(kept._parsed)  # agent mode parsed only what it adds


def test_an_entry_s_syntax_error_is_reported_every_turn() -> None:
    text = json.dumps({"prompts": [{"identifier": "main", "content": "a <<agent.character"}]})
    session = compiler.Session.from_string(text, kind="preset")
    cold = outcome(compiler.compile_string, text, kind="preset", context={"chat": []})
    for _ in range(2):
        assert outcome(session.compile, {"chat": []}) == cold
        assert cold[0] == "error"


def test_a_long_chat_is_framed_only_where_it_is_read() -> None:
    made: list[int] = []
    base = [message(i) for i in range(10_000)]

    def make(m: Any) -> Any:
        made.append(1)
        return namer(0, "User", "Mira")(m)

    view = ChatView(base, make, [{"role": "user", "content": "tail"}])
    assert len(view) == 10_001 and view[-1]["content"] == "tail"
    name = namer(0, "User", "Mira")
    assert view[9_999] == name(base[9_999])
    assert list(view[9_998:]) == [*map(name, base[9_998:]), view[-1]]
    assert len(made) == 2  # read twice, made once each
    prompts = [PresetPrompt(identifier="x", content="X", injection_position=1, injection_depth=3)]

    def inject(role: Any, text: str, src: Any) -> Any:
        return {"role": role, "content": text}

    k, tail = inject_newest(view, prompts, inject)
    assert k == 4 and len(made) == 3  # the tail, and one more of the base
    whole = apply_injections(list(view), prompts, inject)
    assert list(view.spliced(k, tail)) == whole


@pytest.mark.parametrize("depth", [0, 2, 5, 9])
@pytest.mark.parametrize("n", [0, 1, 3, 6, 12])
def test_injecting_from_the_newest_messages_is_injecting_into_all(depth: int, n: int) -> None:
    roles = ["user", "assistant", "tool", "tool", "user", "tool"]
    history = [{"role": roles[i % len(roles)], "content": str(i)} for i in range(n)]
    prompts = [
        PresetPrompt(identifier="a", content="A", injection_position=1, injection_depth=depth),
        PresetPrompt(identifier="b", content="B", injection_position=1, injection_depth=1),
    ]

    def inject(role: Any, text: str, src: Any) -> Any:
        return {"role": role, "content": text}

    def tool(m: Any) -> bool:
        return bool(m["role"] == "tool")

    k, tail = inject_newest(history, prompts, inject, answers_a_call=tool)
    assert history[: n - k] + tail == apply_injections(
        history, prompts, inject, answers_a_call=tool
    )


def test_a_message_s_price_is_kept_only_when_the_run_cannot_change_it() -> None:
    plain, own = {"role": "user", "content": "x"}, {"role": "user", "content": "x", "name": "A"}
    bot = {"role": "assistant", "content": "x"}
    assert name_free(-1)(own) and name_free(0)(plain) and name_free(0)(bot)
    assert not name_free(0)(own)  # prefixed by whether the run's persona is another one
    assert not name_free(1)(plain) and not name_free(2)(bot)  # named by the run
    assert name_free(1)(own) and name_free(2)({"role": "system", "content": "x"})
    assert not name_free(-1)("not a dict")


class Sourced(list[Any]):
    def sources(self) -> list[Any]:
        return list(self)


@given(
    st.lists(st.sampled_from(["user", "assistant", "system"]), max_size=12),
    st.integers(-1, 2),
    st.integers(0, 4),
    st.integers(-14, 14),
    st.integers(-14, 14),
)
def test_a_block_of_sources_is_each_source_read_alone(
    roles: list[str], behavior: int, tail: int, lo: int, hi: int
) -> None:
    """The history walk reads a view's sources a block at a time: each the base's source
    where the message made of it depends on nothing else, else a fresh object, as reading
    them one by one gives (``name_free``)."""
    base = Sourced(
        {"role": r, "content": str(i), **({"name": "N"} if i % 3 == 0 else {})}
        for i, r in enumerate(roles)
    )
    extra = [{"role": "user", "content": "t"}] * tail
    view = ChatView(base, namer(behavior, "User", "Mira"), extra, free=name_free(behavior))
    sources = view.sources()
    assert sources is not None

    def kept(found: Any) -> Any:  # the source itself, or None for a fresh stand-in
        return next((i for i, b in enumerate(base) if found is b), None)

    one_by_one = [kept(sources[i]) for i in range(len(sources))[lo:hi]]
    assert [kept(x) for x in sources[lo:hi]] == one_by_one


@pytest.mark.parametrize("behavior", [-1, 0, 1, 2])
def test_a_long_chat_framed_as_read_is_what_a_one_shot_compile_sends(behavior: int) -> None:
    """Past FRAMED_WHOLE messages the chat is framed as the fit reads it: turn after turn
    (names changing, messages named, injections at depth) a session equals one-shot compiles."""
    from compiler.tavern.framing import FRAMED_WHOLE

    text = preset(behavior, True, "(continue)", [0, 4])
    session = compiler.Session.from_string(text, kind="preset", budget=1200)
    chat = [message(i) for i in range(FRAMED_WHOLE + 50)]
    for i in range(0, len(chat), 7):
        chat[i]["name"] = ["Sam", "Zed", "User"][i % 3]
    ctx: dict[str, Any] = {"chat": chat, "character": CARD, "persona": {"name": "Sam"}}
    for n in range(4):
        chat.append(message(FRAMED_WHOLE + 50 + n))
        if n == 2:
            ctx["persona"] = {"name": "Zed"}
        warm = outcome(session.compile, ctx)
        cold = outcome(
            compiler.compile_string, text, kind="preset", context=copy.deepcopy(ctx), budget=1200
        )
        assert warm == cold and warm[0] != "error", n


@pytest.mark.parametrize("n", [40, 400])  # framed whole, and framed as read
def test_a_warm_preset_turn_prices_only_the_new_message(n: int, priced: list[Any]) -> None:
    text = preset(0, False, "", [])
    session = compiler.Session.from_string(text, kind="preset", budget=1500)
    chat = [message(i) for i in range(n)]
    session.compile({"chat": chat, "character": CARD})
    chat.append(message(n))
    priced.clear()
    warm = session.compile({"chat": chat, "character": CARD})
    history = [m for m in priced if m["role"] != "system"]
    # the new message, twice: the allocator holds its room first (the newest turn is never
    # cut), then the walk prices it
    assert [m["content"] for m in history] == [message(n)["content"]] * 2
    cold = compiler.compile_string(
        text, kind="preset", context={"chat": chat, "character": CARD}, budget=1500
    )
    assert warm.request == cold.request and warm.ledger == cold.ledger
