"""``apc serve`` compiles for an OpenAI-compatible server: ``max_tokens`` as asked (no model
table, no warning), the budget the caller's; without a model, a 422 with the code."""

from __future__ import annotations

from typing import Any

from tests.serve.server import LOOPBACK, Server

pytestmark = LOOPBACK

CHAT = {"chat": [{"role": "user", "content": "Tell me a story."}]}
TEMPLATE = "You are a storyteller.\n<<agent.chat.history>>"


def compile_(server: Server, **options: Any) -> Any:
    return server.post("/v1/compile", {"template": TEMPLATE, "context": CHAT, "options": options})


def test_compile_for_an_openai_compatible_server(server: Server) -> None:
    r = compile_(
        server,
        provider="openai-compatible",
        model="my-local-model",
        maxOutputTokens=100_000,
        budget=2_000,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["request"]["max_tokens"] == 100_000
    assert body["request"]["messages"][0]["role"] == "system"
    assert body["warnings"] == []
    assert body["ledger"]["budget"] == 2_000 and body["ledger"]["encoding"] == "cl100k_base"


def test_without_a_model_it_is_a_422_with_the_code(server: Server) -> None:
    r = compile_(server, provider="openai-compatible")
    assert r.status_code == 422, r.text
    assert r.json()["diagnostics"][0]["code"] == "lower.model_required"
