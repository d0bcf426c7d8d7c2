"""SillyTavern ``{{macro}}`` substitution: pure string functions, importing nothing else of
the compiler, so that readers, the assemble stage and the preset importer can all use them.

Implemented, as SillyTavern's classic ``substituteParams`` does:

0. ``<USER>`` becomes the ``user`` value, ``<BOT>`` and ``<CHAR>`` the ``char`` value;
1. ``{{// comment}}`` is removed (up to the first ``}}``, across lines);
2. ``{{newline}}`` becomes ``\\n``; ``{{noop}}`` becomes nothing;
3. ``{{trim}}`` is removed together with the newlines (``\\r?\\n``, not other whitespace)
   directly before and after it;
4. every other macro, innermost first (``{{random::{{user}}::b}}`` fills ``{{user}}`` and then
   picks), in one pass over the text: a substituted value is never scanned again, so data
   cannot smuggle macros in. ``{{name}}`` for each name in ``values`` (case-insensitive)
   becomes its value; as in SillyTavern, only the first ``{{original}}`` expands and later
   ones become empty. With a :class:`MacroEnv`, also: ``{{roll:1d20}}``, the variable macros
   (``getvar``/``setvar``/``addvar``/``incvar``/``decvar`` and their ``globalvar`` forms),
   the clock (``time``, ``date``, ``weekday``, ``isotime``, ``isodate``,
   ``datetimeformat FMT``, ``time_UTC±N``), ``{{random::a::b}}`` / ``{{random:a,b}}`` and
   ``{{pick}}``. ``values`` also carries SillyTavern's plain environment names the caller
   fills (``lastMessage``, ``model``, ``maxPrompt``, ``mesExamples``, ...).

Randomness is a function of the environment's seed, the text and the macro's offset in it
(SillyTavern's ``{{pick}}`` seeds with the chat id, the text and the offset; its
``{{random}}`` re-rolls on every evaluation): the same inputs give the same output.
``setvar`` changes a copy of the variables, seen by later macros of the same text only.

Any other ``{{...}}`` (``{{agent.plan}}``, a name missing from ``values``) is left as
written (its inner macros filled) and, when ``unknown`` is given, appended to it.
SillyTavern macro names cannot contain dots, so ``values`` keys must be plain names.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Protocol

from compiler._records import record
from compiler.errors import Diagnostic, TemplateError
from compiler.st.clock import MONTHS, format_moment, humanize

__all__ = [
    "ENVIRONMENT_MACROS",
    "MAX_MACRO_CHARS",
    "MAX_MACRO_DIGITS",
    "MAX_MACRO_STEPS",
    "STANDARD_MACROS",
    "CardNames",
    "MacroBudget",
    "MacroEnv",
    "card_values",
    "comment_spans",
    "humanize",
    "inert",
    "literal_macros",
    "send_time",
    "substitute",
]

STANDARD_MACROS: tuple[str, ...] = (
    "char",
    "user",
    "persona",
    "description",
    "personality",
    "scenario",
    "original",
    "mesExamples",
    "charVersion",
    "char_version",
)
"""The macros the compiler fills from the run context."""

ENVIRONMENT_MACROS: tuple[str, ...] = (
    "input",
    "lastMessage",
    "lastUserMessage",
    "lastCharMessage",
    "model",
    "maxPrompt",
    "idle_duration",
)
"""SillyTavern's plain environment names the compiler fills in ``values`` (from the chat, the
compile's model and budget, the card)."""


MAX_MACRO_CHARS = 32 * 1024 * 1024
"""The most characters the SillyTavern macros of one compile may produce, all its texts
together: values filled in, variables ``setvar``/``addvar`` store, macro bodies joined and
macros left as written (``{{addvar::a::{{getvar::a}}}}`` doubles a variable; 128 entries of
20 such took 1.5 GB): past it, ``template.macro_budget``, before the text is built."""

