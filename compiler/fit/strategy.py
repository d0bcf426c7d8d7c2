"""What each component may do over budget: its strategy, and the floor of a frame (what is
left when everything that can be cut is cut).

Internal: ``compiler.fit`` exports what is public.
"""

from __future__ import annotations

from compiler.dialect import Dialect
from compiler.frame import Component, ComponentKind, ContextFrame, Strategy
from compiler.tokens import TokenCounter

#: Kinds kept whole unless the author gives them a strategy.
ALWAYS_KEPT = frozenset(
    {ComponentKind.SYSTEM_INSTRUCTION, ComponentKind.PRESET_GUIDE, ComponentKind.TOOL_DEFINITIONS}
)


def effective_strategy(comp: Component) -> Strategy:
    """The component's strategy, or the seed's default for it."""
    if comp.strategy is not None:
        strategy: Strategy = comp.strategy
    elif comp.kind in (ComponentKind.CHAT_HISTORY, ComponentKind.TOOL_RESULTS):
        strategy = "summarize"
    elif comp.required or comp.kind in ALWAYS_KEPT:
        strategy = "fail"
    else:
        strategy = "drop_optional"
    if comp.required and strategy == "drop_optional":
        strategy = "fail"  # a required component is never dropped
    return strategy


def floor_components(frame: ContextFrame) -> list[Component]:
    """What is left when everything that can be cut is cut: the components whose strategy
    is ``fail`` (required, system instruction, template text, tool definitions) and the
    empty ones (an empty message block still separates the text around it)."""
    return [
        c
        for c in frame.components
        if effective_strategy(c) == "fail" or not (c.inline_content or c.messages or c.tools)
    ]


def floor_tokens(
    frame: ContextFrame, *, dialect: Dialect, counter: TokenCounter, model: str
) -> int:
    """Tokens of the request when everything that can be cut is cut (see
    :func:`floor_components`), with message framing and the reply priming, counted exactly.
    Every budget from this one up fits the frame, unless a required component that can be
    cut needs more room than its cut leaves."""
    request = dialect.lower(
        ContextFrame(components=floor_components(frame), metadata=frame.metadata), model
    )
    return dialect.count_request(request, counter)
