"""A third-party dialect as an installed package would ship one: a made-up provider "echo"
whose request is the model and its [role, text] turns. The registry's tests load it through
an ``agent_prompt_compiler.providers`` entry point, never by importing it themselves."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import ClassVar

from compiler._base.frame import ContextFrame, Message, ToolSpec
from compiler._base.tokens import TokenCounter
from compiler.errors import Diagnostic, LoweringError
from compiler.providers import Dialect, LoweringOptions
from compiler.providers.dialect import NO_OPTIONS, ModelRequest
from compiler.providers.layout import layout


def _turn(message: Message) -> list[str]:
    return [message["role"], message.get("content") or ""]


class EchoDialect(Dialect):
    """The echo provider: turns, tool names, and a max_tokens."""

    name: ClassVar[str] = "echo"
    default_model: ClassVar[str] = "echo-1"
    windows: ClassVar[Mapping[str, int]] = {"echo-1": 4096, "echo-2": 8192}
    preset_model_key: ClassVar[str | None] = "echo_model"
    estimate_encoding: ClassVar[str | None] = "o200k_base"

    def lower(
        self,
        frame: ContextFrame,
        model: str,
        options: LoweringOptions = NO_OPTIONS,
        report: list[Diagnostic] | None = None,
    ) -> ModelRequest:
        messages, tools = layout(frame)
        body: ModelRequest = {"model": model, "turns": [_turn(m) for m in messages]}
        if tools:
            body["tools"] = [t["name"] for t in tools]
        if options.max_output_tokens is not None:
            body["max_tokens"] = options.max_output_tokens
        return body

    def count_request(self, request: ModelRequest, counter: TokenCounter) -> int:
        return counter.count(json.dumps(request))

    def message_tokens(self, message: Message, counter: TokenCounter) -> int:
        return counter.count(json.dumps(_turn(message)))

    def tools_tokens(self, tools: list[ToolSpec], counter: TokenCounter) -> int:
        return counter.count(json.dumps([t["name"] for t in tools]))

    def check(self, request: ModelRequest) -> None:
        if not request.get("turns"):
            raise LoweringError(code="lower.empty_request", message="echo: no turns")


ECHO = EchoDialect()