MAX_MACRO_STEPS = 1024 * 1024
"""The most steps the SillyTavern macros of one compile may take: one a macro closed, one a
die ``{{roll}}`` throws (``template.macro_budget`` past it)."""


class MacroBudget:
    """What the SillyTavern macros of one compile have spent (:data:`MAX_MACRO_CHARS`,
    :data:`MAX_MACRO_STEPS`), shared by every text the compile fills: each charge is made
    before the characters it stands for are built."""

    def __init__(self, chars: int = MAX_MACRO_CHARS, steps: int = MAX_MACRO_STEPS) -> None:
        self.max_chars, self.max_steps = chars, steps
        self.chars = 0  #: characters produced so far
        self.steps = 0  #: steps taken so far
        self.peak_variable = 0  #: the longest variable value stored so far

    def spend(self, chars: int = 0, steps: int = 0) -> None:
        """Charge ``chars`` characters and ``steps`` steps; ``template.macro_budget`` when
        either total passes its limit."""
        self.chars += chars
        self.steps += steps
        if self.chars > self.max_chars or self.steps > self.max_steps:
            raise TemplateError(
                [
                    Diagnostic(
                        code="template.macro_budget",
                        message="the SillyTavern macros of this compile would produce over "
                        f"{self.max_chars:,} characters or take over {self.max_steps:,} steps "
                        f"(so far {self.chars:,} characters, {self.steps:,} steps)",
                        hint="use fewer macros that fill in or store long text ({{getvar}} "
                        "inside {{addvar}}, {{description}}, ...), or fewer dice",
                    )
                ]
            )


