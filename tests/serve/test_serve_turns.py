"""The turn protocol of ``apc serve`` (``/v1/sessions``), in process: every answer is the one
``/v1/compile`` gives for the whole chat, byte for byte, whatever sequence of appends, edits,
context changes and whole resends leads there; a client out of step gets a 409, an unknown
session a 404; a failed turn changes nothing; turns of one session never interleave; the
digest is the documented chain, which a client can compute itself."""

from __future__ import annotations

import gc
import hashlib
import json
import re
import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="the test extra (httpx) is not installed")

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.serve import turns
from compiler.serve.app import create_app
from compiler.serve.chat_chain import canonical
from compiler.serve.limits import ServeConfig
from compiler.serve.sessions import SessionCache
from compiler.serve.turn_models import TurnIn
from tests.serve.server import ROOT, WRITER

OPTIONS = {"model": "gpt-4o", "budget": 1300, "cacheStable": 4}
"""A budget the example's chat outgrows within a few turns: history is cut and summarized."""
JSON_TYPE = {"content-type": "application/json"}
JOURNAL_OWN = re.compile(rb'"(id|runId|timestamp)":"[^"]*"')
"""What every compile makes its own: its journal events' ids, run id and timestamps."""


def run_rest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WRITER / "run.json").read_text(encoding="utf-8"))
    data.pop("chat")
    return data  # its workspace path is relative: it resolves under the first root


@pytest.fixture(scope="module")
def c() -> Iterator[TestClient]:
    config = ServeConfig(roots=(WRITER,))
    with TestClient(
        create_app(config), base_url="http://localhost", raise_server_exceptions=False
    ) as client:
        yield client


def chain(messages: list[Any]) -> str:
    """The digest as the docs define it, with nothing but the standard library."""
    digest = hashlib.sha256(b"").digest()
    for m in messages:
        text = json.dumps(m, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(digest + text.encode("utf-8")).digest()
    return "sha256:" + digest.hex()


def state(r: Any) -> dict[str, Any]:
    assert r.status_code == 200, r.text
    return {"count": int(r.headers["apc-session-count"]), "digest": r.headers["apc-session-digest"]}


def same_as_full(c: TestClient, r: Any, chat: list[Any], rest: dict[str, Any]) -> None:
    """``r``'s body is /v1/compile's for the whole chat, byte for byte (but what each compile
    makes its own), and its state is the chat's."""
    full = c.post(
        "/v1/compile",
        json={"source": "template.txt", "context": {**rest, "chat": chat}, "options": OPTIONS},
    )
    assert full.status_code == r.status_code == 200, (full.text, r.text)
    assert JOURNAL_OWN.sub(b"", r.content) == JOURNAL_OWN.sub(b"", full.content)
    assert state(r) == {"count": len(chat), "digest": chain(chat)}


texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40
) | st.sampled_from(["the ferry creaked", "Mira counted lanterns " * 8, "", 'é\u2028\x00\t"\\'])
messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "content": texts},
    optional={"name": st.sampled_from(["Sam", "Mira"])},
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.lists(messages, min_size=1, max_size=4)),
        st.tuples(st.just("edit"), st.integers(0, 6), st.lists(messages, max_size=2)),
        st.tuples(st.just("plan"), st.sampled_from(["Go on.", ["Reach the ferry.", "Pay."]])),
        st.tuples(st.just("resend")),
        st.tuples(st.just("stale")),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@pytest.mark.parametrize("quick", [float("inf"), 0.0], ids=["on-the-loop", "in-workers"])
