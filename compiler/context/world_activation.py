"""World info activation: which lorebook entries a chat activates, and in what order.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.
The lorebook is read by :mod:`compiler.context.world`.

:func:`activate` implements this subset of SillyTavern's ``checkWorldInfo``:

- disabled entries never activate; constant entries always do;
- other entries need a primary key found in the scan buffer: the last ``scan_depth``
  messages (the entry's own ``scanDepth`` wins), each stripped, newest first, joined by
  ``\\n``. Keys go through ``rewrite_key`` when given (a caller fills SillyTavern macros
  such as ``{{char}}`` with it: :func:`compiler.stmacros.substitute`), then are stripped; an
  empty key never matches;
- matching is a plain substring test, case-insensitive unless the entry (or the call) says
  ``caseSensitive``; ``matchWholeWords`` makes a one-word key match only between non-word
  characters (a key of several words stays a substring test); a key written
  ``/pattern/flags`` is a regular expression (flags ``i``, ``m``, ``s``; ``g``, ``u``, ``y``
  ignored) tested against the same, possibly lower-cased, buffer as in SillyTavern; a
  pattern that does not compile is matched as plain text, as SillyTavern does with an
  invalid one;
- regex keys come from shared lorebooks, so they run with the ``regex`` package's timeout:
  a search longer than :data:`REGEX_KEY_TIMEOUT` (50 ms) does not match and is reported as
  a ``world.regex_timeout`` warning (then the key is not tried again in that activation),
  and all regex keys of one :func:`activate` share :data:`REGEX_SCAN_BUDGET` (0.5 s), after
  which the remaining regex keys do not match (one more warning). So a catastrophic
  pattern such as ``/(a|aa)+$/`` costs at most 50 ms, and a book full of them 0.5 s. A key
  whose counted repeats would make a huge compiled pattern (``/a{1000000000}/``; over
  :data:`REGEX_MAX_SIZE`) is not compiled: ``world.regex_too_complex``, no match;
- a selective entry with secondary keys also needs its ``selectiveLogic`` to hold:
  AND_ANY (0) some secondary key matches, NOT_ALL (1) not every one matches, NOT_ANY (2)
  none matches, AND_ALL (3) every one matches;
- with ``recursive=True`` (SillyTavern's shipped setting; the run context passes
  ``worldInfoSettings``), the content of activated entries (except ``preventRecursion``
  ones) is scanned again until nothing new activates; ``excludeRecursion`` entries only
  activate from the messages, ``delayUntilRecursion`` entries only from recursion.

Not implemented (everything activates deterministically, the fit stage owns budgets):
probability rolls (``probability``/``useProbability`` are kept but not rolled), inclusion
groups and group scoring, sticky/cooldown/delay timers, character and tag filters,
minimum activations, vector matching, the world info token budget, and
``use_regex`` (SillyTavern ignores it too; only ``/.../`` keys are regular expressions).

The result is sorted the way SillyTavern joins entries into the prompt: ascending ``order``
(a higher order sits closer to the end, nearer the chat), ties in reverse lorebook order
(SillyTavern sorts by descending order, stably, then prepends each entry).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from functools import lru_cache

import regex

from compiler.context.world import Lorebook, SelectiveLogic, WorldEntry
from compiler.errors import Diagnostic

REGEX_KEY_TIMEOUT = 0.05
"""Seconds one regex key may search one scan buffer; longer is ``world.regex_timeout``."""
REGEX_SCAN_BUDGET = 0.5
"""Seconds all regex keys of one :func:`activate` call may take together (compiling and
searching); past it, the remaining regex keys are skipped (``world.regex_timeout``)."""
REGEX_MAX_SIZE = 10_000
"""The largest regex key compiled, in pattern items with counted repeats multiplied out
(the ``regex`` package copies ``X{n}`` n times: ``/a{1000000000}/`` would take gigabytes);
a longer pattern text is allowed its own length. Larger is ``world.regex_too_complex``."""
REGEX_MAX_LENGTH = 32_768
"""The longest regex key compiled, in characters (compiling one this long takes ~0.2 s);
longer is ``world.regex_too_complex``."""
SCAN_BYTES_BUDGET = 256 * 1024 * 1024
"""How many characters of scan buffer the plain keys of one :func:`activate` may search
together (a deterministic bound: a few hundred milliseconds); past it, the remaining keyword
entries do not activate (``world.scan_budget``, one warning)."""

_REGEX_KEY = re.compile(r"^/([\w\W]+?)/([gimsuy]*)$")
_UNESCAPED_SLASH = re.compile(r"(^|[^\\])/")
_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL}
_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_BRACED_ESCAPES = frozenset("pPNx")  # \p{L}, \N{name}, \x{263a}: braces that are no count


def _regex_form(key: str) -> tuple[str, int] | None:
    """``/pattern/flags`` as (pattern, regex flags), or None for a plain key."""
    match = _REGEX_KEY.match(key)
    if match is None:
        return None
    pattern, flags = match.groups()
    if _UNESCAPED_SLASH.search(pattern):
        return None
    bits = 0
    for flag in flags:
        bits |= _FLAGS.get(flag, 0)
    return pattern.replace("\\/", "/", 1), bits


def _pattern_size(pattern: str) -> int:
    """An upper estimate of a pattern's compiled size: one per item, groups and
    alternatives summed, and an item repeated ``{n}``/``{n,}``/``{n,m}`` counted n times."""
    frames = [[0, 0]]  # per open group: [size so far, size of the last item]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        item = 1
        if c == "\\":
            i += 2
            if pattern[i - 1 : i] in _BRACED_ESCAPES and pattern[i : i + 1] == "{":
                i = pattern.find("}", i) + 1 or n
        elif c == "[":  # a class: one item
            i += 1
            i += pattern[i : i + 1] == "^"
            i += pattern[i : i + 1] == "]"
            while i < n and pattern[i] != "]":
                if pattern[i] == "[" and pattern[i + 1 : i + 2] == ":":  # [:alpha:]
                    end = pattern.find(":]", i + 2)
                    i = n if end < 0 else end + 2
                else:
                    i += 2 if pattern[i] == "\\" else 1
            i += 1
        elif pattern.startswith("(?#", i):
            i = pattern.find(")", i) + 1 or n
            continue
        elif c == "(":
            frames.append([0, 0])
            i += 1
            continue
        elif c == ")" and len(frames) > 1:
            item = frames.pop()[0]
            i += 1
        elif c == "|":
            frames[-1][1] = 0
            i += 1
            continue
        elif c in "*+?":
            i += 1
            continue
        elif c == "{" and (count := _COUNT.match(pattern, i)) and any(count.groups()):
            times = max(int(count.group(1) or 0), 1)
            frames[-1][0] += frames[-1][1] * (times - 1)
            frames[-1][1] *= times
            i = count.end()
            continue
        else:
            i += 1
        frames[-1][0] += item
        frames[-1][1] = item
    return sum(frame[0] for frame in frames)


class _TooComplex:
    """A regex key left uncompiled: its size is over :data:`REGEX_MAX_SIZE`."""


_TOO_COMPLEX = _TooComplex()


@lru_cache(maxsize=64)
def _compile_key(pattern: str, flags: int) -> regex.Pattern[str] | _TooComplex | None:
    """The compiled pattern; None if it does not compile (it is then plain text, as in
    SillyTavern); too complex if over :data:`REGEX_MAX_SIZE`."""
    if len(pattern) > REGEX_MAX_LENGTH or _pattern_size(pattern) > max(
        REGEX_MAX_SIZE, len(pattern)
    ):
        return _TOO_COMPLEX
    try:
        return regex.compile(pattern, flags, cache_pattern=False)
    except (regex.error, ValueError, OverflowError, MemoryError, RecursionError):
        return None


class _Scanner:
    """The scan buffer of one activation, with per-entry depth and case settings."""

    def __init__(
        self,
        messages: Sequence[str],
        scan_depth: int,
        case_sensitive: bool,
        whole_words: bool,
        rewrite_key: Callable[[str], str] | None,
    ) -> None:
        self.newest_first = [m.strip() for m in reversed(messages)]
        self.scan_depth = scan_depth
        self.case_sensitive = case_sensitive
        self.whole_words = whole_words
        self.rewrite_key = rewrite_key
        self.recurse: list[str] = []
        self.warnings: list[Diagnostic] = []
        self._cache: dict[tuple[int, bool, int], str] = {}
        self._regex_left = REGEX_SCAN_BUDGET
        self._skipped: set[str] = set()  # regex keys that timed out or are too complex
        self._budget_spent = False
        self._scanned = 0  # characters of scan buffer searched by plain keys
        self._scan_spent = False

    def haystack(self, entry: WorldEntry) -> str:
        depth = entry.scan_depth if entry.scan_depth is not None else self.scan_depth
        case = self._case(entry)
        cache_key = (depth, case, len(self.recurse))
        if cache_key not in self._cache:
            text = "\n".join(self.newest_first[:depth])
            if self.recurse:
                text += "\n" + "\n".join(self.recurse)
            self._cache[cache_key] = text if case else text.lower()
        return self._cache[cache_key]

    def _case(self, entry: WorldEntry) -> bool:
        return entry.case_sensitive if entry.case_sensitive is not None else self.case_sensitive

    def matches(self, entry: WorldEntry, key: str) -> bool:
        if self.rewrite_key is not None:
            key = self.rewrite_key(key)
        key = key.strip()
        if not key:
            return False
        haystack = self.haystack(entry)
        form = _regex_form(key)
        if form is not None:
            found = self._search(entry, key, form, haystack)
            if found is not None:
                return found
        self._scanned += len(haystack)
        if self._scanned > SCAN_BYTES_BUDGET:
            return self._out_of_scan_budget(entry, key)
        needle = key if self._case(entry) else key.lower()
        whole = entry.match_whole_words if entry.match_whole_words is not None else self.whole_words
        if whole and len(needle.split()) == 1:
            return re.search(rf"(?:^|\W)({re.escape(needle)})(?:$|\W)", haystack) is not None
        return needle in haystack

    def _search(
        self, entry: WorldEntry, key: str, form: tuple[str, int], haystack: str
    ) -> bool | None:
        """A regex key's match, within its timeout and what is left of the scan budget;
        None when the pattern does not compile (the key is then plain text)."""
        if key in self._skipped:
            return False
        if self._regex_left <= 0:
            return self._out_of_budget(entry, key)
        start = time.perf_counter()
        try:
            pattern = _compile_key(*form)
            if pattern is None:
                return None
            if isinstance(pattern, _TooComplex):
                self._skipped.add(key)
                self._warn(
                    "world.regex_too_complex",
                    entry,
                    key,
                    f"is longer than {REGEX_MAX_LENGTH} characters, or larger than "
                    f"{REGEX_MAX_SIZE} items once its counted repeats are multiplied out, "
                    "and was skipped (no match)",
                )
                return False
            left = start + self._regex_left - time.perf_counter()
            if left <= 0:  # compiling used up the budget
                return self._out_of_budget(entry, key)
            timeout = min(REGEX_KEY_TIMEOUT, left)
            try:
                return pattern.search(haystack, timeout=timeout) is not None
            except TimeoutError:
                self._skipped.add(key)
                self._warn(
                    "world.regex_timeout",
                    entry,
                    key,
                    f"ran over {timeout * 1000:.0f} ms and was skipped (no match)",
                )
                return False
        finally:
            self._regex_left -= time.perf_counter() - start

    def _out_of_scan_budget(self, entry: WorldEntry, key: str) -> bool:
        if not self._scan_spent:
            self._scan_spent = True
            self._warn(
                "world.scan_budget",
                entry,
                key,
                f"is skipped: keys searched {SCAN_BYTES_BUDGET // (1024 * 1024)} MiB of "
                "scan buffer in this scan, so this and every later key do not match",
                hint="lower the lorebook's scan depth or its number of keys",
            )
        return False

    def _out_of_budget(self, entry: WorldEntry, key: str) -> bool:
        if not self._budget_spent:
            self._budget_spent = True
            self._warn(
                "world.regex_timeout",
                entry,
                key,
                f"is skipped: regex keys used up their {REGEX_SCAN_BUDGET:g} s for this "
                "scan, so this and every later regex key do not match",
            )
        return False

    def _warn(
        self, code: str, entry: WorldEntry, key: str, what: str, hint: str | None = None
    ) -> None:
        shown = key if len(key) <= 80 else key[:77] + "..."
        name = f" ({entry.comment})" if entry.comment else ""
        self.warnings.append(
            Diagnostic(
                code=code,
                message=f"world info entry {entry.uid!r}{name}: regex key {shown!r} {what}",
                severity="warning",
                hint=hint
                or "nested or counted repeats such as (a|aa)+ or a{100000} can take "
                "exponential time or huge memory: simplify the pattern or use a plain key",
            )
        )

    def activates(self, entry: WorldEntry) -> bool:
        if entry.constant:
            return True
        if not any(self.matches(entry, key) for key in entry.keys):
            return False
        if not (entry.selective and entry.secondary_keys):
            return True
        hits = [self.matches(entry, key) for key in entry.secondary_keys]
        logic = entry.selective_logic
        if logic == SelectiveLogic.AND_ANY:
            return any(hits)
        if logic == SelectiveLogic.NOT_ALL:
            return not all(hits)
        if logic == SelectiveLogic.NOT_ANY:
            return not any(hits)
        return all(hits)


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
    """The entries ``messages`` (oldest first) activate, in prompt order (module docstring).

    ``warnings``, when given, receives the ``world.regex_timeout`` and
    ``world.regex_too_complex`` warnings of regex keys that were skipped (they did not match).
    ``max_recursion_steps`` (> 0) caps the scan passes, the first one included, as
    SillyTavern's ``world_info_max_recursion_steps`` does; 0 is no cap.
    """
    if scan_depth < 0:
        raise ValueError("scan_depth must be >= 0")
    scanner = _Scanner(messages, scan_depth, case_sensitive, match_whole_words, rewrite_key)
    index = {id(entry): i for i, entry in enumerate(lorebook.entries)}
    active: list[WorldEntry] = []
    taken: set[int] = set()
    first = True
    passes = 0
    while True:
        passes += 1
        new = [
            entry
            for entry in lorebook.entries
            if id(entry) not in taken
            and not entry.disabled
            and not (first and entry.delay_until_recursion and not entry.constant)
            and not (not first and entry.exclude_recursion)
            and scanner.activates(entry)
        ]
        active.extend(new)
        taken.update(id(entry) for entry in new)
        first = False
        if not (recursive and new) or 0 < max_recursion_steps <= passes:
            break
        text = "\n".join(e.content for e in new if not e.prevent_recursion)
        scanner.recurse.append(text)
    if warnings is not None:
        warnings.extend(scanner.warnings)
    return sorted(active, key=lambda e: (e.order, -index[id(e)]))
