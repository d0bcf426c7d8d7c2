"""What a request may read and what the server keeps, in process (no server): ``--data-root``
opens the profile registry and nothing else of the data root; without ``--root``, a relative
path is a 403, not a bug; the sessions kept are bounded by their memory."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="the test extra (httpx) is not installed")

from fastapi.testclient import TestClient

from compiler.serve.app import create_app
from compiler.serve.limits import ServeConfig

PROFILE = {"id": "no-writes", "tools": {"deny": ["workspace.write_file"]}}


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    """A data root as TauriTavern's: the profile registry beside the user's secrets."""
    data = tmp_path / "data"
    profiles = data / "_tauritavern" / "agent-profiles" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "no-writes.json").write_text(json.dumps(PROFILE), "utf-8")
    (data / "secrets.json").write_text('{"api_key": "SECRET-KEY"}', "utf-8")
    (data / "story.txt").write_text("SECRET-STORY", "utf-8")
    return data


def client(config: ServeConfig) -> Iterator[TestClient]:
    with TestClient(
        create_app(config), base_url="http://localhost", raise_server_exceptions=False
    ) as c:
        yield c


@pytest.fixture
def only_data(data_root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.chdir(data_root)  # a relative path must not resolve against the cwd either
    yield from client(ServeConfig(data_root=data_root))


def code(r: Any, status: int) -> str:
    assert r.status_code == status, r.text
    found: str = r.json()["diagnostics"][0]["code"]
    assert "SECRET" not in r.text
    return found


@pytest.mark.parametrize(
    "body",
    [
        {"source": "{data}/secrets.json"},
        {"source": "{data}/story.txt"},
        {"template": "<<agent.chat.history>>", "context": "{data}/secrets.json"},
        {"template": "<<agent.chat.history>>", "context": {"chat": "{data}/story.txt"}},
    ],
)
def test_the_data_root_is_not_a_read_root(
    only_data: TestClient, data_root: Path, body: dict[str, Any]
) -> None:
    sent = json.loads(json.dumps(body).replace("{data}", str(data_root)))
    r = only_data.post("/v1/compile", json=sent)
    assert code(r, 403) == "workspace.path_denied"
    assert r.json()["diagnostics"][0]["message"].count("outside_roots") == 1


@pytest.mark.parametrize(
    "body",
    [
        {"source": "story.txt"},
        {"template": "x", "context": "secrets.json"},
    ],
)
def test_a_relative_path_without_a_root_is_refused_not_a_bug(
    only_data: TestClient, body: dict[str, Any]
) -> None:
    r = only_data.post("/v1/compile", json=body)
    assert code(r, 403) == "workspace.path_denied"
    assert "no_roots" in r.text


def test_the_registry_is_still_read(only_data: TestClient) -> None:
    body = {"template": "Hi", "options": {"profile": {"id": "no-writes"}}}
    assert only_data.post("/v1/compile", json=body).status_code == 200
    body["options"] = {"profile": {"id": "absent"}}
    assert only_data.post("/v1/compile", json=body).status_code == 422


def held_by(sessions: Any) -> int:
    """The memory only the kept sessions hold: what dropping them frees (traced)."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    sessions.clear()
    gc.collect()
    return before - tracemalloc.get_traced_memory()[0]


