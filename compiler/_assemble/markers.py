"""The unexpanded-marker check: no ``<<agent.*>>`` the compiler did not expand is sent.

Internal: the check runs inside :func:`compiler.compile`.

A ``<<agent.`` opener may reach the request only as something somebody wrote on purpose:

- an escape the template author wrote (``\\<<agent.``; :attr:`Text.literal_opens`);
- data: a file, the chat, a tool result, the plan, a skill, the task, the system prompt;
- the raw text of creator content (world info, card fields, the persona, a card's
  override text) *before* SillyTavern's macros are filled in.

Every other opener was assembled by something (``<{{noop}}<agent.plan>>``, a ``{{trim}}``,
a comment, a preset format string, two pieces joined at a seam) and is
``agent.prompt_marker_unmaterialized``. The assembler records each inline component's
allowance in ``metadata["literalOpeners"]`` (:data:`ALLOWANCE`; data components count their
own openers when it is absent); :func:`check_markers` runs on the fitted frame, on the
messages exactly as lowering joins them (inline components of one group and role), and on
in-chat injection messages marked ``origin: "unmaterialized"``.
"""

from __future__ import annotations

import operator

from compiler._base.frame import MESSAGE_KINDS, Component, ComponentKind, ContextFrame
from compiler.errors import PolicyError

OPEN = "<<agent."
ALLOWANCE = "literalOpeners"
"""The metadata key of a component's allowance of literal openers."""


def openers(text: str | None) -> int:
    """How many ``<<agent.`` openers ``text`` holds."""
    return text.count(OPEN) if text else 0


def allowance(comp: Component) -> int:
    """The openers ``comp`` may carry: recorded at assembly, else all of a data component's
    own (template text with no record may carry none)."""
    recorded = comp.metadata.get(ALLOWANCE)
    if isinstance(recorded, int):
        return recorded
    return 0 if comp.kind == ComponentKind.PRESET_GUIDE else openers(comp.inline_content)


#: The hint of an opener in a message
IN_MESSAGE_HINT = (
    "write the macro directly in template text (an in-chat injection cannot hold one), and "
    "\\<<agent. for the literal text"
)


def unmaterialized(text: str, source: str | None, hint: str = IN_MESSAGE_HINT) -> PolicyError:
    """``agent.prompt_marker_unmaterialized`` for ``text`` (at ``source``)."""
    return PolicyError(
        code="agent.prompt_marker_unmaterialized",
        message=f"the request would carry a macro that was never expanded: {text.strip()[:80]!r}",
        hint=hint,
        file=source,
    )


_ORIGIN = operator.methodcaller("get", "origin")
"""A message's ``origin`` (None when it has none): read in one C pass over a history."""


def check_markers(frame: ContextFrame) -> None:
    """Raise ``agent.prompt_marker_unmaterialized`` for the first message of ``frame`` that
    carries more ``<<agent.`` openers than its components may (see the module docstring)."""
    group: list[Component] = []

    def flush() -> None:
        text = "".join(c.inline_content or "" for c in group)
        if openers(text) > sum(allowance(c) for c in group):
            raise unmaterialized(text, group[0].source)
        group.clear()

    for comp in frame.components:
        if comp.kind in MESSAGE_KINDS:
            flush()
            messages = comp.messages or ()
            marked = "origin" in set().union(*messages)  # keys first: one C pass, no calls
            if marked and "unmaterialized" in map(_ORIGIN, messages):  # an injection's mark
                message = next(m for m in messages if m.get("origin") == "unmaterialized")
                raise unmaterialized(
                    str(message.get("content") or ""), message.get("at", comp.source)
                )
        elif comp.inline_content:
            if group and (group[-1].group, group[-1].role) != (comp.group, comp.role):
                flush()
            group.append(comp)
    flush()
