"""What each component may do over budget: its strategy, and the floor of a frame (what is
left when everything that can be cut is cut).

Internal: ``compiler.fit`` exports what is public.
"""

from __future__ import annotations

from compiler.dialect import Dialect
from compiler.fit.history import newest_turn
from compiler.frame import NEWEST_TURN, Component, ComponentKind, ContextFrame, Strategy
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


def required_turn(comp: Component) -> int:
    """How many of a chat history's newest messages are never cut: its newest turn (see
    :func:`compiler.fit.history.newest_turn`) unless the component lets it go
    (:data:`~compiler.frame.NEWEST_TURN`); 0 for any other component, or one that is never
    cut anyway."""
    if (
        comp.kind != ComponentKind.CHAT_HISTORY
        or not comp.messages
        or comp.metadata.get(NEWEST_TURN) is False
        or effective_strategy(comp) == "fail"
    ):
        return 0
    return newest_turn(comp.messages)


def turn_part(comp: Component, keep: int) -> Component:
    """The history ``comp`` with only its newest ``keep`` messages."""
    msgs = comp.messages or []
    return comp.model_copy(update={"messages": list(msgs[len(msgs) - keep :])})


def floor_components(frame: ContextFrame) -> list[Component]:
    """What is left when everything that can be cut is cut: the components whose strategy
    is ``fail`` (required, system instruction, template text, tool definitions), the
    newest turn of a chat history (:func:`required_turn`) and the empty components (an
    empty message block still separates the text around it)."""
    out = []
    for c in frame.components:
        if effective_strategy(c) == "fail" or not (c.inline_content or c.messages or c.tools):
            out.append(c)
        elif keep := required_turn(c):
            out.append(turn_part(c, keep))
    return out


def floor_tokens(
    frame: ContextFrame, *, dialect: Dialect, counter: TokenCounter, model: str
) -> int:
    """Tokens of the request when everything that can be cut is cut (see
    :func:`floor_components`: the newest turn is never cut), with message framing and the
    reply priming, counted exactly.
    Every budget from this one up fits the frame, unless a required component that can be
    cut needs more room than its cut leaves."""
    request = dialect.lower(
        ContextFrame(components=floor_components(frame), metadata=frame.metadata), model
    )
    return dialect.count_request(request, counter)
