"""SillyTavern regex scripts on the outgoing prompt, as SillyTavern 1.12.6 runs them.

Internal: the assemble stage applies them (``Assembler.regex_scripts``).

Which scripts (public/scripts/extensions/regex/engine.js ``getRegexedString``): the run
context's ``regexScripts`` (SillyTavern's global ``extension_settings.regex``), then the
card's ``data.extensions.regex_scripts``, but the card's only when the run context sets
``allowCardRegex``: SillyTavern runs a card's scripts only once the user allowed them for
that card (``character_allowed_regex``). Without it, each card script that would change the
prompt is reported (``regex.card_scripts_not_allowed``) and not applied.

Where, as SillyTavern calls ``getRegexedString`` while building a prompt:

- chat messages (public/script.js ``Generate``, ``coreChat``): a user message at
  ``USER_INPUT``, an assistant or narrator (system) message at ``AI_OUTPUT``, at depth 0 for
  the newest message, counting the messages SillyTavern keeps in its ``coreChat`` (tool
  calls and their results, which SillyTavern stores as hidden system rows, are neither
  changed nor counted). World info scans the changed messages, as there;
- world info entries (world-info.js ``checkWorldInfo``): each activated entry's content,
  macros filled, at ``WORLD_INFO``, with the entry's depth for ``@D`` entries (default 4)
  and no depth for the others; an entry left empty is dropped;
- an empty chat's greeting (``getFirstMessage``, then ``Generate``): the scripts that store
  messages run on the card's text, then macros are filled, then the prompt pass at depth 0.

On a prompt pass the scripts with ``promptOnly`` run, and those with neither
``promptOnly`` nor ``markdownOnly``: those also changed the stored messages when
SillyTavern saved them, and run again here, as there. ``markdownOnly`` scripts never touch
the prompt. ``SLASH_COMMAND`` and ``MD_DISPLAY`` run where a message is made or shown,
never while a prompt is built: a script placed only there is reported
(``regex.placement_not_applicable``). ``runOnEdit`` is about editing messages: not used.

How (``runRegexScript``): ``findRegex`` (macros filled first with ``substituteRegex``) is
read by :func:`compiler.st.js_regex.from_string` and translated; every match (the
first without ``g``) is replaced by ``replaceString`` in which ``{{match}}`` is ``$0`` and
``$N`` is the match or group N with each of ``trimStrings`` (macros filled) removed, an
absent group empty; past the groups JavaScript's replacer arguments follow (the match's
offset, then the whole text). Nothing else is special: ``$&``, ``$<name>`` and ``$$`` stay
as written. Then macros are filled in the result.

Every match (the first without ``g``) is found as JavaScript finds them: after an empty
match the next search starts one character on (:func:`_js_replace`).

Bounds (hostile cards): each application runs with the ``regex`` package's timeout,
:data:`SCRIPT_TIMEOUT`, and all of a compile's share :data:`SCRIPTS_BUDGET` (both checked
in the replacer too, at each ``$N`` and each trim string, and a replacement whose ``$N``
would take it past :data:`MAX_GROWTH` is refused before it is joined); patterns are refused
by the lorebook keys' size limits (:mod:`compiler.st.world.activation`) and
:data:`MAX_TRANSLATED`; a compile's scripts may add at most
:data:`MAX_GROWTH` characters. A script that runs over, or whose pattern SillyTavern would
not compile (``regex.invalid_pattern``), that this compiler cannot reproduce
(``regex.unsupported_syntax``) or is too large (``regex.too_complex``), is reported once
and not applied from then on.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import regex

from compiler.errors import Diagnostic
from compiler.inputs.run import ChatMessageIn, RunContext
from compiler.st.js_regex import JSRegex, JSRegexError, from_string, translate
from compiler.st.macros import inert
from compiler.st.regex_scripts import (
    AI_OUTPUT,
    PROMPT_PLACEMENTS,
    USER_INPUT,
    WORLD_INFO,
    RegexScript,
    prompt_scripts,
    read_scripts,
)
from compiler.st.world.activation import REGEX_MAX_LENGTH, REGEX_MAX_SIZE, _pattern_size
from compiler.st.world.place import world_position

SCRIPT_TIMEOUT = 0.1
"""Seconds one script may take on one text (``regex.timeout`` past it)."""
SCRIPTS_BUDGET = 1.0
"""Seconds all script applications of one compile may take together; past it the rest are
skipped (one ``regex.timeout``)."""
MAX_GROWTH = 16 * 1024 * 1024
"""Characters a compile's scripts may add to its texts (``regex.output_too_large``)."""
MAX_TRANSLATED = 2 * REGEX_MAX_LENGTH
"""The longest pattern compiled once translated, in characters: JavaScript's classes and
boundaries are spelled out (``\\b`` becomes 70 characters), and compiling takes time in
proportion (~0.2 s for this many, outside any timeout). Longer is ``regex.too_complex``."""
DEFAULT_DEPTH = 4  # world-info.js DEFAULT_DEPTH, an @D entry's depth when it has none
_OPEN = "<<agent."  # compiler._assemble.markers.OPEN (a later stage)
_MATCH_MACRO = re.compile(r"\{\{match\}\}", re.IGNORECASE)
_GROUP_REF = re.compile(r"\$([0-9]+)")
_TARGETS = {USER_INPUT: "a user message", AI_OUTPUT: "an assistant message"}
Filled = Callable[[str], tuple[str, int]]
"""Macro filling: text -> (filled text, ``<<agent.`` openers the filled-in values brought)."""


