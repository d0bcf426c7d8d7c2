"""Every error class of ``apc serve`` with its status and code, against the real server;
a bug is a 500 with no traceback in the body; the safe defaults of the command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from tests.serve.server import LOOPBACK, WRITER, Server, httpx, running, slow_body, start

pytestmark = LOOPBACK


def diagnostic(r: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    found: dict[str, Any] = r.json()["diagnostics"][0]
    assert found["code"] == code, r.text
    # the one diagnostic shape: what `apc ... --format json` writes
    assert list(found) == [
        "severity",
        "code",
        "message",
        "file",
        "line",
        "column",
        "endLine",
        "endColumn",
        "path",
        "hint",
    ]
    return found


def test_400_a_body_that_is_not_strict_json(guarded: Server) -> None:
    with guarded.client() as c:
        r = c.post(
            "/v1/compile", content=b'{"template": "x"', headers={"content-type": "application/json"}
        )
        diagnostic(r, 400, "context.invalid_json")
        nan = b'{"template": "x", "options": {"temperature": NaN}}'
        r = c.post("/v1/compile", content=nan, headers={"content-type": "application/json"})
        diagnostic(r, 400, "context.invalid_json")


def test_401_without_the_token_except_healthz(guarded: Server) -> None:
    r = httpx.post(guarded.url + "/v1/compile", json={"template": "x"})
    diagnostic(r, 401, "serve.unauthorized")
    assert r.headers["www-authenticate"] == "Bearer"
    wrong = {"Authorization": "Bearer not-the-token"}
    diagnostic(httpx.get(guarded.url + "/openapi.json", headers=wrong), 401, "serve.unauthorized")
    assert httpx.get(guarded.url + "/healthz").status_code == 200


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"source": "/etc/hostname"}, "outside_roots"),
        ({"source": "../outside/secret.txt"}, "outside_roots"),
        ({"source": "link.txt"}, "symlink"),
        ({"source": "hard.txt"}, "hardlink"),
        ({"template": "x", "context": {"chat": "/etc/hostname"}}, "outside_roots"),
        ({"template": "x", "context": {"character": "link.txt"}}, "symlink"),
        ({"template": "x", "context": "/etc/hostname"}, "outside_roots"),
    ],
)
def test_403_paths_outside_the_roots(guarded: Server, body: dict[str, Any], reason: str) -> None:
    found = diagnostic(guarded.post("/v1/compile", body), 403, "workspace.path_denied")
    assert f"({reason})" in found["message"]
    assert "the secret" not in found["message"]


def test_404_405(guarded: Server) -> None:
    with guarded.client() as c:
        diagnostic(c.get("/v2/compile"), 404, "serve.not_found")
        diagnostic(c.get("/docs"), 404, "serve.not_found")
        diagnostic(c.get("/v1/compile"), 405, "serve.method_not_allowed")


def test_413_body_and_context_over_their_limits(guarded: Server) -> None:
    with guarded.client() as c:
        r = c.post(
            "/v1/compile", content=b"x" * 8_000_001, headers={"content-type": "application/json"}
        )
        diagnostic(r, 413, "serve.body_too_large")
    context = {"chat": [{"role": "user", "content": "y" * 1000}] * 6500}
    diagnostic(
        guarded.post("/v1/compile", {"template": "x", "context": context}),
        413,
        "serve.context_too_large",
    )


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"template": "x", "preset": {"prompts": []}}, "serve.invalid_request"),
        ({"template": "x", "frobnicate": 1}, "serve.invalid_request"),
        ({"template": "x", "options": {"budget": -1}}, "serve.invalid_request"),
        ({"template": '<<agent.fiel "output/a.md">>'}, "template.unknown_macro"),
        ({"source": "missing.txt"}, "context.file_not_found"),
        ({"preset": {"no": "prompts"}}, "context.invalid_preset"),
        ({"template": "x", "context": {"chat": 3}}, "context.invalid_context"),
        ({"template": "x", "options": {"provider": "nope"}}, "lower.unknown_provider"),
        ({"template": "x " * 500, "options": {"budget": 20}}, "context.budget_exceeded"),
    ],
)
def test_422_bad_input_with_the_cli_codes(guarded: Server, body: dict[str, Any], code: str) -> None:
    diagnostic(guarded.post("/v1/compile", body), 422, code)


def test_422_points_at_the_field(guarded: Server) -> None:
    found = diagnostic(
        guarded.post("/v1/compile", {"template": "x", "options": {"budget": -1}}),
        422,
        "serve.invalid_request",
    )
    assert found["path"] == "options.budget"


def test_503_over_the_time_limit_from_the_command_line() -> None:
    """``--timeout`` end to end: a compile that takes seconds against a limit of 0.5 s (a
    machine many times faster than any CI would be needed for it to finish in time)."""
    slow = slow_body(20_000, "slow")  # seconds of compiling
    server = start("--timeout", "0.5")
    with running(server):
        diagnostic(server.post("/v1/compile", slow), 503, "serve.compile_timeout")
        assert httpx.get(server.url + "/healthz", timeout=60).status_code == 200


def test_503_over_the_time_limit_and_the_worker_stays_healthy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Deterministic: the compile cannot end before the test lets it, so the answer is the
    timeout whatever the machine's load; the other workers keep serving meanwhile."""
    import threading

    from starlette.testclient import TestClient

    from compiler.serve.app import create_app
    from compiler.serve.limits import ServeConfig
    from compiler.serve.models import CompileIn

    app = create_app(ServeConfig(compile_timeout=0.2, workers=2))
    service = app.state.service
    done = service.compile(CompileIn(template="Still here."))  # compiled outside the pool
    release = threading.Event()
    real = service.compile

    def compile(body: Any, *args: Any) -> Any:
        if body.template == "block":
            assert release.wait(60), "the test never released the compile"  # hang guard
            return real(body, *args)
        return done

    monkeypatch.setattr(service, "compile", compile)
    with TestClient(app, base_url="http://localhost") as client:
        try:
            r = client.post("/v1/compile", json={"template": "block"})
            diagnostic(r, 503, "serve.compile_timeout")
            assert not release.is_set()  # answered while the compile still ran
            assert client.get("/healthz").status_code == 200
            ok = client.post("/v1/compile", json={"template": "Still here."})
            assert ok.status_code == 200, ok.text
            assert ok.json()["request"]["messages"][0]["content"] == "Still here."
        finally:
            release.set()


