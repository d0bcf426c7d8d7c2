"""Review: a tool-call id ending in a newline is not one Anthropic takes (``[a-zA-Z0-9_-]+``
held with ``re.match`` and ``$`` let a final ``\\n`` by: the request went out and Anthropic
answered 400)."""

from __future__ import annotations

import re

import pytest

import compiler
from compiler.errors import LoweringError
from compiler.providers import get_dialect
from tests.providers.frames import TOOLS

TEMPLATE = "S <<agent.tools.available>><<agent.chat.history>>"
RULE = re.compile(r"[a-zA-Z0-9_-]+")


@pytest.mark.parametrize("call_id", ["c1\n", "call_1\n"])
def test_an_id_ending_in_a_newline_is_sent_as_one_anthropic_takes(call_id: str) -> None:
    chat = [
        {"role": "user", "content": "Roll."},
        {
            "role": "assistant",
            "content": None,
            "toolCalls": [{"id": call_id, "name": "dice.roll", "arguments": {"sides": 6}}],
        },
        {"role": "tool", "toolCallId": call_id, "content": "4"},
        {"role": "user", "content": "Thanks."},
    ]
    result = compiler.compile_string(
        TEMPLATE, context={"chat": chat, "tools": TOOLS}, provider="anthropic"
    )
    blocks = [b for m in result.request["messages"] for b in m["content"]]
    use = next(b for b in blocks if b["type"] == "tool_use")
    answer = next(b for b in blocks if b["type"] == "tool_result")
    assert RULE.fullmatch(use["id"]), use["id"]
    assert answer["tool_use_id"] == use["id"]


def test_the_check_refuses_an_id_ending_in_a_newline() -> None:
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "Roll."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c1\n", "name": "roll", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1\n"}]},
        ],
    }
    with pytest.raises(LoweringError):
        get_dialect("anthropic").check(request)