@given(first=st.lists(messages, max_size=6), steps=steps)
def test_every_turn_answers_as_a_full_compile(
    c: TestClient,
    monkeypatch: pytest.MonkeyPatch,
    quick: float,
    first: list[Any],
    steps: list[tuple[Any, ...]],
) -> None:
    """The same answers whether a turn runs on the event loop (a warm one) or in a worker."""
    monkeypatch.setattr(turns, "QUICK_TURN_SECONDS", quick)
    rest = run_rest()
    chat = list(first)
    start = {"source": "template.txt", "context": {**rest, "chat": chat}, "options": OPTIONS}
    r = c.post("/v1/sessions", json=start)
    same_as_full(c, r, chat, rest)
    sid, base, stale = r.headers["apc-session"], state(r), state(r)
    for step in steps:
        turn: dict[str, Any] = {"base": base}
        if step[0] == "append":
            turn["append"] = step[1]
            chat += step[1]
        elif step[0] == "edit":  # an edit or a regenerated answer: drop from k, then append
            k = max(0, len(chat) - step[1])
            turn |= {"replaceFrom": k, "append": step[2]}
            chat = chat[:k] + step[2]
        elif step[0] == "plan":
            turn["context"] = {"plan": step[1]}
            rest["plan"] = step[1]
        if step[0] in ("resend", "stale"):
            if step[0] == "stale" and stale != base:
                r = c.post(f"/v1/sessions/{sid}/turns", json={"base": stale, "append": chat[:1]})
                assert r.json()["diagnostics"][0]["code"] == "serve.turn_out_of_step"
                assert r.status_code == 409
            body = {**start, "session": sid, "context": {**rest, "chat": chat}}
            r = c.post("/v1/sessions", json=body)  # the whole chat again
        else:
            r = c.post(f"/v1/sessions/{sid}/turns", json=turn)
        same_as_full(c, r, chat, rest)
        stale, base = base, state(r)
        assert r.headers["apc-session"] == sid
    assert c.get(f"/v1/sessions/{sid}").json() == {"session": sid, **base}
    assert c.delete(f"/v1/sessions/{sid}").status_code == 204


def started(c: TestClient, **fields: Any) -> tuple[str, dict[str, Any]]:
    chat = [{"role": "user", "content": "Hi"}]
    body = {"template": "<<agent.chat.history>>", "context": {"chat": chat}, **fields}
    r = c.post("/v1/sessions", json=body)
    return r.headers["apc-session"], state(r)


def test_a_client_names_its_session(c: TestClient) -> None:
    sid, base = started(c, session="chat-42")
    assert sid == "chat-42" and base == {
        "count": 1,
        "digest": chain([{"role": "user", "content": "Hi"}]),
    }
    r = c.post(
        "/v1/sessions/chat-42/turns",
        json={"base": base, "append": [{"role": "assistant", "content": "Yo"}]},
    )
    assert state(r)["count"] == 2
    assert c.get("/v1/sessions/chat-42").json()["count"] == 2


@pytest.mark.parametrize(
    "route", ["/v1/sessions/never-started/turns", "/v1/sessions/never-started"]
)
def test_an_unknown_session_is_a_coded_404(c: TestClient, route: str) -> None:
    base = {"count": 0, "digest": chain([])}
    r = c.post(route, json={"base": base}) if route.endswith("turns") else c.get(route)
    assert r.status_code == 404
    assert r.json()["diagnostics"][0]["code"] == "serve.unknown_session"
    assert c.delete("/v1/sessions/never-started").status_code == 404


def test_a_failed_turn_changes_nothing(c: TestClient) -> None:
    sid, base = started(c)
    bad = c.post(f"/v1/sessions/{sid}/turns", json={"base": base, "append": [{"role": "narrator"}]})
    assert bad.status_code == 422, bad.text
    assert c.get(f"/v1/sessions/{sid}").json()["count"] == 1
    past = c.post(f"/v1/sessions/{sid}/turns", json={"base": base, "replaceFrom": 2})
    assert past.status_code == 422 and "replaceFrom" in past.text
    chat = c.post(f"/v1/sessions/{sid}/turns", json={"base": base, "context": {"chat": []}})
    assert chat.status_code == 422
    ok = c.post(
        f"/v1/sessions/{sid}/turns",
        json={"base": base, "append": [{"role": "user", "content": "x"}]},
    )
    assert state(ok)["count"] == 2


