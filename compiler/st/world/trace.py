"""What the world info scan decided for each entry, as it decided it: the raw trace.

Internal: :mod:`compiler.st.world.scan` fills a :class:`ScanTrace` at its decision
points; :mod:`compiler.st.world.report` turns it into the public report
(:class:`compiler.WorldInfoReport`) when asked.

The trace is cheap to keep: per entry, a reason code (a constant string) in a dict keyed by
the entry's ``id``, and for the few entries that get that far a small tuple (the keys that
matched and where, a probability roll, the group that was lost, the budget reached). No
text is formatted while scanning.
"""

from __future__ import annotations

from dataclasses import field
from typing import Final

from compiler._records import record
from compiler.inputs.lorebook import WorldEntry

# why an entry is active
CONSTANT: Final = "constant"
STICKY: Final = "sticky"
DECORATOR: Final = "decorator"  # @@activate
KEY: Final = "key"
MIN_ACTIVATIONS: Final = "min_activations"  # a key matched in a min-activations pass
ACTIVATED = frozenset({CONSTANT, STICKY, DECORATOR, KEY, MIN_ACTIVATIONS})

# why an entry is not
DISABLED: Final = "disabled"
CHARACTER_FILTER: Final = "character_filter"
DELAY: Final = "delay"
COOLDOWN: Final = "cooldown"
DONT_ACTIVATE: Final = "dont_activate"  # @@dont_activate
NO_KEYS: Final = "no_keys"
NO_MATCH: Final = "no_match"
SECONDARY_FAILED: Final = "secondary_failed"
RECURSION_DELAYED: Final = "recursion_delayed"
RECURSION_EXCLUDED: Final = "recursion_excluded"
GROUP_LOST: Final = "group_lost"
PROBABILITY: Final = "probability"
BUDGET: Final = "budget"
NOT_CHECKED: Final = "not_checked"  # the scan stopped (pass limit) before checking it

#: pass kinds
INITIAL, RECURSION, MIN_PASS = "initial", "recursion", "min_activations"


@record
class ScanTrace:
    """The scan's decisions. ``entries`` are the candidates in scan order; ``why`` maps an
    entry's ``id`` to its last reason code (for an activated one, how it activated);
    ``hits`` the keys and source of a key activation (see
    :attr:`compiler.st.world.activation.Scanner.hit`); ``rolls`` a failed probability
    roll; ``groups`` a lost inclusion group (group, how, winner or scores); ``budget`` the
    tokens counted and the budget when it stopped the scan; ``passes`` each pass's
    (kind, global depth, delayUntilRecursion level); ``cooldowns`` the message a cooldown
    ends at."""

    entries: list[WorldEntry]
    messages: int = 0
    injected: list[str] = field(default_factory=list)
    activated: set[int] = field(default_factory=set)
    why: dict[int, str] = field(default_factory=dict)
    hits: dict[int, tuple[int, int, str, int]] = field(default_factory=dict)
    rolls: dict[int, float] = field(default_factory=dict)
    groups: dict[int, tuple[str, str, object]] = field(default_factory=dict)
    budget: tuple[int, int] | None = None
    passes: list[tuple[str, int, int]] = field(default_factory=list)
    cooldowns: dict[int, float] = field(default_factory=dict)
    #: the pass in which each activated entry activated (1 = the first)
    activated_in: dict[int, int] = field(default_factory=dict)
