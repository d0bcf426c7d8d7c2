"""The world info scan: which entries a chat activates, as SillyTavern's ``checkWorldInfo``
(world-info.js, 1.12.6) decides, and in what order they reach the prompt.

Internal: the run context calls :func:`scan` (:mod:`compiler.st.world.run`).

The candidates come in SillyTavern's order (``getSortedEntries``:
:func:`compiler.inputs.lorebooks.sorted_entries`). Each pass checks every entry not yet
activated or failed, in this order: ``disable``; ``characterFilter`` (names, then tags;
``isExclude`` inverts); ``delay``; cooldown (unless sticky); ``delayUntilRecursion`` (only
in a recursion pass at or above its level, unless sticky); ``excludeRecursion`` (not in a
recursion pass, unless sticky); ``@@activate`` / ``@@dont_activate``; constant or sticky
(no keys needed); then the keys (:meth:`compiler.st.world.activation.Scanner.keys_match`).

The pass's new entries are ordered sticky first, then in candidate order; inclusion groups
pick their winners (:mod:`compiler.st.world.groups`); then each entry in turn rolls its
``probability`` when ``useProbability`` is on and it is below 100 (a failed entry stays out
for the rest of the scan; sticky entries do not roll), its content (macros filled) joins the
pass's text, and when the tokens of the earlier passes' recursion text plus this pass's text
(each counted as SillyTavern counts it, :data:`FRAMING` more) reach the world info budget,
that entry is dropped and the scan stops: no later entry, no
recursion, no min-activations pass (an open ``delayUntilRecursion`` level still runs, as in
SillyTavern).

Then: recursion (the new entries' content, not ``preventRecursion`` ones, is scanned next
pass) when ``world_info_recursive``; else, while fewer than ``world_info_min_activations``
entries are active, one more pass with the global depth one deeper (the recursion text not
scanned), until the depth passes ``world_info_min_activations_depth_max`` (0: no limit) or
the chat's length; else the next ``delayUntilRecursion`` level. ``world_info_max_recursion_
steps`` (> 0) caps the number of passes.

Randomness is seeded from the run (:attr:`compiler.RunContext.macro_seed`): an entry's
probability roll is ``random.Random(f"{seed}\\0world_info.probability\\0{world}\\0{uid}\\0
{n}").random() * 100 <= probability`` with ``n`` the number of scanned messages, so the same
run context compiles to the same request and a longer chat rolls again.

The result is in prompt order: ascending ``order`` (a higher order sits nearer the chat),
ties in reverse activation order (SillyTavern sorts by descending order, stably, then
prepends each entry).

Each check above leaves its reason code in the result's trace
(:mod:`compiler.st.world.trace`): how an entry activated (and which keys, where), or
the last reason it did not; the lorebook debugger (:mod:`compiler.st.world.report`)
reads it.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from compiler._records import record
from compiler.errors import Diagnostic
from compiler.inputs.lorebook import Lorebook, WorldEntry
from compiler.st.world.activation import MAX_SCAN_DEPTH, Scanner
from compiler.st.world.groups import filter_groups, group_roll
from compiler.st.world.timed import TimedEffects, entry_key
from compiler.st.world.trace import (
    ACTIVATED,
    BUDGET,
    CHARACTER_FILTER,
    CONSTANT,
    COOLDOWN,
    DECORATOR,
    DELAY,
    DISABLED,
    DONT_ACTIVATE,
    GROUP_LOST,
    INITIAL,
    KEY,
    MIN_ACTIVATIONS,
    MIN_PASS,
    NO_KEYS,
    NO_MATCH,
    NOT_CHECKED,
    PROBABILITY,
    RECURSION,
    RECURSION_DELAYED,
    RECURSION_EXCLUDED,
    SECONDARY_FAILED,
    STICKY,
    ScanTrace,
)

_NONE, _INITIAL, _RECURSION, _MIN_ACTIVATIONS = 0, 1, 2, 3
_KINDS = {_INITIAL: INITIAL, _RECURSION: RECURSION, _MIN_ACTIVATIONS: MIN_PASS}
MAX_SCAN_PASSES = 1000
"""The most scan passes (SillyTavern has no limit): past it, ``world.scan_budget``."""
MAX_ENTRY_CHECKS = 200_000
"""The most entry checks of one scan (entries times passes; a few seconds at most): past
it, ``world.scan_budget``."""


@record(frozen=True)
class ScanSettings:
    """The global settings one scan uses (SillyTavern's ``world_info_*``)."""

    depth: int = 2
    case_sensitive: bool = False
    match_whole_words: bool = True
    recursive: bool = True
    max_recursion_steps: int = 0
    min_activations: int = 0
    min_activations_depth_max: int = 0
    use_group_scoring: bool = False
    #: the world info budget in tokens (None: no budget)
    budget: int | None = None


@record(frozen=True)
class Character:
    """Who the scan is for, for entries' ``characterFilter``: the card's file name (without
    extension; else its name) and its tags."""

    name: str | None = None
    tags: tuple[str, ...] = ()


@record
class ScanResult:
    """The activated entries in prompt order, the timed-effects state after the scan, and
    whether the budget stopped it."""

    entries: list[WorldEntry]
    state: dict[str, Any]
    budget_reached: bool = False
    warnings: list[Diagnostic] = field(default_factory=list)
    #: what was decided for each entry, and why (:mod:`compiler.st.world.trace`)
    trace: ScanTrace | None = None


#: What SillyTavern adds to a text's tokens when it counts world info against the budget:
#: ``getTokenCountAsync`` counts it as a system message of its own, with the message's and
#: the request's framing (tokenizers.js ``counterWrapperOpenAIAsync``: 3 + 1 for the role +
#: 3 for the reply priming, less the 1 it starts from)
FRAMING = 6


def counted(count: Callable[[str], int], text: str) -> int:
    """``text``'s tokens as SillyTavern counts world info: :data:`FRAMING` more; an empty
    text none."""
    return count(text) + FRAMING if text else 0


def world_budget(percent: int, cap: int, max_context: int | None) -> int | None:
    """SillyTavern's budget: ``round(percent * max_context / 100) || 1``, then the cap when
    it is > 0 and smaller. None (no budget) when there is no context size and no cap."""
    if max_context is None:
        return cap or None
    budget = math.floor(percent * max_context / 100 + 0.5) or 1
    return cap if 0 < cap < budget else budget


def probability_roll(seed: int, entry: WorldEntry, chat_length: int) -> float:
    """The roll in [0, 100) an entry's ``probability`` is checked against."""
    key = f"{seed}\x00world_info.probability\x00{entry.world}\x00{entry.uid}\x00{chat_length}"
    return random.Random(key).random() * 100


def _filtered(entry: WorldEntry, character: Character | None) -> bool:
    """Whether ``characterFilter`` keeps the entry out (SillyTavern checks names, then tags;
    tags only when there is a character)."""
    flt = entry.character_filter
    if flt is None:
        return False
    name = character.name if character is not None else None
    if flt.names and (name in flt.names) is flt.is_exclude:
        return True
    if flt.tags and character is not None:
        has_tag = any(tag in flt.tags for tag in character.tags)
        return has_tag is flt.is_exclude
    return False


class _Scan:
    """One run of the scan loop (SillyTavern's ``checkWorldInfo``)."""

    def __init__(
        self,
        entries: Sequence[WorldEntry],
        messages: Sequence[str],
        settings: ScanSettings,
        timed: TimedEffects,
        scanner: Scanner,
        character: Character | None,
    ) -> None:
        self.entries = list(entries)
        self.index = {id(e): i for i, e in enumerate(self.entries)}
        self.length = len(messages)
        self.settings = settings
        self.timed = timed
        self.scanner = scanner
        self.sticky = {id(e) for e in self.entries if timed.active("sticky", e)}
        self.trace = ScanTrace(self.entries, len(messages), scanner.injected_names)
        why = self.trace.why
        #: the entries still to check: what is disabled, filtered out, delayed or cooling
        #: down never activates in this scan (the checks that do not depend on the pass)
        self.pending = []
        for e in self.entries:
            out = self._out(e, character)
            if out:
                why[id(e)] = out
            else:
                self.pending.append(e)
        self.activated: dict[int, WorldEntry] = {}
        self.failed: set[int] = set()
        self.filled: dict[int, str] = {}
        self.all_text = ""
        self.overflow = False
        levels = {e.delay_until_recursion for e in self.entries if e.delay_until_recursion}
        self.levels = sorted(levels)
        self.level = self.levels.pop(0) if self.levels else 0

    def _out(self, entry: WorldEntry, character: Character | None) -> str:
        """disable, characterFilter, delay, cooldown unless sticky (in SillyTavern's order):
        the reason code, or "" when none holds."""
        if entry.disabled:
            return DISABLED
        if _filtered(entry, character):
            return CHARACTER_FILTER
        if self.timed.active("delay", entry):
            return DELAY
        if self.timed.active("cooldown", entry) and id(entry) not in self.sticky:
            effect = self.timed.state["cooldown"].get(entry_key(entry), {})
            end = effect.get("end")
            if isinstance(end, int | float) and not isinstance(end, bool):
                self.trace.cooldowns[id(entry)] = end
            return COOLDOWN
        return ""

    def lost(self, entry: WorldEntry, group: str, how: str, other: object) -> None:
        """``entry`` lost inclusion group ``group`` (:func:`filter_groups` says how)."""
        self.trace.why[id(entry)] = GROUP_LOST
        self.trace.groups[id(entry)] = (group, how, other)

    def finish(self) -> ScanTrace:
        """The trace, with the activated entries' own codes and the unchecked ones'."""
        trace = self.trace
        trace.activated = set(self.activated)
        for entry in self.pending:
            trace.why.setdefault(id(entry), NOT_CHECKED)
        return trace

    def prune(self) -> None:
        """Drop the entries activated or failed so far from :attr:`pending`."""
        done = self.activated.keys() | self.failed
        self.pending = [e for e in self.pending if id(e) not in done]

    def found(self, state: int) -> list[WorldEntry]:
        """The pending entries that activate in this pass; each one's reason is traced."""
        why, hits, found = self.trace.why, self.trace.hits, []
        for entry in self.pending:
            code = self.eligible(entry, state)
            if code in ACTIVATED:
                found.append(entry)
                if code in (KEY, MIN_ACTIVATIONS):
                    hits[id(entry)] = self.scanner.hit
            why[id(entry)] = code
        return found

    def eligible(self, entry: WorldEntry, state: int) -> str:
        """Whether a pending ``entry`` activates in this pass (the module's check order):
        how (a code of :data:`~compiler.st.world.trace.ACTIVATED`), or why not."""
        sticky = id(entry) in self.sticky
        delayed = entry.delay_until_recursion
        if delayed and not sticky and (state != _RECURSION or delayed > self.level):
            return RECURSION_DELAYED
        recursive = self.settings.recursive
        if state == _RECURSION and recursive and entry.exclude_recursion and not sticky:
            return RECURSION_EXCLUDED
        if "@@activate" in entry.decorators:
            return DECORATOR
        if "@@dont_activate" in entry.decorators:
            return DONT_ACTIVATE
        if entry.constant or sticky:
            return STICKY if sticky and not entry.constant else CONSTANT
        if not entry.keys:
            return NO_KEYS
        matched = self.scanner.keys_match(entry, min_pass=state == _MIN_ACTIVATIONS)
        if matched:
            return MIN_ACTIVATIONS if state == _MIN_ACTIVATIONS else KEY
        return NO_MATCH if matched is False else SECONDARY_FAILED

    def take(
        self,
        new: list[WorldEntry],
        seed: int,
        count: Callable[[str], int] | None,
        fill: Callable[[str], str],
    ) -> None:
        """Roll each new entry's probability and add it within the budget."""
        budget = self.settings.budget if count is not None else None
        room = budget - counted(count, self.all_text) if budget is not None and count else 0
        parts: list[str] = []
        estimate = 0
        trace = self.trace
        for i, entry in enumerate(new):
            roll = probability_roll(seed, entry, self.length) if self._rolls(entry) else 0
            if roll > entry.probability:
                self.failed.add(id(entry))
                trace.why[id(entry)], trace.rolls[id(entry)] = PROBABILITY, roll
                continue
            content = self.filled[id(entry)] = fill(entry.content)
            parts.append(content + "\n")
            if budget is not None and count is not None:
                # the sum of the parts' counts is within a token or two a part of the
                # joined text's: the exact count only near the budget (no quadratic work)
                estimate += count(parts[-1])
                near = estimate + estimate // 8 + 2 * len(parts) + 16 + FRAMING >= room
                if near and (used := counted(count, "".join(parts))) >= room:
                    self.overflow = True
                    trace.budget = (budget - room + used, budget)
                    trace.why.update((id(e), BUDGET) for e in new[i:])
                    break
            self.activated[id(entry)] = entry

    def _rolls(self, entry: WorldEntry) -> bool:
        """Whether the entry rolls its probability (sticky entries keep theirs)."""
        return (
            entry.use_probability
            and entry.probability != 100
            and not self.timed.active("sticky", entry)
        )

    def next_state(self, state: int, for_recursion: list[WorldEntry]) -> int:
        """What the next pass is (recursion, min activations, a delay level, or none)."""
        recursive = self.settings.recursive and not self.overflow
        nxt = _NONE
        if recursive and for_recursion:
            nxt = _RECURSION
        if recursive and state == _MIN_ACTIVATIONS and self.scanner.recurse:
            nxt = _RECURSION
        wanted = self.settings.min_activations
        if not nxt and not self.overflow and wanted > 0 and len(self.activated) < wanted:
            depth_max = self.settings.min_activations_depth_max
            depth = self.scanner.depth
            # past MAX_SCAN_DEPTH a deeper pass scans the same text (SillyTavern goes on
            # to the chat's length; the result is the same)
            limit = min(self.length, MAX_SCAN_DEPTH)
            if not ((depth_max > 0 and depth > depth_max) or depth > limit):
                nxt = _MIN_ACTIVATIONS
                self.scanner.skew += 1
        if nxt == _NONE and self.levels:
            nxt = _RECURSION
            self.level = self.levels.pop(0)
        return nxt


def scan(
    entries: Sequence[WorldEntry],
    messages: Sequence[str],
    settings: ScanSettings,
    *,
    state: dict[str, Any] | None = None,
    seed: int = 0,
    count: Callable[[str], int] | None = None,
    fill: Callable[[str], str] | None = None,
    rewrite_key: Callable[[str], str] | None = None,
    character: Character | None = None,
    injected: Sequence[str] = (),
    injected_names: Sequence[str] = (),
) -> ScanResult:
    """Scan ``messages`` (oldest first, as the scan sees them) and the ``injected`` prompts
    for ``entries`` (in candidate order); ``state`` is the timed-effects state
    (``timedWorldInfo``), ``count`` counts tokens for the budget, ``fill`` fills SillyTavern
    macros in content and ``rewrite_key`` in keys; ``injected_names`` say what each injected
    prompt is, for the trace."""
    if settings.depth < 0:
        raise ValueError("scan depth must be >= 0")
    timed = TimedEffects(len(messages), entries, state)
    scanner = Scanner(
        messages,
        settings.depth,
        settings.case_sensitive,
        settings.match_whole_words,
        rewrite_key,
        injected,
        injected_names,
    )
    run = _Scan(entries, messages, settings, timed, scanner, character)
    step, passes, checks = _INITIAL, 0, 0
    while step and not (0 < settings.max_recursion_steps <= passes):
        run.prune()
        checks += len(run.pending)
        if passes >= MAX_SCAN_PASSES or checks > MAX_ENTRY_CHECKS:
            scanner.warnings.append(_too_many_passes(passes))
            break
        passes += 1
        run.trace.passes.append((_KINDS[step], scanner.depth, run.level))
        found = run.found(step)
        found.sort(key=lambda e: (id(e) not in run.sticky, run.index[id(e)]))
        found = filter_groups(
            found,
            list(run.activated.values()),
            is_active=timed.active,
            score=functools.partial(scanner.score, min_pass=step == _MIN_ACTIVATIONS),
            use_scoring=settings.use_group_scoring,
            roll=functools.partial(group_roll, seed, chat_length=len(messages), scan_pass=passes),
            lost=run.lost,
        )
        run.take(found, seed, count, fill or (lambda text: text))
        run.trace.activated_in.update((id(e), passes) for e in found if id(e) in run.activated)
        for_recursion = [e for e in found if id(e) not in run.failed and not e.prevent_recursion]
        step = run.next_state(step, for_recursion)
        if step:
            text = "\n".join(run.filled.get(id(e), e.content) for e in for_recursion)
            scanner.recurse.append(text)
            run.all_text = text + "\n" + run.all_text
    active = list(run.activated.values())
    timed.record(active)
    ordered = sorted(active, key=lambda e: -e.order)  # stable: activation order in ties
    trace = run.finish()
    return ScanResult(list(reversed(ordered)), timed.state, run.overflow, scanner.warnings, trace)


def _too_many_passes(passes: int) -> Diagnostic:
    return Diagnostic(
        code="world.scan_budget",
        severity="warning",
        message=f"world info scanning stopped after {passes} passes (recursion or min "
        f"activations; at most {MAX_SCAN_PASSES} passes and {MAX_ENTRY_CHECKS:,} entry checks "
        "in all): later entries were not activated",
        hint="set world_info_max_recursion_steps, or break the lorebook's chains of entries",
    )


def activate(
    lorebook: Lorebook,
    messages: Sequence[str],
    scan_depth: int = 4,
    *,
    case_sensitive: bool = False,
    match_whole_words: bool = False,
    recursive: bool = False,
    max_recursion_steps: int = 0,
    rewrite_key: Callable[[str], str] | None = None,
    warnings: list[Diagnostic] | None = None,
) -> list[WorldEntry]:
    """The entries of one lorebook ``messages`` (oldest first) activate, in prompt order,
    with no budget, no timed state and seed 0. ``warnings``, when given, receives the
    skipped regex keys' warnings."""
    settings = ScanSettings(
        depth=scan_depth,
        case_sensitive=case_sensitive,
        match_whole_words=match_whole_words,
        recursive=recursive,
        max_recursion_steps=max_recursion_steps,
    )
    result = scan(lorebook.entries, messages, settings, rewrite_key=rewrite_key)
    if warnings is not None:
        warnings.extend(result.warnings)
    return result.entries
