"""JavaScript regular expressions as SillyTavern builds them, translated to the ``regex`` package.

Internal: used by :mod:`compiler.st.regex_scripts`.

:func:`from_string` is SillyTavern's ``regexFromString`` (public/scripts/utils.js, 1.12.6):
``/pattern/flags`` is split at the last ``/`` of the first line that has one, and text after
the flags is ignored; flags outside ``gmixXsuUAJ`` or repeated make the whole text the
pattern, with no flags (so ``/x/y``, sticky, is the literal text ``/x/y``); text without a
leading ``/`` is the pattern (its first line), with no flags.

:func:`translate` turns a JavaScript pattern and its flags into a pattern for the ``regex``
package with the same matches, or raises :class:`JSRegexError`: ``invalid`` when JavaScript
rejects the pattern too (SillyTavern then skips the script), otherwise syntax this module
does not reproduce. As ECMAScript defines them (with its Annex B for patterns without ``u``):

- ``.`` excludes the four line terminators (``\\n``, ``\\r``, U+2028, U+2029) unless ``s``;
  ``^``/``$`` are the input's ends, or with ``m`` also next to a line terminator (Python's
  ``$`` would also match before a final newline);
- ``\\d``, ``\\w``, ``\\b`` are ASCII; ``\\s`` is JavaScript's whitespace set (with ``\\ufeff``,
  without ``\\x1c``-``\\x1f``); ``\\cX``, ``\\xHH``, ``\\uHHHH`` (a surrogate pair is one
  character), ``\\u{H...}`` and ``\\p{...}`` with ``u``; ``[\\b]`` is a backspace; ``[]``
  matches nothing and ``[^]`` any character;
- a backreference to a group that did not take part (or is still open) matches the empty
  string, as in JavaScript (Python's would fail); ``\\k<name>``; named groups
  ``(?<name>...)``; lookbehind of any length;
- without ``u``: a ``{`` that is no quantifier, a lone ``]`` or ``}``, and an escaped
  letter with no meaning (``\\e``, ``\\z``, ``\\A``) are literal; ``\\1``-``\\7`` past the
  group count are octal escapes; ``\\8``, ``\\9`` are digits;
- "nothing to repeat", unterminated groups and classes, ranges out of order, invalid group
  names and invalid flags are ``invalid``, as in JavaScript.

Not reproduced (documented): patterns without ``u`` see an astral character (an emoji) as
two UTF-16 units, this module as one; case-insensitive matching folds as the ``regex``
package does (the long s and the Kelvin sign match ``s`` and ``k``); the ``v`` flag and
inline modifiers ``(?i:...)`` are ``unsupported``.
"""

from __future__ import annotations

import re

import regex

from compiler._records import record

_LINE_TERMINATORS = r"\n\r\u2028\u2029"
_NOT_TERMINATOR = f"[^{_LINE_TERMINATORS}]"
_ANY = r"[\s\S]"
_WORD = "A-Za-z0-9_"
_SPACE = r"\t\n\x0b\x0c\r\x20\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: class escape letter -> (the class body, negated)
_CLASS_ESCAPES = {
    "d": ("0-9", False),
    "D": ("0-9", True),
    "w": (_WORD, False),
    "W": (_WORD, True),
    "s": (_SPACE, False),
    "S": (_SPACE, True),
}
_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_BOUNDARY = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
_CONTROL = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
_BRACES = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_NAME_REF = re.compile(r"<([^>]*)>")
_PROPERTY = re.compile(r"\{([A-Za-z0-9_]+(?:=[A-Za-z0-9_]+)?)\}")

#: SillyTavern's regexFromString: an optional ``/``, the pattern (one line), the same
#: delimiter, the flags; the first match anywhere in the text
_ST_PARSE = re.compile(r"(/?)([^\n\r\u2028\u2029]+)\1([a-zA-Z]*)")
_ST_FLAGS = frozenset("gmixXsuUAJ")
_JS_FLAGS = frozenset("dgimsuvy")