class _Stop(Exception):
    """Raised in a replacer to abandon one application: ``timeout``, ``size``, or ``fails``
    (where SillyTavern's replacer throws)."""


def script_runner(ctx: RunContext, filled: Filled, warnings: list[Diagnostic]) -> ScriptRunner:
    """The run's scripts (global, then the card's when allowed) as a runner; what is not
    applied is reported in ``warnings``."""
    scripts, found = read_scripts(
        ctx.regex_scripts, file=ctx.file, path="regexScripts", migrate=True
    )
    card = ctx.card
    if card is not None and "regex_scripts" in card.extensions:
        path = ("data." if card.card_version > 1 else "") + "extensions.regex_scripts"
        own, bad = read_scripts(
            card.extensions["regex_scripts"], file=card.origin, path=path, migrate=False
        )
        found += bad
        if ctx.allow_card_regex:
            scripts += own
        else:
            found += [_not_allowed(s) for s in prompt_scripts(own)]
    found += [_not_applicable(s) for s in scripts if _placed_elsewhere(s)]
    warnings += found
    return ScriptRunner(prompt_scripts(scripts), filled, warnings)


def _placed_elsewhere(script: RegexScript) -> bool:
    """Enabled, not display-only, and placed only where no prompt is built."""
    live = not script.disabled and bool(script.find)
    live = live and (script.prompt_only or not script.markdown_only)
    return live and bool(script.placement) and not script.placement & PROMPT_PLACEMENTS


def _not_allowed(script: RegexScript) -> Diagnostic:
    return Diagnostic(
        code="regex.card_scripts_not_allowed",
        severity="warning",
        message=f"the card's {script.label} would change the prompt, but card scripts run only "
        "when the user allows them (SillyTavern asks once per card): it is not applied",
        file=script.file,
        path=script.path,
        hint='set "allowCardRegex": true in the run context to run the card\'s scripts',
    )


def _not_applicable(script: RegexScript) -> Diagnostic:
    return Diagnostic(
        code="regex.placement_not_applicable",
        severity="warning",
        message=f"{script.label} runs only on slash-command output or on display, not while "
        "a prompt is built: it is not applied",
        file=script.file,
        path=script.path,
        hint="place it at user input, AI output or world info to change prompts",
    )


