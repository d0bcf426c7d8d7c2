"""``apc serve`` started for real: its answers are ``apc compile``'s, ``apc explain``'s,
``apc check``'s and ``apc schema``'s for the same inputs, warm sessions, concurrency, SIGTERM."""

from __future__ import annotations

import json
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.cli.commands._common import dumps  # how apc compile prints the request
from compiler.cli.commands.schema import SCHEMAS
from tests.serve.server import LOOPBACK, WRITER, Server, long_chat, running, slow_body, start

pytestmark = LOOPBACK

from tests.serve.conftest import CORPUS  # noqa: E402

ST_DEFAULT = CORPUS / "presets" / "st-default-2024.json"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def run_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WRITER / "run.json").read_text(encoding="utf-8"))
    return data


def test_compile_is_apc_compile_byte_for_byte(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    r = server.post("/v1/compile", {"source": "template.txt", "context": "run.json"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"request", "ledger", "warnings", "events", "worldInfoState", "tools"}
    assert body["worldInfoState"] is None  # the example has no timed world info
    printed = cli(
        capsys, "compile", str(WRITER / "template.txt"), "--context", str(WRITER / "run.json")
    )
    assert dumps(body["request"]) == printed
    assert body["events"][0]["type"] == "context_assembly_started"


def test_inline_source_and_context_with_options(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    options = {"provider": "anthropic", "budget": 3000, "maxOutputTokens": 500, "cacheStable": 8}
    r = server.post(
        "/v1/compile",
        {
            "template": (WRITER / "template.txt").read_text(encoding="utf-8"),
            "context": run_json(),  # its workspace path resolves under the first root
            "options": options,
        },
    )
    assert r.status_code == 200, r.text
    printed = cli(
        capsys,
        "compile",
        str(WRITER / "template.txt"),
        "--context",
        str(WRITER / "run.json"),
        *("--provider", "anthropic", "--budget", "3000", "--max-output-tokens", "500"),
        *("--cache-stable", "8"),
    )
    assert dumps(r.json()["request"]) == printed


def test_a_sillytavern_preset_from_the_corpus(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    if not ST_DEFAULT.is_file():
        pytest.skip(f"corpus preset not found at {ST_DEFAULT}")
    context = str(WRITER / "run.json")
    options = {"model": "gpt-4o-mini", "budget": 6000, "mode": "legacy", "cacheStable": True}
    r = server.post(
        "/v1/compile", {"source": str(ST_DEFAULT), "context": context, "options": options}
    )
    assert r.status_code == 200, r.text
    printed = cli(
        capsys,
        *("compile", str(ST_DEFAULT), "--context", context, "--model", "gpt-4o-mini"),
        *("--budget", "6000", "--mode", "legacy", "--cache-stable"),
    )
    assert dumps(r.json()["request"]) == printed
    inline = json.loads(ST_DEFAULT.read_text(encoding="utf-8"))
    r2 = server.post("/v1/compile", {"preset": inline, "context": context, "options": options})
    assert r2.status_code == 200, r2.text
    assert r2.json()["request"] == r.json()["request"]


def test_explain_is_apc_explain_json(
    server: Server, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    r = server.post(
        "/v1/explain",
        {"source": "template.txt", "context": "run.json", "options": {"budget": 2500}},
    )
    assert r.status_code == 200, r.text
    monkeypatch.chdir(WRITER)  # the files named as the request names them
    printed = cli(
        capsys,
        *("explain", "template.txt", "--context", "run.json"),
        *("--budget", "2500", "--format", "json"),
    )
    assert {**r.json()["ledger"], "worldInfo": r.json()["worldInfo"]} == json.loads(printed)


def test_check(server: Server) -> None:
    good = server.post("/v1/check", {"source": "template.txt"})
    assert good.status_code == 200 and good.json() == {"ok": True, "diagnostics": []}
    bad = server.post("/v1/check", {"template": 'hi <<agent.fiel "output/main.md">>'}).json()
    assert bad["ok"] is False
    d = bad["diagnostics"][0]
    assert d["code"] == "template.unknown_macro"
    assert d["line"] == 1 and d["column"] == 4
    assert "agent.file" in d["hint"]
    tight = server.post(
        "/v1/check",
        {
            "source": "template.txt",
            "context": "run.json",
            "options": {"model": "gpt-4o", "maxOutputTokens": 1, "reserve": 127990},
        },
    ).json()
    assert tight["ok"] is False
    assert [d["code"] for d in tight["diagnostics"]] == ["context.budget_infeasible"]


def test_a_strict_check_of_the_budget_is_apc_check_strict(
    server: Server, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``strict`` promotes the check's findings; it never makes the budget check's own
    unbounded compile report a budget over the window."""
    options = {"budget": 100, "strict": True}
    r = server.post(
        "/v1/check", {"source": "template.txt", "context": "run.json", "options": options}
    )
    assert r.status_code == 200, r.text
    monkeypatch.chdir(WRITER)
    capsys.readouterr()
    args = ["check", "template.txt", "--context", "run.json", "--budget", "100", "--strict"]
    assert main([*args, "--format", "json"]) == 1
    assert r.json() == {"ok": False, "diagnostics": json.loads(capsys.readouterr().err)}
    assert [d["code"] for d in r.json()["diagnostics"]] == ["context.budget_infeasible"]


def test_schemas_health_and_openapi(server: Server) -> None:
    with server.client() as c:
        for name, make in SCHEMAS.items():
            assert c.get(f"/v1/schema/{name}").json() == make()
        assert c.get("/healthz").json()["status"] == "ok"
        doc = c.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert {"/v1/compile", "/v1/explain", "/v1/check", "/v1/schema/{name}", "/healthz"} <= set(
        doc["paths"]
    )
    body = doc["paths"]["/v1/compile"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": "#/components/schemas/CompileIn"}


def test_turns_of_one_chat_share_a_session_and_callers_do_not(server: Server) -> None:
    def sessions() -> int:
        with server.client() as c:
            n: int = c.get("/healthz").json()["sessions"]
            return n

    body: dict[str, Any] = {"template": "Be brief.\n<<agent.chat.history>>", "caller": "turns"}
    chat = long_chat(40, seed=3)
    before = sessions()
    for turn in range(3):
        assert (
            server.post("/v1/compile", {**body, "context": {"chat": chat[: 30 + turn]}}).status_code
            == 200
        )
    assert sessions() == before + 1
    assert (
        server.post(
            "/v1/compile", {**body, "caller": "other", "context": {"chat": chat}}
        ).status_code
        == 200
    )
    assert sessions() == before + 2


def test_64_concurrent_requests_answer_as_serial_ones(server: Server) -> None:
    chat = long_chat(300, seed=5)
    bodies = [
        {"source": "template.txt", "context": "run.json"},
        {
            "template": "You narrate.\n<<agent.chat.history>>",
            "context": {"chat": chat},
            "options": {"budget": 3000},
        },
        {
            "template": "You narrate.\n<<agent.chat.history>>",
            "context": {"chat": chat[:200]},
            "options": {"budget": 2000, "cacheStable": True},
        },
        {"template": "Short.", "options": {"provider": "gemini"}},
    ]

    def answer(body: dict[str, Any]) -> tuple[int, Any, Any]:
        r = client.post("/v1/compile", json=body)
        data = r.json()
        return r.status_code, data.get("request"), data.get("ledger")

    with server.client(limits=__import__("httpx").Limits(max_connections=64)) as client:
        serial = [answer(b) for b in bodies]
        with ThreadPoolExecutor(64) as pool:
            concurrent = list(pool.map(answer, [bodies[i % len(bodies)] for i in range(64)]))
    assert all(s[0] == 200 for s in serial)
    assert concurrent == [serial[i % len(bodies)] for i in range(64)]


def test_sigterm_drains_in_flight_requests() -> None:
    body = slow_body(6000, "drain")  # a second or more of compiling: still running at 0.3 s
    server = start()
    with running(server):
        answers: list[tuple[int, float]] = []

        def send() -> None:
            status = server.post("/v1/compile", body).status_code
            answers.append((status, time.monotonic()))

        sent = threading.Thread(target=send)
        sent.start()
        time.sleep(0.3)  # the request is read and compiling
        started = time.monotonic()
        code = server.terminate()
        ended = time.monotonic()
        sent.join(30)
    assert [status for status, _ in answers] == [200]
    assert answers[0][1] > started  # answered after the signal: drained, not refused
    assert code == -signal.SIGTERM  # uvicorn re-raises the signal once drained
    assert ended - started < 8


def test_a_lone_surrogate_in_the_body_is_replaced_and_reported(server: Server) -> None:
    raw = b'{"template": "cut \\ud83d"}'
    with server.client() as c:
        r = c.post("/v1/compile", content=raw, headers={"content-type": "application/json"})
        strict = raw[:-1] + b', "options": {"strict": true}}'
        refused = c.post(
            "/v1/compile", content=strict, headers={"content-type": "application/json"}
        )
    assert r.status_code == 200, r.text
    assert r.json()["request"]["messages"][0]["content"] == "cut \ufffd"
    assert [w["code"] for w in r.json()["warnings"]] == ["context.lone_surrogate"]
    assert refused.status_code == 422
    assert refused.json()["diagnostics"][0]["code"] == "context.lone_surrogate"


def test_a_real_card_and_lorebook_from_the_corpus(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card, world = CORPUS / "cards" / "Seraphina-v2v3.png", CORPUS / "worlds" / "Eldoria.json"
    if not (ST_DEFAULT.is_file() and card.is_file() and world.is_file()):
        pytest.skip(f"corpus files not found under {CORPUS}")
    chat = [
        {"role": "user", "name": "Sam", "content": "Where are we? Tell me about Eldoria."},
        {
            "role": "assistant",
            "content": "The forest glade is quiet; Eldoria's old roads lie north.",
        },
        {"role": "user", "name": "Sam", "content": "Then we go north, past the river."},
    ]
    context = {"chat": chat, "character": str(card), "worldInfo": str(world)}
    (tmp_path / "run.json").write_text(json.dumps(context), encoding="utf-8")
    options = {"mode": "legacy", "budget": 8000}
    r = server.post(
        "/v1/compile", {"source": str(ST_DEFAULT), "context": context, "options": options}
    )
    assert r.status_code == 200, r.text
    printed = cli(
        capsys,
        *("compile", str(ST_DEFAULT), "--context", str(tmp_path / "run.json")),
        *("--mode", "legacy", "--budget", "8000"),
    )
    assert dumps(r.json()["request"]) == printed
    assert "Seraphina" in printed


def test_the_world_info_state_comes_back_for_the_next_turn(server: Server) -> None:
    book = {"entries": {"0": {"uid": 0, "key": ["dragon"], "content": "DRAGON-LORE", "sticky": 3}}}
    context: dict[str, Any] = {
        "chat": [{"role": "user", "content": "a dragon!"}],
        "lorebooks": {"global": book},
        "worldInfoSettings": {"world_info_depth": 1},
    }
    body = {"template": "<<agent.world.activated>>\n<<agent.chat.history>>", "context": context}
    first = server.post("/v1/compile", body).json()
    state = first["worldInfoState"]
    assert state and list(state["sticky"]) and "DRAGON-LORE" in json.dumps(first["request"])
    context["chat"] += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "?"}]
    context["timedWorldInfo"] = state  # sticky: still there with no dragon in the message
    second = server.post("/v1/compile", body).json()
    assert "DRAGON-LORE" in json.dumps(second["request"])
    del context["timedWorldInfo"]
    assert "DRAGON-LORE" not in json.dumps(server.post("/v1/compile", body).json()["request"])


def test_a_budget_check_without_a_context_counts_the_source_alone(server: Server) -> None:
    """As ``apc check --budget``: no empty run context, so no ``context.empty_chat`` or
    ``context.no_character`` of a context the client never sent."""
    preset = {"prompts": [{"identifier": "main", "content": "Hi {{char}}."}]}
    options = {"model": "gpt-4o", "budget": 1_000_000}
    r = server.post("/v1/check", {"preset": preset, "name": "p.json", "options": options})
    assert r.status_code == 200, r.text
    assert [d["code"] for d in r.json()["diagnostics"]] == ["context.budget_over_window"]
