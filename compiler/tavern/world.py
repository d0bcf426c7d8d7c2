"""World info entries at depth (position 4, ``@D``) as SillyTavern injects them in chat.

Internal: the API is :mod:`compiler.tavern`.

SillyTavern groups the activated ``@D`` entries by ``(depth, role)`` (defaults 4 and
system), joins each group's contents with ``\\n`` in prompt order, and sends the group as the
extension prompt ``customDepthWI-{depth}-{role}``: an in-chat injection at that depth, after
the preset's own in-chat entries and the other extension prompts of the same depth and
role. Here each group becomes an :class:`ExtensionPrompt` placed by
:func:`compiler.tavern.injections.apply_injections` with the preset's, so a tool call and
its results are never split. In the budget ledger the injected text is ``worldInfo``, the
category of the world info blocks, so one budget covers both.
"""

from __future__ import annotations

from typing import Any

from compiler._assemble.assemble import Assembler
from compiler._assemble.markers import openers
from compiler._base.frame import PromptRole
from compiler.errors import Diagnostic
from compiler.st.macros import inert
from compiler.st.world.place import world_position
from compiler.tavern.injections import MAX_INJECTION_DEPTH, ExtensionPrompt

_ROLES: dict[int, PromptRole] = {0: "system", 1: "user", 2: "assistant"}
_ROLE_IDS: dict[PromptRole, int] = {role: i for i, role in _ROLES.items()}
DEFAULT_DEPTH = 4
#: the budget category of world info in chat: the world info blocks' (``worldInfoBudgetTokens``)
WORLD_INFO = "worldInfo"


def _depth(entry: dict[str, Any]) -> int:
    raw = entry.get("depth")
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0 else DEFAULT_DEPTH


def _role(entry: dict[str, Any]) -> PromptRole:
    raw = entry.get("role")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return _ROLES.get(raw, "system")
    return raw if raw in ("system", "user", "assistant") else "system"


def _too_deep(entry: dict[str, Any]) -> Diagnostic:
    name = f" ({str(entry['comment'])[:80]})" if entry.get("comment") else ""
    return Diagnostic(
        code="world.position_unsupported",
        severity="warning",
        message=f"world info entry {entry.get('uid')!r}{name} is activated at depth "
        f"{_depth(entry)}, deeper than SillyTavern injects ({MAX_INJECTION_DEPTH}): it is not "
        "in the request",
        hint=f"give the entry a depth from 0 to {MAX_INJECTION_DEPTH}",
    )


def depth_prompts(assembler: Assembler, unmaterialized: list[str]) -> list[ExtensionPrompt]:
    """The activated ``@D`` entries as in-chat extension prompts, one per (depth, role); a
    group whose filled text holds more ``<<agent.`` openers than its raw text gets its content
    added to ``unmaterialized`` (:mod:`compiler._assemble.markers`). None when world info is
    hidden."""
    if not assembler.visible("world.activated"):
        return []
    groups: dict[tuple[int, PromptRole], list[str]] = {}
    for entry in assembler.world_entries:
        if entry.get("content") and world_position(entry) == "at_depth":
            if _depth(entry) > MAX_INJECTION_DEPTH:  # SillyTavern injects depths 0-1000 only
                assembler.warnings.append(_too_deep(entry))
                continue
            groups.setdefault((_depth(entry), _role(entry)), []).append(str(entry["content"]))
    out: list[ExtensionPrompt] = []
    for (depth, role), contents in groups.items():
        text = "\n".join(contents)
        content, from_values = assembler.filled(text)
        if openers(content) > openers(inert(text)) + from_values:
            unmaterialized.append(content)
        key = f"customDepthWI-{depth}-{_ROLE_IDS[role]}"
        out.append(ExtensionPrompt(key, role, depth, content, WORLD_INFO))
    return out