@record(frozen=True)
class MacroEnv:
    """What the non-name macros read: the clock, the random seed and the variables."""

    now: datetime
    seed: int = 0
    variables: Mapping[str, str] = dataclasses.field(default_factory=dict)
    global_variables: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: computes the seed when a macro first needs it, in place of ``seed`` (a seed derived
    #: from the chat costs a hash that most compiles never use)
    seed_from: Callable[[], int] | None = dataclasses.field(default=None, compare=False, repr=False)
    #: what the macros have spent, shared by the texts of one compile (a copy made with
    #: ``dataclasses.replace`` shares it too)
    budget: MacroBudget = dataclasses.field(default_factory=MacroBudget, compare=False, repr=False)

    @functools.cached_property
    def random_seed(self) -> int:
        """The seed of ``{{random}}``, ``{{pick}}`` and ``{{roll}}``: ``seed_from()`` (computed
        once), else ``seed``."""
        return self.seed_from() if self.seed_from is not None else self.seed


_NEWLINE = re.compile(r"\{\{newline\}\}", re.IGNORECASE)
_NOOP = re.compile(r"\{\{noop\}\}", re.IGNORECASE)
_TRIM = re.compile(r"\{\{trim\}\}", re.IGNORECASE)
_NAME = re.compile(r"\{\{([A-Za-z0-9_-]+)\}\}")
_VALID_NAME = re.compile(r"[A-Za-z0-9_-]+")


def comment_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` ranges of the ``{{// comments}}`` in ``text`` (removed first)."""
    if "{{//" not in text:
        return []
    spans: list[tuple[int, int]] = []
    at = text.find("{{//")
    while at >= 0:
        end = text.find("}}", at + 4)
        if end < 0:  # no later comment can close either: linear, not quadratic
            break
        spans.append((at, end + 2))
        at = text.find("{{//", end + 2)
    return spans


def _cut(text: str, spans: list[tuple[int, int]], filler: str = "") -> str:
    """``text`` with each span replaced by ``filler``."""
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], filler]
        last = end
    out.append(text[last:])
    return "".join(out)


def _trimmed(text: str) -> str:
    """``{{trim}}`` removed with the newlines (``\\r?\\n``) right before and after it, in one
    pass over the text: each part is cut once, at indexes found by stepping over its newlines
    (a regex with ``(?:\\r?\\n)*`` around it, or cutting one newline at a time, is
    quadratic)."""
    parts = _TRIM.split(text)
    last = len(parts) - 1
    for i, part in enumerate(parts):
        start, end = 0, len(part)
        if i > 0:  # after a {{trim}}
            while True:
                if part.startswith("\n", start):
                    start += 1
                elif part.startswith("\r\n", start):
                    start += 2
                else:
                    break
        if i < last:  # before a {{trim}}
            while end > start and part[end - 1] == "\n":
                end -= 2 if end - 2 >= start and part[end - 2] == "\r" else 1
        parts[i] = part[start:end]
    return "".join(parts)


def inert(text: str) -> str:
    """``text`` with every structural macro (comments, ``{{noop}}``, ``{{trim}}``,
    ``{{newline}}``) replaced by U+FFFE instead of applied: what the text holds of its own,
    with nothing joined across a removed macro."""
    if "{{" not in text:
        return text
    text = _cut(text, comment_spans(text), "\ufffe")
    for pattern in (_NEWLINE, _NOOP, _TRIM):
        text = pattern.sub("\ufffe", text)
    return text


def substitute(
    text: str,
    values: Mapping[str, str],
    env: MacroEnv | None = None,
    unknown: list[str] | None = None,
    *,
    budget: MacroBudget | None = None,
) -> str:
    """``text`` with SillyTavern macros replaced (see the module docstring); the macros left
    as written are appended to ``unknown``. The work is charged to ``budget``, else to
    ``env``'s, else to a budget of this text alone."""
    if "{{" not in text and "<" not in text:
        return text
    table: dict[str, str] = {}
    for name, value in values.items():
        if not _VALID_NAME.fullmatch(name):
            raise ValueError(f"not a SillyTavern macro name: {name!r}")
        table[name.lower()] = value
    text = _legacy_names(text, table)
    text = _cut(text, comment_spans(text))
    text = _NEWLINE.sub("\n", text)
    text = _NOOP.sub("", text)
    text = _trimmed(text)
    if budget is None:
        budget = env.budget if env is not None else MacroBudget()
    state = _State(table, env, text, budget)
    return _scan(text, state.evaluate, unknown, budget)


_LEGACY_NAMES = re.compile(r"<(USER|BOT|CHAR)>", re.IGNORECASE)


def _legacy_names(text: str, table: Mapping[str, str]) -> str:
    """SillyTavern's first step (macros.js evaluateMacros): ``<USER>`` is ``{{user}}``,
    ``<BOT>`` and ``<CHAR>`` are ``{{char}}`` (any case), when those names are known."""

    def name(m: re.Match[str]) -> str:
        key = "user" if m.group(1).lower() == "user" else "char"
        return table.get(key, m.group(0))

    return _LEGACY_NAMES.sub(name, text) if "<" in text else text


_BRACES = re.compile(r"\{\{(?!\{)|\}\}")  # "{{{x}}": the macro starts at the last brace


MAX_FILLED_CHARS = 16 * 1024 * 1024
"""The most text the macros of one text may fill in (``{{description}}`` 2,000 times over a
long card would otherwise build hundreds of megabytes): past it, ``template.too_large``."""


def _too_much(filled: int) -> TemplateError:
    return TemplateError(
        [
            Diagnostic(
                code="template.too_large",
                message=f"SillyTavern macros would fill in over {filled:,} characters of text; "
                f"the limit is {MAX_FILLED_CHARS:,}",
                hint="use fewer macros that stand for long text ({{description}}, "
                "{{mesExamples}}, ...) in one entry",
            )
        ]
    )


def _scan(
    text: str,
    evaluate: Callable[[str, int], str | None],
    unknown: list[str] | None,
    budget: MacroBudget,
) -> str:
    """One pass over ``text``: each ``{{...}}``, innermost first, becomes what ``evaluate``
    gives for its body (with its inner macros filled) and its offset, or stays as written.
    All the values filled in together stay within :data:`MAX_FILLED_CHARS`; each body joined,
    value filled in and macro left as written is charged to ``budget`` first."""
    stack: list[tuple[int, list[str]]] = []  # open macros: offset, parts of the body so far
    out: list[str] = []
    last = 0
    filled = 0
    for match in _BRACES.finditer(text):
        at = match.start()
        parts = stack[-1][1] if stack else out
        if match.group() == "{{":
            parts.append(text[last:at])
            stack.append((at, []))
        elif stack:
            parts.append(text[last:at])
            offset, body_parts = stack.pop()
            budget.spend(sum(map(len, body_parts)), 1)
            body = "".join(body_parts)
            value = evaluate(body, offset)
            filled += len(value) if value is not None else 0
            if filled > MAX_FILLED_CHARS:
                raise _too_much(filled)
            budget.spend(len(value) if value is not None else len(body) + 4)
            if value is None:
                value = "{{" + body + "}}"
                if unknown is not None:
                    unknown.append(text[offset : match.end()])
            (stack[-1][1] if stack else out).append(value)
        else:
            continue
        last = match.end()
    for _, body_parts in stack:  # unclosed, outermost first: as written
        out += ["{{", *body_parts]
    out.append(text[last:])
    return "".join(out)


_DICE = re.compile(
    r"roll[ :]\s*(?:([0-9]*)d([0-9]+)|([0-9]+))\s*(?:([+-])\s*([0-9]+))?\s*", re.IGNORECASE
)
_RANDOM = re.compile(r"(random|pick)\s?::?(.+)", re.IGNORECASE | re.DOTALL)
_GETVAR = re.compile(r"(get|inc|dec)(global)?var::(.+)", re.IGNORECASE | re.DOTALL)
_SETVAR = re.compile(r"(set|add)(global)?var::([^:]+)::(.*)", re.IGNORECASE | re.DOTALL)
_DATETIMEFORMAT = re.compile(r"datetimeformat +(.*)", re.IGNORECASE | re.DOTALL)
_TIME_UTC = re.compile(r"time_utc([+-][0-9]+)", re.IGNORECASE)
_MAX_DICE = 1000
MAX_MACRO_DIGITS = 15
"""The most digits of a number in a macro's arguments (``{{roll:1d20+3}}``,
``{{time_UTC+2}}``): a macro with a longer one is left as written, as an unsupported one is
(warning ``template.unknown_st_macro``)."""


def _whole(digits: str) -> int | None:
    """``digits`` (ASCII, possibly signed) as a number; None past :data:`MAX_MACRO_DIGITS`."""
    return int(digits) if len(digits.lstrip("+-")) <= MAX_MACRO_DIGITS else None


class _State:
    """One substitution: the names, the environment, and the variables ``setvar`` changed."""

    def __init__(
        self, table: dict[str, str], env: MacroEnv | None, text: str, budget: MacroBudget
    ) -> None:
        self.table = table
        self.env = env
        self.text = text
        self.budget = budget
        self.original_used = False
        self.vars = (dict(env.variables), dict(env.global_variables)) if env else ({}, {})

    def rng(self, kind: str, offset: int) -> random.Random:
        assert self.env is not None
        return random.Random(f"{self.env.random_seed}\x00{kind}\x00{offset}\x00{self.text}")

    def evaluate(self, body: str, offset: int) -> str | None:
        key = body.lower()
        if key in self.table:
            if key == "original":
                if self.original_used:
                    return ""
                self.original_used = True
            return self.table[key]
        if self.env is None:
            return None
        return self._environment(body, key, offset, self.env)

    def _environment(self, body: str, key: str, offset: int, env: MacroEnv) -> str | None:
        if key in _CLOCK:
            return format_moment(env.now, _CLOCK[key])
        if (m := _DATETIMEFORMAT.fullmatch(body)) is not None:
            return format_moment(env.now, m.group(1))
        if (m := _TIME_UTC.fullmatch(body)) is not None:
            hours = _whole(m.group(1))
            if hours is None or abs(hours) > 24:
                return None
            now = env.now if env.now.tzinfo else env.now.astimezone()
            return format_moment(now.astimezone(UTC) + timedelta(hours=hours), "LT")
        if (m := _RANDOM.fullmatch(body)) is not None:
            options = _options(m.group(2))
            if not options:
                return ""
            return options[self.rng(m.group(1).lower(), offset).randrange(len(options))]
        if (m := _DICE.fullmatch(body)) is not None:
            return self._roll(m, offset)
        if (m := _SETVAR.fullmatch(body)) is not None:
            return self._setvar(m)
        if (m := _GETVAR.fullmatch(body)) is not None:
            variables = self.vars[1 if m.group(2) else 0]
            name = m.group(3).strip()
            verb = m.group(1).lower()
            if verb == "get":
                return variables.get(name, "")
            variables[name] = js_number(
                _as_number(variables.get(name, "")) + (1 if verb == "inc" else -1)
            )
            return variables[name]
        return None

    def _roll(self, m: re.Match[str], offset: int) -> str | None:
        count = _whole(m.group(1) or "1") if m.group(3) is None else 1
        sides = _whole(m.group(2) or m.group(3))
        bonus = _whole(m.group(5) or "0")
        if count is None or sides is None or bonus is None or count > _MAX_DICE or sides < 1:
            return None
        self.budget.spend(steps=count)
        rng = self.rng("roll", offset)
        total = sum(rng.randint(1, sides) for _ in range(count))
        if m.group(4):
            total += bonus * (1 if m.group(4) == "+" else -1)
        return str(total)

    def _setvar(self, m: re.Match[str]) -> str:
        variables = self.vars[1 if m.group(2) else 0]
        name, value = m.group(3).strip(), m.group(4)
        if m.group(1).lower() == "set":
            self.budget.spend(len(value))
            variables[name] = value
        else:  # addvar: numbers add, anything else appends (SillyTavern's addLocalVariable)
            old = variables.get(name, "")
            try:
                variables[name] = js_number(
                    _as_number(old, strict=True) + _as_number(value, strict=True)
                )
            except ValueError:
                self.budget.spend(len(old) + len(value))
                variables[name] = old + value
        self.budget.peak_variable = max(self.budget.peak_variable, len(variables[name]))
        return ""


def _as_number(text: str, *, strict: bool = False) -> float:
    try:
        return float(text) if text.strip() else 0.0
    except ValueError:
        if strict:
            raise
        return 0.0


def js_number(value: float) -> str:
    """A number as JavaScript's ``String()`` prints it (``3``, not ``3.0``; ``1e+21``,
    ``1e-7``, ``0.00001``, ``Infinity``); an integer is a double first, as in JavaScript."""
    value = float(value)
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    mantissa, _, exponent = repr(value).partition("e")
    if not exponent:
        return mantissa
    power = int(exponent)
    if -7 < power < 0:  # JavaScript writes these in full
        return format(Decimal(repr(value)), "f")
    return f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"


def _options(raw: str) -> list[str]:
    """``{{random}}``'s choices: split on ``::`` as given, else on commas (``\\,`` a literal
    comma) and trimmed."""
    if "::" in raw:
        return raw.split("::")
    return [part.replace("\ufffd", ",").strip() for part in raw.replace("\\,", "\ufffd").split(",")]


#: moment.js formats of SillyTavern's clock macros
_CLOCK: dict[str, str] = {
    "time": "LT",
    "date": "LL",
    "weekday": "dddd",
    "isotime": "HH:mm",
    "isodate": "YYYY-MM-DD",
}

#: utils.js parseTimestamp's ``/(\w+)\s(\d{1,2}),\s(\d{4})\s(\d{1,2}):(\d{1,2})(am|pm)/i``
#: (ASCII ``\w``, as JavaScript's); a match starts where a word does, so ``(?<!\w)`` only
#: spares the search from retrying inside each word (quadratic on a long word)
_MERIDIEM = re.compile(
    r"(?<!\w)(\w+)\s(\d{1,2}),\s(\d{4})\s(\d{1,2}):(\d{1,2})(am|pm)", re.IGNORECASE | re.ASCII
)
_HUMANIZED = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})@(\d{1,2})h(\d{1,2})m(\d{1,2})s()")
_HUMANIZED_MS = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2}) @(\d{1,2})h (\d{1,2})m (\d{1,2})s (\d{1,3})ms"
)


def send_time(value: str | float) -> datetime | None:
    """A message's ``send_date`` as SillyTavern reads it (public/scripts/utils.js
    timestampToMoment): Unix milliseconds (UTC), ``June 19, 2023 2:20pm`` (local: naive),
    ``2024-7-12@01h31m37s`` and ``2024-6-5 @14h 56m 50s 682ms`` (UTC); and ISO 8601, which
    later SillyTavern versions write. None: not a time SillyTavern can read."""
    try:
        if isinstance(value, int | float) or (value.isascii() and value.isdigit()):
            number = float(value)
            if not math.isfinite(number) or number < 0:
                return None
            return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=number)
        if m := _MERIDIEM.search(value):
            month = next(
                (i for i, name in enumerate(MONTHS, 1) if name.lower().startswith(m[1].lower())),
                0,
            )
            if len(m[1]) < 3 or not month:
                return None
            hour = int(m[4]) % 12 + (12 if m[6].lower() == "pm" else 0)
            return datetime(int(m[3]), month, int(m[2]), hour, int(m[5]))
        if m := _HUMANIZED.search(value) or _HUMANIZED_MS.search(value):
            y, mo, d, h, mi, sec = (int(x) for x in m.groups()[:6])
            return datetime(y, mo, d, h, mi, sec, int(m[7] or 0) * 1000, tzinfo=UTC)
        return datetime.fromisoformat(value.strip()) if value.strip() else None
    except (ValueError, OverflowError):
        return None


def literal_macros(text: str, names: tuple[str, ...] = ()) -> list[str]:
    """The ``{{...}}`` of ``text`` that :func:`substitute` would leave as written when it
    knows :data:`STANDARD_MACROS`, :data:`ENVIRONMENT_MACROS` and ``names``."""
    found: list[str] = []
    values = dict.fromkeys((*STANDARD_MACROS, *ENVIRONMENT_MACROS, *names), "")
    substitute(text, values, MacroEnv(now=datetime(2000, 1, 1)), found)
    return found


class CardNames(Protocol):
    """The character card fields the standard macros read (a ``CharacterCard`` has them)."""

    @property
    def name(self) -> str: ...
    @property
    def nickname(self) -> str | None: ...
    @property
    def description(self) -> str: ...
    @property
    def personality(self) -> str: ...
    @property
    def scenario(self) -> str: ...
    @property
    def mes_example(self) -> str: ...
    @property
    def character_version(self) -> str: ...


def _field(text: str) -> str:
    """A card or persona field as SillyTavern's ``getCharacterCardFields`` gives it to the
    macros: trimmed, without ``\r`` (``baseChatReplace``)."""
    return text.strip().replace("\r", "")


def card_values(card: CardNames | None, *, user: str = "User", persona: str = "") -> dict[str, str]:
    """The standard macro values for a character and persona (without ``original``).

    ``{{char}}`` is the card's V3 ``nickname`` when set, else its name. ``{{mesExamples}}``
    is the card's ``mes_example``, ``{{charVersion}}`` (``{{char_version}}``) its
    ``character_version``.
    """
    values = {"user": user, "persona": _field(persona)}
    if card is None:
        fields = ("char", "description", "personality", "scenario", "mesExamples", "charVersion")
        values.update(dict.fromkeys(fields, ""), char_version="")
        return values
    values.update(
        char=card.nickname or card.name,
        description=_field(card.description),
        personality=_field(card.personality),
        scenario=_field(card.scenario),
        mesExamples=_field(card.mes_example),
        charVersion=card.character_version,
        char_version=card.character_version,
    )
    return values