class JSRegexError(ValueError):
    """A pattern not translated: ``invalid`` when JavaScript rejects it too."""

    def __init__(self, reason: str, *, invalid: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.invalid = invalid


@record(frozen=True)
class JSRegex:
    """A translated pattern: compile ``pattern`` with ``flags`` (``regex.V0``); ``count`` is
    what ``sub`` replaces (0 every match with ``g``, else 1); ``named``: the pattern has named
    groups (JavaScript then passes a groups object after the input to a replacer)."""

    pattern: str
    flags: int
    count: int
    named: bool


def from_string(text: str) -> tuple[str, str] | None:
    """(pattern, flags) as SillyTavern's ``regexFromString`` reads ``text``; None where it
    returns nothing (no line with a character)."""
    match = _ST_PARSE.search(text)
    if match is None:
        return None
    flags = match.group(3)
    if flags and (not set(flags) <= _ST_FLAGS or len(set(flags)) != len(flags)):
        return text, ""
    return match.group(2), flags


def translate(source: str, flags: str) -> JSRegex:
    """``new RegExp(source, flags)`` as a ``regex`` package pattern (see the module
    docstring); :class:`JSRegexError` when not."""
    if not set(flags) <= _JS_FLAGS or len(set(flags)) != len(flags):
        raise JSRegexError(f"invalid flags {flags!r}")
    if "v" in flags:
        raise JSRegexError("the 'v' flag (unicode sets) is not supported", invalid=False)
    translator = _Translator(source, flags)
    pattern = translator.run()
    if "y" in flags:  # sticky: each match starts where the last one ended
        pattern = r"\G(?:" + pattern + ")"
    return JSRegex(
        pattern=pattern,
        flags=regex.V0 | (regex.IGNORECASE if "i" in flags else 0),
        count=0 if "g" in flags else 1,
        named=bool(translator.names),
    )


def _literal(ch: str) -> str:
    """One character as a pattern literal (inside or outside a class)."""
    if not ch.isascii() or ch.isalnum():
        return ch
    if ch.isprintable():
        return "\\" + ch
    return f"\\x{ord(ch):02x}"


def _capture_groups(source: str) -> tuple[dict[str, int], int]:
    """The named groups (name -> number) and the number of capturing groups of ``source``,
    counted as JavaScript does (escapes and classes skipped)."""
    names: dict[str, int] = {}
    count, i, n = 0, 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 1
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif c == "(" and not source.startswith("?", i + 1):
            count += 1
        elif (
            c == "(" and source.startswith("?<", i + 1) and source[i + 3 : i + 4] not in ("=", "!")
        ):
            count += 1
            end = source.find(">", i + 3)
            name = source[i + 3 : end] if end > 0 else ""
            if not name or not name.replace("$", "_").isidentifier():
                raise JSRegexError(f"invalid capture group name {name[:40]!r}")
            if name in names:
                raise JSRegexError(f"duplicate group name {name[:40]!r}", invalid=False)
            names[name] = count
        i += 1
    return names, count


class _Translator:
    """One pass over a JavaScript pattern, writing the ``regex`` package's equivalent."""

    def __init__(self, source: str, flags: str) -> None:
        self.src = source
        self.i = 0
        self.unicode = "u" in flags
        self.multiline = "m" in flags
        self.dotall = "s" in flags
        self.names, self.groups = _capture_groups(source)
        self.out: list[str] = []
        self.stack: list[tuple[str, int]] = []  # open groups: (kind, capture number or 0)
        self.opened = 0  # capturing groups opened so far

    def fail(self, reason: str) -> JSRegexError:
        return JSRegexError(f"{reason} (at character {self.i})")

    def run(self) -> str:
        quantifiable = False
        while self.i < len(self.src):
            c = self.src[self.i]
            if c in "*+?{" and self._quantifier(quantifiable):
                quantifiable = False
                continue
            self.i += 1
            quantifiable = self._atom(c)
        if self.stack:
            raise self.fail("unterminated group")
        return "".join(self.out)

    def _quantifier(self, quantifiable: bool) -> bool:
        """A quantifier at ``i``, written; False for a ``{`` that is a literal brace."""
        c = self.src[self.i]
        if c == "{":
            match = _BRACES.match(self.src, self.i)
            if match is None:
                if self.unicode:
                    raise self.fail("incomplete quantifier")
                return False
            low, comma, high = match.groups()
            if high and int(high) < int(low):
                raise self.fail("numbers out of order in {} quantifier")
            text, end = f"{{{int(low)}{comma or ''}{int(high) if high else ''}}}", match.end()
        else:
            text, end = c, self.i + 1
        if not quantifiable:
            raise self.fail("nothing to repeat")
        if self.src.startswith("?", end):
            text, end = text + "?", end + 1
        self.out.append(text)
        self.i = end
        return True

    def _atom(self, c: str) -> bool:
        """The atom starting with ``c`` (already consumed), written; whether a quantifier
        may follow it."""
        if c == "\\":
            return self._escape()
        if c == "(":
            return self._open()
        if c == ")":
            return self._close()
        if c == "[":
            self.out.append(self._class())
            return True
        if c == "|":
            self.out.append("|")
            return False
        if c == ".":
            self.out.append(_ANY if self.dotall else _NOT_TERMINATOR)
            return True
        if c in "^$":
            if self.multiline:
                look = "(?<!" if c == "^" else "(?!"
                self.out.append(f"{look}{_NOT_TERMINATOR})")
            else:
                self.out.append(r"\A" if c == "^" else r"\Z")
            return False
        if c in "]}" and self.unicode:
            raise self.fail(f"lone {c!r}")
        self.out.append(_literal(c))
        return True

    def _open(self) -> bool:
        rest = self.src[self.i : self.i + 3]
        for prefix, kind in (("?:", "group"), ("?=", "ahead"), ("?!", "ahead")):
            if rest.startswith(prefix):
                self._push(kind, "(" + prefix, len(prefix))
                return False
        for prefix in ("?<=", "?<!"):
            if rest.startswith(prefix):
                self._push("behind", "(" + prefix, 3)
                return False
        if rest.startswith("?<"):  # a named group (the name was checked while counting)
            self._push("group", "(", self.src.index(">", self.i) + 1 - self.i, capture=True)
            return False
        if rest.startswith("?"):
            raise JSRegexError(f"group syntax {'(' + rest!r} is not supported", invalid=False)
        self._push("group", "(", 0, capture=True)
        return False

    def _push(self, kind: str, text: str, skip: int, *, capture: bool = False) -> None:
        if capture:
            self.opened += 1
        self.stack.append((kind, self.opened if capture else 0))
        self.out.append(text)
        self.i += skip

    def _close(self) -> bool:
        if not self.stack:
            raise self.fail("unmatched ')'")
        kind, _ = self.stack.pop()
        self.out.append(")")
        return kind == "group" or (kind == "ahead" and not self.unicode)

    def _backreference(self, number: int) -> None:
        """Group ``number``'s text, or the empty string while it is open or did not take
        part (JavaScript's rule; a Python backreference would fail there)."""
        if any(group == number for _, group in self.stack):
            self.out.append("(?:)")
        else:
            self.out.append(f"(?:(?({number})\\{number}|))")

    def _escape(self) -> bool:
        """An escape outside a class (``\\`` consumed), written."""
        if self.i >= len(self.src):
            raise self.fail("\\ at end of pattern")
        c = self.src[self.i]
        self.i += 1
        if c in _CLASS_ESCAPES:
            body, negated = _CLASS_ESCAPES[c]
            self.out.append(f"[{'^' if negated else ''}{body}]")
            return True
        if c in "bB":
            self.out.append(_BOUNDARY if c == "b" else _NOT_BOUNDARY)
            return False
        if c in "123456789":
            start = self.i - 1
            while self.i < len(self.src) and self.src[self.i].isdigit():
                self.i += 1
            number = int(self.src[start : self.i])
            if number <= self.groups:
                self._backreference(number)
                return True
            self.i = start + 1  # no such group: an octal escape or a digit (Annex B)
        elif c == "k" and (self.names or self.unicode):
            match = _NAME_REF.match(self.src, self.i)
            if match is None or match.group(1) not in self.names:
                raise self.fail("invalid named reference")
            self.i = match.end()
            self._backreference(self.names[match.group(1)])
            return True
        elif c in "pP" and self.unicode:
            self.out.append(self._property(c))
            return True
        self.out.append(_literal(chr(self._character(c, in_class=False))))
        return True

    def _property(self, c: str) -> str:
        """``\\p{...}`` / ``\\P{...}`` (``u`` patterns), as the ``regex`` package writes it."""
        match = _PROPERTY.match(self.src, self.i)
        if match is None:
            raise self.fail("invalid property name")
        self.i = match.end()
        return f"\\{c}{{{match.group(1)}}}"

    def _character(self, c: str, *, in_class: bool) -> int:
        """The code point of a character escape (``\\`` and ``c`` consumed)."""
        if c in _CONTROL:
            return _CONTROL[c]
        if c == "0" and not self.src[self.i : self.i + 1].isdigit():
            return 0
        if c in "01234567" and not self.unicode:
            return self._octal(c)
        if c == "c":
            letter = self.src[self.i : self.i + 1]
            if letter.isascii() and (
                letter.isalpha()
                or (in_class and not self.unicode and (letter.isdigit() or letter == "_"))
            ):
                self.i += 1
                return ord(letter) % 32
            if self.unicode:
                raise self.fail("invalid unicode escape")
            self.i -= 1  # Annex B: the backslash is a literal, then 'c'
            return ord("\\")
        if c == "x" and _HEX2.match(self.src, self.i):
            self.i += 2
            return int(self.src[self.i - 2 : self.i], 16)
        if c == "u":
            point = self._unicode_escape()
            if point is not None:
                return point
        if self.unicode and c not in _SYNTAX and not (in_class and c == "-"):
            raise self.fail(f"invalid escape '\\{c}'")
        return ord(c)

    def _octal(self, first: str) -> int:
        """A legacy octal escape (Annex B): up to three octal digits, at most 0o377."""
        digits = first
        most = 3 if first in "0123" else 2
        while len(digits) < most and self.src[self.i : self.i + 1] in tuple("01234567"):
            digits += self.src[self.i]
            self.i += 1
        return int(digits, 8)

    def _unicode_escape(self) -> int | None:
        """``\\uHHHH`` (a surrogate pair of them is one character) or, with ``u``,
        ``\\u{H...}``; None when ``u`` is not followed by one (then a literal ``u``)."""
        if self.unicode and self.src.startswith("{", self.i):
            end = self.src.find("}", self.i)
            digits = self.src[self.i + 1 : end] if end > 0 else ""
            if (
                not digits
                or not re.fullmatch(r"[0-9A-Fa-f]+", digits)
                or int(digits, 16) > 0x10FFFF
            ):
                raise self.fail("invalid unicode escape")
            self.i = end + 1
            return int(digits, 16)
        if not _HEX4.match(self.src, self.i):
            if self.unicode:
                raise self.fail("invalid unicode escape")
            return None
        point = int(self.src[self.i : self.i + 4], 16)
        self.i += 4
        if 0xD800 <= point <= 0xDBFF and self.src.startswith("\\u", self.i):
            low = self.src[self.i + 2 : self.i + 6]
            if _HEX4.fullmatch(low) and 0xDC00 <= int(low, 16) <= 0xDFFF:
                self.i += 6
                return 0x10000 + ((point - 0xD800) << 10) + (int(low, 16) - 0xDC00)
        return point

    def _class(self) -> str:
        """A character class (``[`` consumed), as a pattern: a negated class escape inside
        one (``[^\\W\\d]``) becomes an alternation, which a ``regex`` V0 class cannot nest."""
        negated = self.src.startswith("^", self.i)
        self.i += negated
        members: list[str] = []
        others: list[str] = []  # negated class escapes: [^0-9], ...
        while True:
            if self.i >= len(self.src):
                raise self.fail("unterminated character class")
            if self.src[self.i] == "]":
                self.i += 1
                break
            low = self._class_atom()
            dash = self.src.startswith("-", self.i) and self.src[self.i + 1 : self.i + 2] not in (
                "]",
                "",
            )
            if not dash:
                _add(low, members, others)
                continue
            self.i += 1
            high = self._class_atom()
            if isinstance(low, int) and isinstance(high, int):
                if high < low:
                    raise self.fail("range out of order in character class")
                members.append(f"{_literal(chr(low))}-{_literal(chr(high))}")
                continue
            if self.unicode:
                raise self.fail("invalid character class")
            _add(low, members, others)  # Annex B: a class escape in a range is no range
            members.append(r"\-")
            _add(high, members, others)
        return _class_pattern("".join(members), others, negated)

    def _class_atom(self) -> int | tuple[str, bool]:
        """One class member: a code point, or (a class body, negated) for ``\\d``, ``\\p{..}``."""
        c = self.src[self.i]
        self.i += 1
        if c != "\\":
            return ord(c)
        if self.i >= len(self.src):
            raise self.fail("\\ at end of pattern")
        c = self.src[self.i]
        self.i += 1
        if c in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[c]
        if c == "b":
            return 8
        if c in "pP" and self.unicode:
            return self._property(c), False
        if c in "89" or (c == "k" and self.unicode) or (c in "1234567" and self.unicode):
            if self.unicode:
                raise self.fail(f"invalid class escape '\\{c}'")
            return ord(c)
        return self._character(c, in_class=True)


def _add(member: int | tuple[str, bool], members: list[str], others: list[str]) -> None:
    if isinstance(member, int):
        members.append(_literal(chr(member)))
    elif member[1]:
        others.append(f"[^{member[0]}]")
    else:
        members.append(member[0])


def _class_pattern(body: str, others: list[str], negated: bool) -> str:
    if not others:
        if negated:
            return f"[^{body}]" if body else _ANY
        return f"[{body}]" if body else "(?!)"
    union = "(?:" + "|".join(([f"[{body}]"] if body else []) + others) + ")"
    return f"(?:(?!{union}){_ANY})" if negated else union