def test_500_for_a_bug_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.testclient import TestClient

    from compiler.serve.app import create_app
    from compiler.serve.limits import ServeConfig

    app = create_app(ServeConfig())

    def broken(*_: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(app.state.service, "compile", broken)
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        r = client.post("/v1/compile", json={"template": "x"})
    found = diagnostic(r, 500, "serve.internal_error")
    assert "secret internals" not in r.text and "Traceback" not in r.text
    assert found["file"] is None and found["line"] is None and found["path"] is None


def test_503_busy_past_the_pending_bound() -> None:
    import asyncio

    from compiler.errors import APCError
    from compiler.serve.app import Pool
    from compiler.serve.limits import ServeConfig

    pool = Pool(ServeConfig(max_pending=0))
    with pytest.raises(APCError) as exc:
        asyncio.run(pool.run(lambda: 1))
    assert exc.value.code == "serve.busy"
    pool.executor.shutdown()


def test_the_openapi_document_says_the_token_is_needed(guarded: Server) -> None:
    with guarded.client() as c:
        doc = c.get("/openapi.json").json()
    assert doc["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    assert doc["security"] == [{"bearer": []}]
    assert doc["paths"]["/healthz"]["get"]["security"] == []


def test_profiles_by_id_and_inline_layers_as_the_cli(
    guarded: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    template = "You write.\n<<agent.tools.available>>\n<<agent.chat.history>>\n"
    run = json.loads((WRITER / "run.json").read_text(encoding="utf-8"))
    del run["workspace"]
    user = {"tools": {"deny": ["workspace.finish"]}}
    (tmp_path / "t.txt").write_text(template, encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    (tmp_path / "user.json").write_text(json.dumps(user), encoding="utf-8")
    profile = {"id": "no-writes", "user": user}
    r = guarded.post(
        "/v1/compile", {"template": template, "context": run, "options": {"profile": profile}}
    )
    assert r.status_code == 200, r.text
    names = [t["function"]["name"] for t in r.json()["request"]["tools"]]
    assert "workspace_read_file" in names  # the profile denies writes, the user layer finish
    assert "workspace_write_file" not in names and "workspace_finish" not in names
    capsys.readouterr()
    data_root = Path(guarded.proc.args[guarded.proc.args.index("--data-root") + 1])  # type: ignore[union-attr]
    assert main([
        "compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json"),
        "--profile", "no-writes", "--data-root", str(data_root),
        "--user", str(tmp_path / "user.json"),
    ]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == r.json()["request"]
    missing = guarded.post(
        "/v1/compile", {"template": template, "options": {"profile": {"id": "nope"}}}
    )
    assert missing.json()["diagnostics"][0]["code"] == "agent.profile_not_found"


def test_503_busy_when_the_bodies_in_flight_hold_too_much() -> None:
    from starlette.responses import PlainTextResponse
    from starlette.testclient import TestClient

    from compiler.serve.guard import Guard

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body = (await receive())["body"]
        await PlainTextResponse(f"{len(body)} {guard.held}")(scope, receive, send)

    guard = Guard(app, token=None, max_body_bytes=100, max_held_bytes=150)
    client = TestClient(guard, base_url="http://localhost")  # no lifespan to run
    assert client.post("/", content=b"x" * 100).text == "100 100"  # held while answered
    assert guard.held == 0
    guard.held = 120  # as if other requests held their bodies
    diagnostic(client.post("/", content=b"x" * 50), 503, "serve.busy")
    assert guard.held == 120
    diagnostic(client.post("/", content=b"x" * 101), 413, "serve.body_too_large")