@pytest.mark.parametrize(
    "body",
    [
        {"base": {"count": 1, "digest": "sha256:" + "0" * 64}},
        {"base": {"count": 2, "digest": chain([{"role": "user", "content": "Hi"}])}},
    ],
)
def test_out_of_step_is_a_coded_409(c: TestClient, body: dict[str, Any]) -> None:
    sid, _ = started(c)
    r = c.post(f"/v1/sessions/{sid}/turns", json=body)
    assert r.status_code == 409
    assert r.json()["diagnostics"][0]["code"] == "serve.turn_out_of_step"


@pytest.mark.parametrize(
    "body",
    [
        {"base": {"count": 0, "digest": "md5:x"}},
        {"base": {"count": -1, "digest": "sha256:" + "0" * 64}},
        {"append": []},
    ],
)
def test_a_malformed_turn_is_invalid(c: TestClient, body: dict[str, Any]) -> None:
    sid, _ = started(c)
    r = c.post(f"/v1/sessions/{sid}/turns", json=body)
    assert r.status_code == 422
    assert r.json()["diagnostics"][0]["code"] == "serve.invalid_request"


def test_a_session_chat_must_be_messages(c: TestClient) -> None:
    r = c.post("/v1/sessions", json={"template": "x", "context": {"chat": "chats/a.jsonl"}})
    assert r.status_code == 422 and r.json()["diagnostics"][0]["path"] == "context.chat"
    bad_id = c.post("/v1/sessions", json={"template": "x", "session": "no/slash"})
    assert bad_id.status_code == 422


