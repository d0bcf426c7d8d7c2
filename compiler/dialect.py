"""The provider dialect interface: what the fit stage counts with and each
``compiler.lower.<provider>`` module implements.

Internal: the public name is :class:`compiler.lower.Dialect`.

It sits below both stages, so that fit (which must count the request the provider will see)
never imports the lower stage, and the lower stage never imports fit; the public API hands
fit the dialect :func:`compiler.lower.get_dialect` found.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from compiler.frame import ContextFrame, Message, ToolSpec
from compiler.tokens import TokenCounter

ModelRequest = dict[str, Any]
"""A provider request body, ready for JSON."""


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