@pytest.mark.parametrize(
    "body",
    [
        # templates as dense with macros as they come: a parsed one holds ~60 bytes a char
        {"template": "<<agent.plan>>\n" * 800, "context": {"plan": "go"}},
        # a chat of tiny messages: the session's memo of it holds ~18 bytes a body byte
        {
            "template": "<<agent.chat.history>>",
            "context": {"chat": [{"role": "user", "content": "a"}] * 2500},
        },
    ],
    ids=["macros", "tiny-messages"],
)
def test_kept_sessions_are_bounded_by_their_memory(body: dict[str, Any]) -> None:
    """Many distinct heavy sessions cannot each be kept: the sessions kept weigh at most
    --max-session-bytes together, and their weight is an upper bound of the memory they
    really hold (measured: what dropping them frees)."""
    bound = 6 * 1024 * 1024
    tracemalloc.start()
    try:
        for c in client(ServeConfig(max_session_bytes=bound)):
            sessions = c.app.state.service.sessions  # type: ignore[attr-defined]
            for i in range(8):
                r = c.post("/v1/compile", json={**body, "caller": f"c{i}"})
                assert r.status_code == 200, r.text
            assert 2 <= len(sessions) < 8
            weight = sessions.weight
            assert weight <= bound
            held = held_by(sessions)
            assert 0 < held <= weight, (held, weight)
    finally:
        tracemalloc.stop()


def test_a_session_heavier_than_the_bound_is_used_not_kept() -> None:
    for c in client(ServeConfig(max_session_bytes=2 * 1024 * 1024)):
        body = {"template": "<<agent.plan>>\n" * 2000, "context": {"plan": "go"}}
        assert c.post("/v1/compile", json=body).status_code == 200
        assert c.get("/healthz").json()["sessions"] == 0
        for i in range(5):  # small sources: kept up to the count
            assert c.post("/v1/compile", json={"template": f"t{i}"}).status_code == 200
        assert c.get("/healthz").json()["sessions"] == 5


@pytest.mark.parametrize("token", ["é" * 16, " " + "a" * 16, "a" * 16 + "\n", "a" * 15 + "\x00"])
def test_a_token_no_client_could_send_is_a_usage_error(token: str) -> None:
    """Such a token would lock every client out (the header carries printable ASCII)."""
    problem = ServeConfig(token=token).problem()
    assert problem is not None and "--token" in problem
    assert ServeConfig(token="a" * 8 + " " + "b" * 8).problem() is None


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("attacker.example", 400),
        ("attacker.example:8765", 400),
        ("192.168.1.20:8765", 400),
        ("rebind.127.0.0.1.nip.io", 400),
        ("127.0.0.1:8765", 200),
        ("127.9.9.9", 200),
        ("[::1]:8765", 200),
        ("localhost:8765", 200),
        ("tauri.localhost", 200),
        ("localhost.", 200),
        ("LOCALHOST.:8765", 200),
        ("tauri.localhost.:8765", 200),
        ("testserver", 400),
        ("myhost:8765", 400),
        ("localhost..", 400),
        (".localhost", 400),
        ("localhost.example", 400),
        ("", 400),
    ],
)
def test_without_a_token_only_requests_for_this_machine_are_answered(
    host: str, status: int
) -> None:
    """DNS rebinding: a page whose name is re-pointed at 127.0.0.1 is same-origin with a
    loopback server and could read what it compiles from the roots (its Host gives it away).
    A single-label name is refused (a LAN machine answering such lookups could re-point it);
    the final-dot forms of loopback names are the same names."""
    for c in client(ServeConfig()):
        r = c.post("/v1/compile", json={"template": "Hi"}, headers={"Host": host})
        assert r.status_code == status, r.text
        if status == 400:
            assert code(r, 400) == "serve.bad_host"
        assert c.get("/healthz", headers={"Host": host}).status_code == status


def test_with_a_token_any_host_is_answered() -> None:
    token = "t" * 16
    for c in client(ServeConfig(host="0.0.0.0", token=token)):
        r = c.post(
            "/v1/compile",
            json={"template": "Hi"},
            headers={"Host": "compile.example.org", "Authorization": f"Bearer {token}"},
        )
        assert r.status_code == 200, r.text