class ScriptRunner:
    """Applies the scripts to a compile's texts, within the compile's time and size bounds."""

    def __init__(
        self, scripts: Sequence[RegexScript], filled: Filled, warnings: list[Diagnostic]
    ) -> None:
        self.scripts = list(scripts)
        self.filled = filled
        self.warnings = warnings
        self._compiled: dict[tuple[int, str], tuple[regex.Pattern[str], JSRegex] | None] = {}
        self._dead: set[int] = set()  # scripts reported and not applied any more
        self._left = SCRIPTS_BUDGET
        self._grown = 0
        self._spent = False
        self._chat: dict[tuple[int, int], str] = {}

    def fill(self, text: str) -> str:
        return self.filled(text)[0] if "{{" in text else text

    def apply(self, text: str, placement: int, *, depth: int | None, prompt: bool = True) -> str:
        """``text`` after the scripts ``getRegexedString`` runs at ``placement`` and
        ``depth`` (None: none), building a prompt or (``prompt`` False) storing a message.
        All of it (choosing scripts too) counts towards the compile's budget."""
        if not text or not self.scripts:
            return text
        if self._left <= 0:
            self._out_of_budget(None)
            return text
        start = time.perf_counter()
        end = start + self._left  # the compile's budget ends here
        try:
            for index, script in enumerate(self.scripts):
                if not text:  # runRegexScript returns an empty text as it is
                    break
                if index in self._dead or not script.selected(placement, depth, prompt=prompt):
                    continue
                if time.perf_counter() >= end:
                    self._out_of_budget(script)
                    break
                text = self._run(index, script, text, placement, end)
        finally:
            self._left -= time.perf_counter() - start
        return text

    def chat(self, messages: Sequence[ChatMessageIn]) -> Sequence[ChatMessageIn]:
        """``messages`` (a suffix of the chat, oldest first) as the prompt sends them; the
        newest are done first, so a spent budget leaves the oldest unchanged. Without
        scripts, ``messages`` itself (a lazily validated chat stays lazy)."""
        if not self.scripts:
            return messages
        out = list(messages)
        depth = 0
        for i in range(len(out) - 1, -1, -1):
            message = out[i]
            placement = _placement(message)
            if placement is None:
                continue
            key = (id(message), depth)
            if key not in self._chat:
                self._chat[key] = self.apply(message.content or "", placement, depth=depth)
            if self._chat[key] != (message.content or ""):
                out[i] = message.model_copy(update={"content": self._chat[key]})
            depth += 1
        return out

    def world(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Activated world info ``entries`` with ``WORLD_INFO`` scripts run on their content
        (macros filled first, as SillyTavern fills them before); the others as they are."""
        if not any(WORLD_INFO in s.placement for s in self.scripts):
            return entries
        out: list[dict[str, Any]] = []
        chosen: dict[int | None, bool] = {}
        for i, entry in enumerate(entries):
            if self._left <= 0:  # choosing scripts too counts towards the budget
                self._out_of_budget(None)
                out += entries[i:]
                break
            content, depth = entry.get("content"), _entry_depth(entry)
            if not isinstance(content, str) or not self._chosen(chosen, depth):
                out.append(entry)
                continue
            text, from_values = self.filled(content)
            if text.count(_OPEN) > inert(content).count(_OPEN) + from_values:
                text = content  # macros assembled an opener: the marker check must see them
            out.append({**entry, "content": self.apply(text, WORLD_INFO, depth=depth)})
        return out

    def _chosen(self, chosen: dict[int | None, bool], depth: int | None) -> bool:
        """Whether a script runs on world info at ``depth`` (remembered per depth in
        ``chosen``; the time it takes counts towards the compile's budget)."""
        if depth not in chosen:
            start = time.perf_counter()
            chosen[depth] = any(s.selected(WORLD_INFO, depth, prompt=True) for s in self.scripts)
            self._left -= time.perf_counter() - start
        return chosen[depth]

    def greeting(self, text: str, fill: Callable[[str], str]) -> str:
        """An empty chat's greeting: stored (``getFirstMessage``), macros filled by
        ``fill``, then sent as the only message (depth 0)."""
        stored = self.apply(text, AI_OUTPUT, depth=None, prompt=False)
        return self.apply(fill(stored), AI_OUTPUT, depth=0)

    # -- one application ---------------------------------------------------------------
    def _run(self, index: int, script: RegexScript, text: str, placement: int, end: float) -> str:
        """One script on one text, by :data:`SCRIPT_TIMEOUT` or the budget's ``end``."""
        start = time.perf_counter()
        compiled = self._compile(index, script)
        if compiled is None:
            return text
        return self._substitute(index, script, compiled, text, placement, (start, end))

    def _compile(
        self, index: int, script: RegexScript
    ) -> tuple[regex.Pattern[str], JSRegex] | None:
        """The script's pattern, compiled once per text of ``findRegex``; None (reported,
        and the script is dead) when it cannot be."""
        find = self.fill(script.find) if script.substitute else script.find
        key = (index, find)
        if key in self._compiled:
            return self._compiled[key]
        result: tuple[regex.Pattern[str], JSRegex] | None = None
        if len(find) > REGEX_MAX_LENGTH:
            self._fail(index, script, "regex.too_complex", f"is over {REGEX_MAX_LENGTH} characters")
        elif (parsed := from_string(find)) is None:
            self._fail(index, script, "regex.invalid_pattern", "has no pattern SillyTavern reads")
        else:
            try:
                js = translate(*parsed)
                if len(js.pattern) > MAX_TRANSLATED:
                    self._fail(
                        index, script, "regex.too_complex",
                        f"is over {MAX_TRANSLATED} characters once translated from JavaScript",
                    )  # fmt: skip
                elif _pattern_size(js.pattern) > max(REGEX_MAX_SIZE, len(js.pattern)):
                    self._fail(
                        index, script, "regex.too_complex",
                        f"is larger than {REGEX_MAX_SIZE} items once its counted repeats are "
                        "multiplied out",
                    )  # fmt: skip
                else:
                    result = (regex.compile(js.pattern, js.flags, cache_pattern=False), js)
            except JSRegexError as exc:
                code = "regex.invalid_pattern" if exc.invalid else "regex.unsupported_syntax"
                why = (
                    "does not compile in JavaScript either"
                    if exc.invalid
                    else ("uses syntax this compiler does not run")
                )
                self._fail(index, script, code, f"{why}: {exc.reason}"[:200])
            except (regex.error, ValueError, OverflowError, MemoryError, RecursionError) as exc:
                self._fail(index, script, "regex.unsupported_syntax", f"cannot be run: {exc}"[:200])
        self._compiled[key] = result
        return result

    def _substitute(
        self,
        index: int,
        script: RegexScript,
        compiled: tuple[regex.Pattern[str], JSRegex],
        text: str,
        placement: int,
        window: tuple[float, float],
    ) -> str:
        """The replacement, stopped at the script's deadline (its start plus
        :data:`SCRIPT_TIMEOUT`, or the budget's end when sooner)."""
        pattern, js = compiled
        start, end = window
        deadline = min(start + SCRIPT_TIMEOUT, end)
        limit = len(text) + MAX_GROWTH - self._grown
        try:
            out = _js_replace(
                pattern,
                lambda: _replacer(script, js, text, self.fill, deadline, limit),
                text,
                js.count,
                deadline,
            )
        except (TimeoutError, _Stop) as exc:
            where = _TARGETS.get(placement, "a world info entry")
            if str(exc) not in ("fails", "size") and deadline == end:
                self._out_of_budget(script)  # the compile's budget, not the script, ran out
            elif str(exc) == "fails":
                self._fail(
                    index, script, "regex.invalid_script",
                    f"fails in SillyTavern on {where}: its replacement's $N past the groups "
                    "is a value SillyTavern cannot filter or print",
                )  # fmt: skip
            elif str(exc) == "size":
                self._fail(
                    index, script, "regex.output_too_large",
                    f"would make {where} over {MAX_GROWTH // (1024 * 1024)} MiB larger",
                )  # fmt: skip
            else:
                self._fail(
                    index, script, "regex.timeout",
                    f"ran over {SCRIPT_TIMEOUT * 1000:.0f} ms on {where}",
                )  # fmt: skip
            return text
        self._grown += max(0, len(out) - len(text))
        return out

    def _fail(self, index: int, script: RegexScript, code: str, why: str) -> None:
        self._dead.add(index)
        self.warnings.append(
            Diagnostic(
                code=code,
                severity="warning",
                message=f"{script.label} {why}: it is not applied",
                file=script.file,
                path=script.path,
                hint=_HINTS.get(code),
            )
        )

    def _out_of_budget(self, script: RegexScript | None) -> None:
        self._left = min(self._left, 0.0)
        if not self._spent:
            self._spent = True
            what = f"{script.label} and every later application are" if script else "the rest are"
            self.warnings.append(
                Diagnostic(
                    code="regex.timeout",
                    severity="warning",
                    message=f"regex scripts used up their {SCRIPTS_BUDGET:g} s for this compile: "
                    f"{what} skipped",
                    file=script.file if script else None,
                    path=script.path if script else None,
                    hint=_HINTS["regex.timeout"],
                )
            )


_HINTS = {
    "regex.timeout": "nested or counted repeats such as (a|aa)+ can take exponential time: "
    "simplify the pattern",
    "regex.too_complex": "simplify the pattern",
    "regex.unsupported_syntax": "rewrite the pattern without that syntax",
}


def _replacer(
    script: RegexScript,
    js: JSRegex,
    text: str,
    fill: Callable[[str], str],
    deadline: float,
    limit: int,
) -> Callable[[regex.Match[str]], str]:
    """``runRegexScript``'s replacer function, checking the deadline and the size: within
    one replacement too (each ``$N`` and each trim string), so that no single match can
    take longer than the deadline or build a text over the limit before it is checked."""
    template = _MATCH_MACRO.sub("$0", script.replace)
    size = [len(text)]

    def in_time() -> None:
        if time.perf_counter() > deadline:
            raise _Stop("timeout")

    def replace(match: regex.Match[str]) -> str:
        in_time()
        groups = match.groups()
        room = [limit - size[0] + match.end() - match.start()]  # what this one may add

        def value(ref: re.Match[str]) -> str:
            in_time()
            piece = _group_value(ref, match, groups, script, js, text, fill, in_time)
            room[0] -= len(piece)
            if room[0] < 0:
                raise _Stop("size")
            return piece

        out = fill(_GROUP_REF.sub(value, template))
        size[0] += len(out) - (match.end() - match.start())
        if size[0] > limit:
            raise _Stop("size")
        return out

    return replace


class _EmptyMatch(Exception):
    """An empty match in a global replacement: from there JavaScript and ``sub`` differ."""


def _js_replace(
    pattern: regex.Pattern[str],
    make_replace: Callable[[], Callable[[regex.Match[str]], str]],
    text: str,
    count: int,
    deadline: float,
) -> str:
    """JavaScript's ``String.prototype.replace`` (every match, or the first when ``count``
    is 1), by ``deadline``, with a fresh replacer from ``make_replace``. After an empty
    match the next search starts one character later (``AdvanceStringIndex``), where
    Python's ``sub`` searches the same place again for a non-empty match (``/x*?|a/g`` on
    ``a`` leaves the ``a`` in JavaScript, ``sub`` replaces it). So ``sub`` (C speed) runs
    until a global replacement meets an empty match; then the search is redone the
    JavaScript way."""
    replace = make_replace()

    def non_empty(match: regex.Match[str]) -> str:
        if count != 1 and match.start() == match.end():
            raise _EmptyMatch
        return replace(match)

    try:
        left = max(deadline - time.perf_counter(), 0.001)
        return pattern.sub(non_empty, text, count=count, timeout=left)
    except _EmptyMatch:
        replace = make_replace()  # from the start: the replacer counts what it made
    out: list[str] = []
    last = pos = 0
    while pos <= len(text):
        left = max(deadline - time.perf_counter(), 0.001)
        match = pattern.search(text, pos, timeout=left)
        if match is None:
            break
        out.append(text[last : match.start()])
        out.append(replace(match))
        last = match.end()
        pos = last + 1 if match.end() == match.start() else last
    out.append(text[last:])
    return "".join(out)


def _group_value(
    ref: re.Match[str],
    match: regex.Match[str],
    groups: tuple[str | Any, ...],
    script: RegexScript,
    js: JSRegex,
    text: str,
    fill: Callable[[str], str],
    in_time: Callable[[], None],
) -> str:
    """What ``$N`` of the replacement is for ``match`` (see the module docstring)."""
    digits = ref.group(1).lstrip("0") or "0"
    number = int(digits) if len(digits) < 10 else len(groups) + 9
    if number <= len(groups):
        found = match.group(number)
        return _trimmed(found, script.trims, fill, in_time) if found else ""
    extra = number - len(groups)  # replacer arguments: offset, text, groups object
    if extra == 1:
        offset = _utf16_length(text[: match.start()])
        if offset and script.trims:
            raise _Stop("fails")  # filterString on a number: a TypeError there
        return str(offset) if offset else ""
    if extra == 2:
        return _trimmed(text, script.trims, fill, in_time)
    if extra == 3 and js.named:
        raise _Stop("fails")  # a null-prototype object: String() throws there
    return ""


def _trimmed(
    text: str, trims: tuple[str, ...], fill: Callable[[str], str], in_time: Callable[[], None]
) -> str:
    """SillyTavern's ``filterString``: each trim string (macros filled) removed."""
    for trim in trims:
        in_time()
        trim = fill(trim)
        if trim:
            text = text.replace(trim, "")
    return text


def _utf16_length(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _placement(message: ChatMessageIn) -> int | None:
    """A chat message's placement, or None for one SillyTavern keeps out of ``coreChat``."""
    if message.role == "user":
        return USER_INPUT
    if message.role == "system" or (message.role == "assistant" and not message.tool_calls):
        return AI_OUTPUT
    return None


def _entry_depth(entry: dict[str, Any]) -> int | None:
    """An entry's depth for the scripts' depth range: ``@D`` entries only."""
    if world_position(entry) != "at_depth":
        return None
    depth = entry.get("depth")
    return depth if isinstance(depth, int) and not isinstance(depth, bool) else DEFAULT_DEPTH