def test_concurrent_turns_of_one_session_never_interleave(c: TestClient) -> None:
    """Turns sent at once on one base: exactly one applies, the others are out of step."""
    sid, base = started(c)
    codes: list[int] = []

    def send(i: int) -> None:
        m = {"role": "user", "content": f"turn {i}"}
        codes.append(
            c.post(f"/v1/sessions/{sid}/turns", json={"base": base, "append": [m]}).status_code
        )

    threads = [threading.Thread(target=send, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200] + [409] * 5
    assert c.get(f"/v1/sessions/{sid}").json()["count"] == 2


def test_a_quick_turn_never_runs_beside_another_turn_of_its_session(c: TestClient) -> None:
    """A turn that finds its session busy (another turn holds it) is left to a worker, which
    waits for the session: it is applied after, never interleaved."""
    sid, base = started(c)
    turn = c.app.state.turns.find(sid)
    m = {"role": "user", "content": "next"}
    body = {"base": base, "append": [m]}
    with turn.lock:
        assert c.app.state.turns.quick_turn(sid, TurnIn.model_validate(body)) is None
        answered: list[Any] = []
        waiting = threading.Thread(
            target=lambda: answered.append(c.post(f"/v1/sessions/{sid}/turns", json=body))
        )
        waiting.start()
        waiting.join(0.5)
        assert not answered and c.get(f"/v1/sessions/{sid}").json()["count"] == 1
    waiting.join(30)
    assert state(answered[0]) == {
        "count": 2,
        "digest": chain([{"role": "user", "content": "Hi"}, m]),
    }


def test_a_failed_turn_s_compile_time_counts(
    c: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn whose compile failed (it changed nothing, so it can be sent again and again)
    is timed as one that succeeded: a slow failure does not keep its session on the event
    loop (:data:`QUICK_TURN_SECONDS`)."""
    sid, base = started(c)
    ticks = iter(range(1_000_000))
    monkeypatch.setattr(turns.time, "thread_time", lambda: float(next(ticks)))  # 1 s each
    bad = c.post(f"/v1/sessions/{sid}/turns", json={"base": base, "append": [{"role": "narrator"}]})
    assert bad.status_code == 422, bad.text
    good = {"base": base, "append": [{"role": "user", "content": "x"}]}
    assert c.app.state.turns.quick_turn(sid, TurnIn.model_validate(good)) is None  # a worker's
    assert state(c.post(f"/v1/sessions/{sid}/turns", json=good))["count"] == 2


@pytest.mark.parametrize(
    ("fields", "quick"),
    [
        ({}, True),
        ({"lorebooks": {"global": {"entries": {"0": {"uid": 0, "key": ["/dra+gon/"]}}}}}, False),
        ({"regexScripts": [{"scriptName": "x", "findRegex": "/a+/g", "placement": [1]}]}, False),
        ({"allowCardRegex": True}, False),
    ],
    ids=["plain", "world-info", "regex-scripts", "card-regex"],
)
def test_only_a_turn_without_text_dependent_regexes_runs_on_the_loop(
    c: TestClient, monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any], quick: bool
) -> None:
    """A turn runs on the event loop only when its session's last compile was quick and ran
    no regular expression a new message's text could make slow (world info keys, regex
    scripts), and the turn changes only the chat: the loop is never held by a crafted
    message or by a context the turn brings."""
    monkeypatch.setattr(turns, "QUICK_TURN_SECONDS", float("inf"))
    chat = [{"role": "user", "content": "Hi"}]
    template = "<<agent.world.activated>>\n<<agent.chat.history>>"
    body = {"template": template, "context": {"chat": chat, **fields}}
    r = c.post("/v1/sessions", json=body)
    assert r.status_code == 200, r.text
    sid, base = r.headers["apc-session"], state(r)
    lane = c.app.state.turns
    with_context = {"base": base, "append": [], "context": {"task": "t"}}
    assert lane.quick_turn(sid, TurnIn.model_validate(with_context)) is None
    turn = {"base": base, "append": [{"role": "user", "content": "a dragon"}]}
    got = lane.quick_turn(sid, TurnIn.model_validate(turn))
    assert (got is not None) is quick
    if got is None:  # the route runs it in a worker, the same answer
        assert state(c.post(f"/v1/sessions/{sid}/turns", json=turn))["count"] == 2


def test_sessions_are_isolated() -> None:
    with TestClient(create_app(ServeConfig()), base_url="http://localhost") as c:
        _, base_a = started(c, session="a")
        _, base_b = started(c, session="b")
        assert base_a == base_b
        c.post(
            "/v1/sessions/a/turns",
            json={"base": base_a, "append": [{"role": "user", "content": "x"}]},
        )
        assert c.get("/v1/sessions/b").json()["count"] == 1
        assert c.get("/healthz").json()["sessions"] == 2


def test_sessions_are_bounded_by_count() -> None:
    with TestClient(create_app(ServeConfig(max_sessions=2)), base_url="http://localhost") as c:
        for sid in ("a", "b", "c"):
            started(c, session=sid)
        assert c.get("/v1/sessions/a").status_code == 404  # the least recently used
        assert c.get("/v1/sessions/c").status_code == 200


def test_an_idle_session_is_dropped() -> None:
    now = [0.0]
    cache: SessionCache[str] = SessionCache(8, max_idle=30, clock=lambda: now[0])
    cache.put("a", "A", 1)
    now[0] = 20
    cache.put("b", "B", 1)
    now[0] = 40  # a: 40 s unused; b: 20 s
    assert cache.find("a") is None and cache.find("b") == "B"
    now[0] = 65  # b was used at 40
    cache.expire()
    assert len(cache) == 1 and cache.weight == 1
    now[0] = 71
    cache.expire()
    assert len(cache) == 0 and cache.weight == 0


@given(st.dictionaries(st.sampled_from(["role", "content", "name", "x"]), st.none() | st.text()))
def test_the_digest_is_of_canonical_json(message: dict[str, Any]) -> None:
    """Whichever encoder writes a message, its bytes are json's sorted compact form."""
    expected = json.dumps(message, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert canonical(message) == expected.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize(
    "chat",
    [
        [{"role": "user", "content": "a"}] * 3000,  # the most messages a byte of JSON
        [{"role": "user", "content": "the ferry creaked across the grey river " * 9}] * 300,
    ],
    ids=["tiny-messages", "ordinary-messages"],
)
def test_a_turn_session_s_weight_bounds_what_it_holds(chat: list[Any]) -> None:
    """A session's weight (what --max-session-bytes counts) is at least the memory it keeps,
    measured: what dropping it frees, after a few turns."""
    tracemalloc.start()
    try:
        with TestClient(create_app(ServeConfig()), base_url="http://localhost") as c:
            sessions = c.app.state.service.sessions
            sid, base = started(c)
            turn = {"base": base, "replaceFrom": 0, "append": chat}
            for _ in range(3):
                r = c.post(f"/v1/sessions/{sid}/turns", json=turn)
                turn = {"base": state(r), "append": [{"role": "user", "content": "b"}]}
            weight = sessions.weight
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            sessions.clear()
            gc.collect()
            held = before - tracemalloc.get_traced_memory()[0]
            assert 0 < held <= weight, (held, weight)
    finally:
        tracemalloc.stop()


def test_the_documented_python_client_works(c: TestClient) -> None:
    """The TurnClient of docs/pages/runtime/serve.md, run as written (its HTTP client the
    test's): appends, an edit, and a session the server lost are each answered as
    /v1/compile answers the whole chat."""
    page = (ROOT / "docs" / "pages" / "runtime" / "serve.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "TurnClient" in b)
    scope: dict[str, Any] = {}
    exec(code, scope)
    start = {"source": "template.txt", "options": OPTIONS, "context": run_rest()}
    client = scope["TurnClient"]("http://localhost", "documented", start)
    client.http = c
    chat = [{"role": "user", "content": f"line {i} " * 20} for i in range(12)]
    edited = [*chat[:2], {"role": "user", "content": "edited"}]
    for i, now in enumerate((chat[:3], chat[:4], edited, chat)):
        got = client.compile(now)
        full = c.post("/v1/compile", json={**start, "context": {**run_rest(), "chat": now}})
        assert got["request"] == full.json()["request"]
        assert client.base == {"count": len(now), "digest": chain(now)}
        if i == 1:
            c.delete("/v1/sessions/documented")  # lost: the next compile starts it again


def test_a_deeply_nested_message_answers_as_a_full_compile(c: TestClient) -> None:
    """A message nested as deeply as the JSON reader takes (here tool-call arguments 600
    levels deep) goes into the session's chat as it goes into /v1/compile's."""
    depth = 600
    arguments = '{"a":' * depth + "1" + "}" * depth
    call = '{"id":"c1","type":"function","function":{"name":"f","arguments":' + arguments + "}}"
    asked = '{"role":"assistant","content":"x","tool_calls":[' + call + "]}"
    answered = '{"role":"tool","tool_call_id":"c1","content":"done"}'
    sid, base = started(c)
    body = '{"base":' + json.dumps(base) + ',"append":[' + asked + "," + answered + "]}"
    r = c.post(f"/v1/sessions/{sid}/turns", content=body, headers=JSON_TYPE)
    chat = '[{"role":"user","content":"Hi"},' + asked + "," + answered + "]"
    full = c.post(
        "/v1/compile",
        content='{"template":"<<agent.chat.history>>","context":{"chat":' + chat + "}}",
        headers=JSON_TYPE,
    )
    assert r.status_code == full.status_code == 200, (r.text[:300], full.text[:300])
    assert JOURNAL_OWN.sub(b"", r.content) == JOURNAL_OWN.sub(b"", full.content)
    assert state(r)["count"] == 3


@pytest.mark.parametrize("sid", [".", ".."])
def test_a_session_id_no_url_can_name_is_invalid(c: TestClient, sid: str) -> None:
    r = c.post("/v1/sessions", json={"template": "Hi", "session": sid})
    assert r.status_code == 422
    assert r.json()["diagnostics"][0]["code"] == "serve.invalid_request"
    assert c.post("/v1/sessions", json={"template": "Hi", "session": "..."}).status_code == 200
