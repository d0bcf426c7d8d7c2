"""What each component may do over budget: its strategy, and the floor of a frame (what is
left when everything that can be cut is cut).

Internal: ``compiler.fit`` exports what is public.
"""

from __future__ import annotations

from compiler._base.frame import (
    COUNT_UNSQUASHED,
    NEWEST_TURN,
    SQUASH_SYSTEM,
    Component,
    ComponentKind,
    ContextFrame,
    Strategy,
)
from compiler._base.tokens import TokenCounter
from compiler.fit.history import newest_turn
from compiler.providers.dialect import NO_OPTIONS, Dialect, LoweringOptions

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
    (:data:`~compiler._base.frame.NEWEST_TURN`); 0 for any other component, or one that is never
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


def floor_components(frame: ContextFrame, *, required: bool = False) -> list[Component]:
    """What is left when everything that can be cut is cut: the components whose strategy
    is ``fail`` (required, system instruction, template text, tool definitions), the
    newest turn of a chat history (:func:`required_turn`) and the empty components (an
    empty message block still separates the text around it). ``required``: with the
    required components that can be cut (a history apart) whole instead of left out."""
    out = []
    for c in frame.components:
        if effective_strategy(c) == "fail" or not (c.inline_content or c.messages or c.tools):
            out.append(c)
        elif keep := required_turn(c):
            out.append(turn_part(c, keep))
        elif required and c.required and c.kind != ComponentKind.CHAT_HISTORY:
            out.append(c)
    return out


def floor_tokens(
    frame: ContextFrame, *, dialect: Dialect, counter: TokenCounter, model: str
) -> int:
    """Tokens of the request when everything that can be cut is cut (see
    :func:`floor_components`: the newest turn is never cut), with message framing and the
    reply priming, counted exactly; or of the request with the required components that
    can be cut whole, when that is less (a request can cost more without them: a layout
    that opens with a placeholder turn when no text of the user's comes first, as
    SillyTavern's for Claude does, sends it only then).
    Every budget from this one up fits the frame, unless a required component that can be
    cut needs more room than its cut leaves."""

    def count(components: list[Component]) -> int:
        floor = ContextFrame(components=components, metadata=frame.metadata)
        return dialect.count_request(dialect.lower(as_counted(floor), model), counter)

    least = floor_components(frame)
    fuller = floor_components(frame, required=True)
    if len(fuller) == len(least):
        return count(least)
    return min(count(least), count(fuller))


def as_counted(frame: ContextFrame) -> ContextFrame:
    """The frame as the budget counts it: one marked
    :data:`~compiler._base.frame.COUNT_UNSQUASHED` (a legacy preset's with
    ``squash_system_messages``) with its system messages left apart, each with its own
    framing, as SillyTavern counts every prompt before ``squashSystemMessages`` merges them;
    any other frame as it is. The request sent is the frame itself (squashed)."""
    meta = frame.metadata
    if not (meta.get(COUNT_UNSQUASHED) and meta.get(SQUASH_SYSTEM)):
        return frame
    apart = {k: v for k, v in meta.items() if k not in (SQUASH_SYSTEM, COUNT_UNSQUASHED)}
    return ContextFrame(components=frame.components, metadata=apart)


def counted_tokens(
    frame: ContextFrame, total: int, *, dialect: Dialect, counter: TokenCounter, model: str,
    lowering: LoweringOptions = NO_OPTIONS,
) -> int:  # fmt: skip
    """The tokens the budget counts of ``frame``, whose request (lowered with ``lowering``)
    has ``total``: ``total``, or the count of :func:`as_counted`'s frame when it differs."""
    counted = as_counted(frame)
    if counted is frame:
        return total
    return dialect.count_request(dialect.lower(counted, model, lowering), counter)
