"""SillyTavern regex scripts, read from the run context and the card.

Internal: :mod:`compiler.st.regex_run` runs them; the assemble stage applies them.

A script is SillyTavern's object (public/scripts/extensions/regex/index.js):
``{scriptName, findRegex, replaceString, trimStrings, placement, disabled, markdownOnly,
promptOnly, runOnEdit, substituteRegex, minDepth, maxDepth}``. Its fields are read the way
SillyTavern 1.12.6's engine.js uses them: flags by JavaScript truthiness, depths as
``getRegexedString`` compares them (a number, or text JavaScript reads as one, at least 0;
``null``, missing or not a number: no limit), ``placement`` a list of numbers
(``MD_DISPLAY`` 0, ``USER_INPUT`` 1, ``AI_OUTPUT`` 2, ``SLASH_COMMAND`` 3, ``WORLD_INFO`` 5).
An empty ``findRegex`` makes a script that does nothing, as there. A script SillyTavern
would fail on (not an object, ``placement`` or ``trimStrings`` not lists, ``replaceString``
or ``findRegex`` not text) is ``regex.invalid_script`` and not applied. Global scripts are
migrated as SillyTavern's ``migrateSettings`` migrates its own: ``MD_DISPLAY`` becomes
markdown-and-prompt only (alone: every placement), the legacy 4 (sendAs) ``SLASH_COMMAND``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from compiler._records import record
from compiler.errors import Diagnostic

MD_DISPLAY, USER_INPUT, AI_OUTPUT, SLASH_COMMAND, SEND_AS, WORLD_INFO = 0, 1, 2, 3, 4, 5
#: the placements a prompt is built from (the others run when a message is made or shown)
PROMPT_PLACEMENTS = frozenset({USER_INPUT, AI_OUTPUT, WORLD_INFO})
MAX_SCRIPTS = 1000
"""The most scripts read from one list (the run context's, or a card's); the rest are
``regex.too_many_scripts`` and not applied."""
#: JavaScript's numeric text; ``\d+(?:\.\d*)?``, not ``\d+\.?\d*``, so that a long run of
#: digits is not split every way before a trailing letter fails it (quadratic)
_NUMBER = re.compile(
    r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Infinity|0[xX][0-9a-fA-F]+"
)


@record(frozen=True)
class RegexScript:
    """One script, read (see the module docstring); ``file`` and ``path`` locate it."""

    name: str
    find: str
    replace: str
    trims: tuple[str, ...]
    placement: frozenset[int]
    disabled: bool
    markdown_only: bool
    prompt_only: bool
    min_depth: float | None
    max_depth: float | None
    substitute: bool
    file: str | None
    path: str

    @property
    def label(self) -> str:
        return f"regex script {self.name[:80]!r}" if self.name else "regex script"

    @property
    def runs_on_prompts(self) -> bool:
        """Whether SillyTavern runs it while building a prompt: enabled, with a pattern, not
        markdown only (unless also prompt only), at a prompt placement."""
        return (
            not self.disabled
            and bool(self.find)
            and (self.prompt_only or not self.markdown_only)
            and bool(self.placement & PROMPT_PLACEMENTS)
        )

    def selected(self, placement: int, depth: int | None, *, prompt: bool) -> bool:
        """Whether ``getRegexedString`` runs it on a text at ``placement`` and ``depth``
        (None: no depth), building a prompt (``isPrompt``) or storing a message."""
        if not ((self.prompt_only and prompt) or not (self.markdown_only or self.prompt_only)):
            return False
        if depth is not None and depth >= 0:
            if self.min_depth is not None and depth < self.min_depth:
                return False
            if self.max_depth is not None and depth > self.max_depth:
                return False
        return placement in self.placement


class _Malformed(ValueError):
    pass


def read_scripts(
    raw: Any, *, file: str | None, path: str, migrate: bool
) -> tuple[list[RegexScript], list[Diagnostic]]:
    """The scripts of a list (``path`` in ``file``), and a warning for each one not read."""
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [invalid_script(file, path, "is not a list of scripts")]
    scripts: list[RegexScript] = []
    warnings: list[Diagnostic] = []
    for i, item in enumerate(raw[:MAX_SCRIPTS]):
        where = f"{path}[{i}]"
        try:
            scripts.append(_script(item, file, where, migrate))
        except _Malformed as exc:
            warnings.append(invalid_script(file, where, str(exc)))
    if len(raw) > MAX_SCRIPTS:
        warnings.append(
            Diagnostic(
                code="regex.too_many_scripts",
                severity="warning",
                message=f"{len(raw)} regex scripts: the first {MAX_SCRIPTS} are read, the "
                "rest are not applied",
                file=file,
                path=path,
            )
        )
    return scripts, warnings


def invalid_script(file: str | None, path: str, why: str) -> Diagnostic:
    return Diagnostic(
        code="regex.invalid_script",
        severity="warning",
        message=f"regex script {why}: it is not applied",
        file=file,
        path=path,
        hint="fix or re-export the script from SillyTavern's Regex extension",
    )


def _script(item: Any, file: str | None, path: str, migrate: bool) -> RegexScript:
    if not isinstance(item, dict):
        raise _Malformed("is not an object")
    find = item.get("findRegex")
    if not _truthy(find):
        find = ""
    elif not isinstance(find, str):
        raise _Malformed("has a findRegex that is not text")
    replace = item.get("replaceString")
    if not isinstance(replace, str):
        raise _Malformed("has no replaceString text (SillyTavern fails on its first match)")
    trims = item.get("trimStrings")
    trims = [] if trims is None else trims
    if not isinstance(trims, list) or not all(isinstance(t, str) for t in trims):
        raise _Malformed("has trimStrings that are not a list of texts")
    placement = item.get("placement")
    if not isinstance(placement, list):
        raise _Malformed("has no placement list")
    places = [int(p) for p in placement if _integral(p)]
    markdown_only, prompt_only = _truthy(item.get("markdownOnly")), _truthy(item.get("promptOnly"))
    if migrate and MD_DISPLAY in places:
        others = [p for p in places if p != MD_DISPLAY]
        places = others or [USER_INPUT, AI_OUTPUT, SLASH_COMMAND, WORLD_INFO]
        markdown_only = prompt_only = True
    if migrate and SEND_AS in places:
        places = [p for p in places if p != SEND_AS] or [SLASH_COMMAND]
    name = item.get("scriptName")
    return RegexScript(
        name=name if isinstance(name, str) else "",
        find=find,
        replace=replace,
        trims=tuple(trims),
        placement=frozenset(places),
        disabled=_truthy(item.get("disabled")),
        markdown_only=markdown_only,
        prompt_only=prompt_only,
        min_depth=_depth_limit(item.get("minDepth")),
        max_depth=_depth_limit(item.get("maxDepth")),
        substitute=_truthy(item.get("substituteRegex")),
        file=file,
        path=path,
    )


def _integral(value: Any) -> bool:
    """A JSON number equal to an integer (JavaScript's ``includes`` compares numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and float(value).is_integer()


def _truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def _depth_limit(value: Any) -> float | None:
    """A ``minDepth``/``maxDepth`` as ``getRegexedString`` applies it: ``!isNaN(v) && v !==
    null && v >= 0`` (JavaScript's ``Number`` of text, ``true`` is 1); None: no limit."""
    if value is None or isinstance(value, list | dict):
        return None
    number = float(value) if isinstance(value, bool | int | float) else _js_number(str(value))
    return None if math.isnan(number) or number < 0 else number


def _js_number(text: str) -> float:
    """JavaScript's ``Number(text)`` for the forms a depth field takes; NaN otherwise."""
    text = text.strip()
    if not text:
        return 0.0
    if not _NUMBER.fullmatch(text):
        return math.nan
    if text.lower().startswith("0x"):
        try:
            return float(int(text, 16))
        except OverflowError:  # JavaScript: Infinity past the largest double
            return math.inf
    return float(text.replace("Infinity", "inf"))


def prompt_scripts(scripts: Sequence[RegexScript]) -> list[RegexScript]:
    """The scripts that can change a prompt (:attr:`RegexScript.runs_on_prompts`)."""
    return [s for s in scripts if s.runs_on_prompts]
