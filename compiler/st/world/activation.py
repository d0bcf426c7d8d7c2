"""World info key matching: SillyTavern's scan buffer and ``matchKeys``.

Internal: the scan itself (which entries activate, in what order) is
:mod:`compiler.st.world.scan`.

- The buffer an entry scans is :meth:`Scanner.haystack` (``WorldInfoBuffer.get``). Keys go
  through ``rewrite_key`` when given (a caller fills SillyTavern macros such as ``{{char}}``
  with it: :func:`compiler.st.macros.substitute`), then are trimmed; an empty key never
  matches.
- A plain key is a substring test, case-insensitive unless the entry (or the scan) says
  ``caseSensitive``; ``matchWholeWords`` makes a one-word key match only between non-word
  characters (JavaScript's ASCII ``\\W``: a non-ASCII letter is a boundary); a key of
  several words stays a substring test. A key written ``/pattern/flags`` (flags of
  ``gimsuy``) is a JavaScript regular expression, translated by
  :mod:`compiler.st.js_regex` (ASCII ``\\w``/``\\b``, ``$`` at the end only, ``y``
  matching at the buffer's start only, ...), tested against the buffer as it is, whatever
  the case and whole-word settings (SillyTavern 1.12.6's ``matchKeys``); a pattern
  JavaScript rejects (or with syntax not reproduced) is matched as plain text, as
  SillyTavern does with an invalid one.
- Regex keys come from shared lorebooks, so they run with the ``regex`` package's timeout:
  a search longer than :data:`REGEX_KEY_TIMEOUT` (50 ms) does not match and is reported as
  a ``world.regex_timeout`` warning (then the key is not tried again in that scan), and all
  regex keys of one scan share :data:`REGEX_SCAN_BUDGET` (0.5 s), after which the remaining
  regex keys do not match (one more warning). So a catastrophic pattern such as
  ``/(a|aa)+$/`` costs at most 50 ms, and a book full of them 0.5 s. A key whose counted
  repeats would make a huge compiled pattern (``/a{1000000000}/``; over
  :data:`REGEX_MAX_SIZE`) is not compiled: ``world.regex_too_complex``, no match. Plain
  keys together search at most :data:`SCAN_BYTES_BUDGET` characters (``world.scan_budget``).
- A selective entry with secondary keys also needs its ``selectiveLogic`` to hold
  (:meth:`Scanner.keys_match`): AND_ANY (0) some secondary key matches, NOT_ALL (1) not
  every one matches, NOT_ANY (2) none matches, AND_ALL (3) every one matches.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Callable, Sequence
from functools import lru_cache

import regex

from compiler.errors import Diagnostic
from compiler.inputs.lorebook import SelectiveLogic, WorldEntry
from compiler.st.js_regex import JSRegexError, translate

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
_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_BRACED_ESCAPES = frozenset("pPNx")  # \p{L}, \N{name}, \x{263a}: braces that are no count


def _regex_form(key: str) -> tuple[str, str] | None:
    """``/pattern/flags`` as (pattern, flags), or None for a plain key (SillyTavern's
    ``parseRegexFromString``)."""
    match = _REGEX_KEY.match(key)
    if match is None:
        return None
    pattern, flags = match.groups()
    if _UNESCAPED_SLASH.search(pattern):
        return None
    return pattern.replace("\\/", "/", 1), flags


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


@lru_cache(maxsize=4096)
def _whole_word(needle: str) -> re.Pattern[str]:
    """A one-word key between non-word characters (JavaScript's ``\\W`` is ASCII, and its
    ``$`` is the end of the text only)."""
    return re.compile(rf"(?:^|\W)({re.escape(needle)})(?:\Z|\W)", re.ASCII)


class _TooComplex:
    """A regex key left uncompiled: its size is over :data:`REGEX_MAX_SIZE`."""


_TOO_COMPLEX = _TooComplex()


@lru_cache(maxsize=64)
def _compile_key(pattern: str, flags: str) -> regex.Pattern[str] | _TooComplex | None:
    """The JavaScript pattern translated and compiled (:mod:`compiler.st.js_regex`:
    ASCII ``\\w``/``\\b``/``\\d``, ``$`` at the end only, ...); None if JavaScript would
    reject it or it uses syntax not reproduced (it is then plain text, as SillyTavern does
    with an invalid one); too complex if over :data:`REGEX_MAX_SIZE`."""
    if len(pattern) > REGEX_MAX_LENGTH or _pattern_size(pattern) > max(
        REGEX_MAX_SIZE, len(pattern)
    ):
        return _TOO_COMPLEX
    try:
        js = translate(pattern, flags)
        return regex.compile(js.pattern, js.flags, cache_pattern=False)
    except (JSRegexError, regex.error, ValueError, OverflowError, MemoryError, RecursionError):
        return None


MAX_SCAN_DEPTH = 1000
"""The deepest scan, in messages (SillyTavern's ``MAX_SCAN_DEPTH``)."""
_MATCHER = "\x01"
_JOINER = "\n" + _MATCHER


class Scanner:
    """The scan buffer of one scan (SillyTavern's ``WorldInfoBuffer``), with per-entry depth
    and case settings: ``\x01`` + the newest N messages (trimmed) joined with
    ``\n\x01``, then the recursion text with the same joiner (not in a min-activations
    pass); N is the entry's ``scanDepth``, else the global depth plus the min-activations
    skew, capped at :data:`MAX_SCAN_DEPTH`; N <= 0 scans nothing."""

    def __init__(
        self,
        messages: Sequence[str],
        scan_depth: int,
        case_sensitive: bool,
        whole_words: bool,
        rewrite_key: Callable[[str], str] | None,
        injected: Sequence[str] = (),
        injected_names: Sequence[str] = (),
    ) -> None:
        self._messages = messages
        self._newest: list[str] = []  # the newest messages trimmed, newest first, as read
        #: in-chat extension prompts SillyTavern scans too (``WorldInfoBuffer.addInject``)
        self.injected = [t for t in injected if t]
        names = list(injected_names) + [""] * (len(injected) - len(injected_names))
        #: what each injected prompt is (``persona``, ``authors_note``, ...), for the report
        self.injected_names = [n for t, n in zip(injected, names, strict=False) if t]
        #: where the last :meth:`keys_match` that matched found its keys: (primary key
        #: index, secondary key index or -1, source kind, source index), see :meth:`source`
        self.hit: tuple[int, int, str, int] = (0, -1, "", 0)
        self._found = ("", 0)  # the buffer and offset of the last match
        self._starts: dict[int, tuple[str, list[int]]] = {}  # a buffer's part offsets
        self.scan_depth = scan_depth
        self.skew = 0
        self.case_sensitive = case_sensitive
        self.whole_words = whole_words
        self.rewrite_key = rewrite_key
        self.recurse: list[str] = []
        self.warnings: list[Diagnostic] = []
        self._cache: dict[tuple[int, bool, int, bool], str] = {}
        self._keys: dict[str, str] = {}
        self._regex_left = REGEX_SCAN_BUDGET
        self._skipped: set[str] = set()  # regex keys that timed out or are too complex
        self._budget_spent = False
        self._scanned = 0  # characters of scan buffer searched by plain keys
        self._scan_spent = False

    @property
    def depth(self) -> int:
        """The global depth with the min-activations skew (``getDepth``)."""
        return self.scan_depth + self.skew

    def haystack(self, entry: WorldEntry, *, lower: bool = False, min_pass: bool = False) -> str:
        """The text ``entry`` scans (lower-cased when ``lower``)."""
        depth = entry.scan_depth if entry.scan_depth is not None else self.depth
        depth = min(depth, MAX_SCAN_DEPTH)
        recursion = len(self.recurse) if not min_pass else 0
        cache_key = (depth, lower, recursion, min_pass)
        if cache_key not in self._cache:
            if depth <= 0:
                text = ""
            else:
                text = _MATCHER + _JOINER.join(self._newest_first(depth))
                if self.injected:
                    text += _JOINER + _JOINER.join(self.injected)
                if recursion:
                    text += _JOINER + _JOINER.join(self.recurse)
            self._cache[cache_key] = text.lower() if lower else text
        return self._cache[cache_key]

    def _newest_first(self, depth: int) -> list[str]:
        """The newest ``depth`` messages (at most :data:`MAX_SCAN_DEPTH`), trimmed, newest
        first: made as a depth first reaches them (a scan of depth 2 reads 2 of a long chat)."""
        made, messages = self._newest, self._messages
        want = min(depth, len(messages), MAX_SCAN_DEPTH)
        while len(made) < want:
            made.append(messages[len(messages) - 1 - len(made)].strip())
        return made[:depth]

    def _rewrite(self, key: str) -> str:
        """The key with its macros filled and trimmed (once per key and scan)."""
        done = self._keys.get(key)
        if done is None:
            done = self._keys[key] = (
                self.rewrite_key(key) if self.rewrite_key is not None else key
            ).strip()
        return done

    def _case(self, entry: WorldEntry) -> bool:
        return entry.case_sensitive if entry.case_sensitive is not None else self.case_sensitive

    def matches(
        self, entry: WorldEntry, key: str, *, min_pass: bool = False, raw: bool = False
    ) -> bool:
        """Whether ``key`` is in the text ``entry`` scans (``matchKeys``): a ``/regex/``
        key on the text as it is, a plain key by the entry's case and whole-word settings.
        The key's macros are filled and it is trimmed (an empty key never matches), unless
        ``raw`` (group scoring uses the keys as written, as SillyTavern's ``getScore``)."""
        if not raw:
            key = self._rewrite(key)
            if not key:
                return False
        form = _regex_form(key)
        if form is not None:
            found = self._search(entry, key, form, self.haystack(entry, min_pass=min_pass))
            if found is not None:
                return found
        case = self._case(entry)
        haystack = self.haystack(entry, lower=not case, min_pass=min_pass)
        self._scanned += len(haystack)
        if self._scanned > SCAN_BYTES_BUDGET:
            return self._out_of_scan_budget(entry, key)
        needle = key if case else key.lower()
        whole = entry.match_whole_words if entry.match_whole_words is not None else self.whole_words
        at = haystack.find(needle)
        if at < 0:
            return False
        if whole and len(re.split(r"\s+", needle)) == 1:
            word = _whole_word(needle).search(haystack)
            if word is None:
                return False
            at = word.start(1)
        self._found = (haystack, at)
        return True

    def _search(
        self, entry: WorldEntry, key: str, form: tuple[str, str], haystack: str
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
                found = pattern.search(haystack, timeout=timeout)
                if found is not None:
                    self._found = (haystack, found.start())
                return found is not None
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
        name += f" in lorebook {entry.world!r}" if entry.world else ""
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

    def keys_match(self, entry: WorldEntry, *, min_pass: bool = False) -> bool | None:
        """A primary key matches and the secondary keys satisfy the entry's logic (checked
        only when the entry is selective and has secondary keys), stopping at the first
        key that decides, as SillyTavern's ``checkWorldInfo``. False: no primary key
        matched; None: one did, and the secondary keys failed the logic. On a match,
        :attr:`hit` says which keys and where."""
        keys = enumerate(entry.keys)
        first = next((i for i, key in keys if self.matches(entry, key, min_pass=min_pass)), -1)
        if first < 0:
            return False
        found = self._found
        if not (entry.selective and entry.secondary_keys):
            return self._hit(entry, first, -1, found)
        logic = entry.selective_logic
        hits: list[bool] = []
        for i, key in enumerate(entry.secondary_keys):
            hit = self.matches(entry, key, min_pass=min_pass)
            if (logic == SelectiveLogic.AND_ANY and hit) or (
                logic == SelectiveLogic.NOT_ALL and not hit
            ):
                return self._hit(entry, first, i, found)
            hits.append(hit)
        if logic == SelectiveLogic.NOT_ANY and not any(hits):
            return self._hit(entry, first, -1, found)
        if logic == SelectiveLogic.AND_ALL and all(hits):
            return self._hit(entry, first, -1, found)
        return None

    def _hit(self, entry: WorldEntry, first: int, second: int, found: tuple[str, int]) -> bool:
        """Record :attr:`hit` for a match by primary key ``first`` found at ``found`` (the
        buffer and the offset where :meth:`matches` found it)."""
        kind, index = self.source(entry, self._segment(*found))
        self.hit = (first, second, kind, index)
        return True

    def _segment(self, haystack: str, at: int) -> int:
        """The part of ``haystack`` (a scan buffer) that offset ``at`` is in: how many
        ``\x01`` markers start a part up to it, less one (the offsets found once a buffer)."""
        known = self._starts.get(id(haystack))
        if known is None or known[0] is not haystack:
            starts, i = [], haystack.find(_MATCHER)
            while i >= 0:
                starts.append(i)
                i = haystack.find(_MATCHER, i + 1)
            known = self._starts[id(haystack)] = (haystack, starts)
        return bisect.bisect_right(known[1], at) - 1

    def source(self, entry: WorldEntry, segment: int) -> tuple[str, int]:
        """What part ``segment`` of the entry's scan buffer is: ``("message", i)`` (the
        chat's message i, 0 the oldest), ``("injected", i)`` (:attr:`injected_names`),
        ``("recursion", n)`` (the content activated in pass n), or ``("", -1)``."""
        depth = entry.scan_depth if entry.scan_depth is not None else self.depth
        shown = max(min(depth, len(self._messages), MAX_SCAN_DEPTH), 1)
        if segment < 0:
            return "", -1
        if segment < shown:
            return "message", len(self._messages) - 1 - segment
        segment -= shown
        if segment < len(self.injected):
            return "injected", segment
        return "recursion", segment - len(self.injected) + 1

    def score(self, entry: WorldEntry, *, min_pass: bool = False) -> int:
        """How many of the entry's keys match (SillyTavern's ``getScore``, for group
        scoring): primary hits, plus secondary hits under AND_ANY, or under AND_ALL when all
        hit; 0 without primary keys. Keys are used as written, as there."""
        if not entry.keys:
            return 0
        primary = sum(self.matches(entry, k, min_pass=min_pass, raw=True) for k in entry.keys)
        if not entry.secondary_keys:
            return primary
        secondary = sum(
            self.matches(entry, k, min_pass=min_pass, raw=True) for k in entry.secondary_keys
        )
        logic = entry.selective_logic
        if logic == SelectiveLogic.AND_ANY:
            return primary + secondary
        if logic == SelectiveLogic.AND_ALL and secondary == len(entry.secondary_keys):
            return primary + secondary
        return primary
