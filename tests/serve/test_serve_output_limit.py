"""``apc serve``: a response length over the model's maximum is clamped, with the warning in
the JSON answer; with ``strict`` it is a 422 with the code; an unknown model's is sent as
asked, with its warning."""

from __future__ import annotations

from typing import Any

from tests.serve.server import LOOPBACK, Server

pytestmark = LOOPBACK

CHAT = {"chat": [{"role": "user", "content": "Tell me a story."}]}
TEMPLATE = "You are a storyteller.\n<<agent.chat.history>>"


def compile_(server: Server, **options: Any) -> Any:
    return server.post("/v1/compile", {"template": TEMPLATE, "context": CHAT, "options": options})


def test_compile_clamps_with_the_warning_in_the_answer(server: Server) -> None:
    r = compile_(server, model="gpt-4o", maxOutputTokens=100_000)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["request"]["max_completion_tokens"] == 16_384
    assert [w["code"] for w in body["warnings"]] == ["lower.output_clamped"]
    assert body["warnings"][0]["severity"] == "warning"
    assert body["ledger"]["budget"] == 128_000 - 16_384
    claude = compile_(
        server, provider="anthropic", model="claude-3-haiku-20240307", maxOutputTokens=100_000
    ).json()
    assert claude["request"]["max_tokens"] == 4_096
    assert [w["code"] for w in claude["warnings"]] == ["lower.output_clamped"]


def test_strict_is_a_422_with_the_code(server: Server) -> None:
    r = compile_(server, model="gpt-4o", maxOutputTokens=100_000, strict=True)
    assert r.status_code == 422, r.text
    assert r.json()["diagnostics"][0]["code"] == "lower.output_clamped"


def test_an_unknown_model_is_sent_as_asked_with_a_warning(server: Server) -> None:
    r = compile_(server, provider="gemini", model="gemini-9", maxOutputTokens=100_000)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["request"]["generationConfig"]["maxOutputTokens"] == 100_000
    assert [w["code"] for w in body["warnings"]] == ["lower.unknown_output_limit"]


def test_check_with_a_budget_option_reports_the_clamp(server: Server) -> None:
    r = server.post(
        "/v1/check",
        {
            "template": TEMPLATE,
            "context": CHAT,
            "options": {"model": "gpt-4o", "maxOutputTokens": 100_000},
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True
    assert [d["code"] for d in r.json()["diagnostics"]] == ["lower.output_clamped"]


def test_check_with_a_budget_reports_a_preset_warning_once(server: Server) -> None:
    """The budget check compiles the preset again: its warnings are not said twice."""
    preset = {"prompts": [{"identifier": "main", "content": "Hi."}]}
    r = server.post(
        "/v1/check",
        {"preset": preset, "context": CHAT, "options": {"mode": "agent", "budget": 3000}},
    )
    assert r.status_code == 200, r.text
    found = [d["code"] for d in r.json()["diagnostics"]]
    assert found == ["agent.prompt_entry_inserted"] * 3
