"""What every provider dialect offers: lowering, an exact cost model, and a shape check."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from compiler.errors import LoweringError, did_you_mean
from compiler.frame import ContextFrame, Message, ToolSpec
from compiler.tokens import TokenCounter

ModelRequest = dict[str, Any]

#: provider name -> module under compiler.lower that defines ``DIALECT``.
PROVIDERS: dict[str, str] = {"openai": "openai_chat"}


class Dialect(ABC):
    """A provider's request format. Subclasses set ``name`` and implement the methods."""

    name: ClassVar[str]

    @abstractmethod
    def lower(self, frame: ContextFrame, model: str, **options: Any) -> ModelRequest:
        """The provider's JSON body for the frame (not yet shape-checked: see ``check``)."""

    @abstractmethod
    def count_request(self, request: ModelRequest, counter: TokenCounter) -> int:
        """Input tokens the provider will count for ``request``."""

    @abstractmethod
    def message_tokens(self, message: Message, counter: TokenCounter) -> int:
        """What one history message adds to the request's count."""

    @abstractmethod
    def tools_tokens(self, tools: list[ToolSpec], counter: TokenCounter) -> int:
        """What the tool definitions add to the request's count."""

    @abstractmethod
    def check(self, request: ModelRequest) -> None:
        """Raise LoweringError when the provider would reject ``request``."""


def get_dialect(provider: str) -> Dialect:
    """The dialect of a provider name, or ``lower.unknown_provider`` with a did-you-mean."""
    module = PROVIDERS.get(provider)
    if module is None:
        raise LoweringError(
            code="lower.unknown_provider",
            message=f"unknown provider '{provider}'",
            hint=did_you_mean(provider, PROVIDERS.keys()) or f"known: {', '.join(PROVIDERS)}",
        )
    dialect: Dialect = importlib.import_module(f"compiler.lower.{module}").DIALECT
    return dialect


def layout(frame: ContextFrame) -> tuple[list[Message], list[ToolSpec]]:
    """The frame as provider-neutral messages in order, plus its tool definitions.

    Inline components of the same group and role join into one message (their text kept as
    written, the message's outer whitespace trimmed; whitespace-only messages vanish).
    ChatHistory and ToolResults are message boundaries: their messages stand at their
    position, so text before and after them never merges.
    """
    from compiler.frame import MESSAGE_KINDS, ComponentKind

    messages: list[Message] = []
    tools: list[ToolSpec] = []
    parts: list[str] = []
    current: tuple[int, str] | None = None

    def flush() -> None:
        nonlocal current
        if current is not None:
            text = "".join(parts).strip()
            if text:
                messages.append({"role": current[1], "content": text})  # type: ignore[typeddict-item]
        parts.clear()
        current = None

    for comp in frame.components:
        if comp.kind in MESSAGE_KINDS:
            flush()
            messages.extend(comp.messages or ())
        elif comp.kind == ComponentKind.TOOL_DEFINITIONS:
            tools.extend(comp.tools or ())
        elif comp.inline_content:
            key = (comp.group, comp.role)
            if key != current:
                flush()
                current = key
            parts.append(comp.inline_content)
    flush()
    return messages, tools