def test_start_up_freezes_what_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """After loading the encodings, the server moves what start-up made out of the
    collector's way (gc.freeze): a full collection no longer walks it (pauses of up to
    30 ms in a warm turn before)."""
    import compiler.serve.app as app_module

    calls: list[str] = []
    monkeypatch.setattr(app_module.gc, "collect", lambda: calls.append("collect"))
    monkeypatch.setattr(app_module.gc, "freeze", lambda: calls.append("freeze"))
    with TestClient(
        create_app(ServeConfig()), base_url="http://localhost", raise_server_exceptions=False
    ) as c:
        assert c.get("/healthz").status_code == 200
    assert calls == ["collect", "freeze"]


@pytest.mark.parametrize(
    ("route", "body", "named"),
    [
        ("/v1/compile", {"source": "t.txt"}, "t.txt:1:1"),
        ("/v1/compile", {"source": "sub/t.txt", "context": "sub/run.json"}, "sub/missing.jsonl"),
        ("/v1/compile", {"source": "nope.txt"}, "file not found: nope.txt"),
        ("/v1/compile", {"template": "x", "context": {"chat": "no.jsonl"}}, "no.jsonl"),
        ("/v1/compile", {"template": "x", "context": "sub/none.json"}, "sub/none.json"),
        ("/v1/compile", {"source": "../out.txt"}, "'../out.txt' denied"),
        ("/v1/explain", {"source": "t.txt"}, "t.txt:1:1"),
        ("/v1/check", {"source": "bad.txt"}, '"file":"bad.txt"'),
    ],
)
def test_answers_name_files_as_the_client_named_them(
    tmp_path: Path, route: str, body: dict[str, Any], named: str
) -> None:
    """A file named relative to the first root is named so in the ledger, the events and the
    diagnostics: the server's own directory never shows in an answer."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    for where in (root, root / "sub"):
        (where / "t.txt").write_text("Hello <<agent.chat.history>>", "utf-8")
    (root / "bad.txt").write_text("<<agent.nope>>", "utf-8")
    (root / "sub" / "run.json").write_text('{"chat": "missing.jsonl"}', "utf-8")
    (tmp_path / "out.txt").write_text("x", "utf-8")
    for c in client(ServeConfig(roots=(root.resolve(),))):
        r = c.post(route, json=body, headers={"Host": "localhost"})
        assert named in r.text, r.text
        assert str(tmp_path) not in r.text, r.text


def test_a_budget_check_reads_its_source_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget set-up is checked on the source the check read, not on a second read of
    the file (which might have changed in between)."""
    from compiler.serve import service

    (tmp_path / "t.txt").write_text("Hello <<agent.chat.history>>", "utf-8")
    reads: list[Path] = []

    def counted(path: Path, name: str | None = None) -> Any:
        reads.append(path)
        return read(path, name)

    read = service.read_source
    monkeypatch.setattr(service, "read_source", counted)
    for c in client(ServeConfig(roots=(tmp_path.resolve(),))):
        body = {"source": "t.txt", "context": {"chat": []}, "options": {"budget": 1000}}
        r = c.post("/v1/check", json=body, headers={"Host": "localhost"})
        assert r.status_code == 200 and r.json()["ok"] is True, r.text
    assert len(reads) == 1


def test_a_check_reports_what_reading_its_context_file_found(tmp_path: Path) -> None:
    """A RUN.json the check reads (a lone surrogate repaired) warns as ``apc check
    --context`` and ``POST /v1/compile`` do: under ``strict`` the check is not ok."""
    run = tmp_path / "run.json"
    run.write_text('{"chat": [{"role": "user", "content": "hi \\ud83d there"}]}', "utf-8")
    body: dict[str, Any] = {"template": "Hi <<agent.chat.history>>", "context": "run.json"}
    for c in client(ServeConfig(roots=(tmp_path.resolve(),))):
        for strict in (False, True):
            options = {"model": "gpt-4o", "strict": strict}
            r = c.post("/v1/check", json={**body, "options": options})
            assert r.status_code == 200, r.text
            found = r.json()["diagnostics"]
            assert [d["code"] for d in found] == ["context.lone_surrogate"]
            assert found[0]["file"] == "run.json" and r.json()["ok"] is not strict
