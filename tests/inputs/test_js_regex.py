"""JavaScript patterns as SillyTavern builds them, translated to the regex package (issue 12,
item 18). Expected outputs are JavaScript's own (Node 20, ``String.prototype.replace``); the
differential test re-checks them against Node when it is installed."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import regex

from compiler.st.js_regex import JSRegexError, from_string, translate

#: (pattern, flags, input, input.replace(new RegExp(pattern, flags), "X") in JavaScript)
CASES: list[tuple[str, str, str, str]] = [
    ("a", "g", "banana", "bXnXnX"),
    ("a", "", "banana", "bXnana"),
    ("A", "gi", "banana", "bXnXnX"),
    (r"<think>[\s\S]*?<\/think>", "g", "x<think>hi\nthere</think>y", "xXy"),
    ("^b", "gm", "ab\nbc\r\nbd\u2028be", "ab\nXc\r\nXd\u2028Xe"),
    ("a$", "g", "ba\n", "ba\n"),  # Python's $ would match before the final newline
    ("a$", "gm", "ba\nca\rda", "bX\ncX\rdX"),
    (r"\d+", "g", "a1\u0663 2", "aX\u0663 X"),  # ASCII digits only
    (r"\w+", "g", "h\u00e9llo_9", "X\u00e9X"),  # ASCII word characters
    (r"\bcat\b", "g", "cat \u00e9cat cats", "X \u00e9X cats"),
    (r"\Bat", "g", "cat at", "cX at"),
    ("[^]", "g", "ab", "XX"),
    ("[]", "g", "ab", "ab"),
    (r"[\W\d]", "g", "a1-b", "aXXb"),
    (r"[^\W\d]", "g", "a1-b", "X1-X"),
    (r"(a)?\1b", "g", "b ab", "X aX"),  # a group that did not match: empty
    (r"(?<n>a)\k<n>", "g", "aa a", "X a"),
    ("x{,2}", "g", "x{,2}", "X"),  # no quantifier: literal braces
    (r"\e\z", "", "ez", "X"),  # identity escapes without u
    (r"\u00e9", "g", "\u00e9", "X"),
    (r"\uD83D\uDE00", "g", "\U0001f600", "X"),
    (r"\p{L}+", "gu", "ab1", "X1"),
    (r"\p{L}", "g", "p{L}", "X"),  # without u: the letter p
    ("a.c", "g", "a\nc a\rc abc a\u2028c", "a\nc a\rc X a\u2028c"),
    ("a.c", "gs", "a\nc", "X"),
    (r"[\b]", "g", "\b", "X"),
    (r"\cJ", "g", "\n", "X"),
    (r"\101", "g", "A", "X"),  # a legacy octal escape
    (r"\s+", "g", "a \u00a0\ufeff\u0085b\u001cc", "aX\u0085b\u001cc"),
    (r"[\d-z]", "g", "5-z", "XXX"),
    ("(?<=a)b", "g", "abcb", "aXcb"),
    ("(?<!a)b", "g", "abcb", "abcX"),
    ("x*", "g", "abc", "XaXbXcX"),
    ("a*", "g", "aaa", "XX"),
    ("$", "gm", "a\nb", "aX\nbX"),
    (r"\x4", "g", "x4", "X"),
    (r"\8", "g", "8", "X"),
    (r"\k<x>", "g", "k<x>", "X"),
    ("(?:(a)|b)\\1", "g", "aa bb", "X XX"),
    ("[.*+?^${}()|[\\]\\\\]", "g", "a.*b[c]\\d", "aXXbXcXXd"),
    ("}", "g", "a}b", "aXb"),
    ("a{", "g", "a{b", "Xb"),
]


@pytest.mark.parametrize(("pattern", "flags", "text", "expected"), CASES)
def test_matches_as_javascript(pattern: str, flags: str, text: str, expected: str) -> None:
    js = translate(pattern, flags)
    assert regex.compile(js.pattern, js.flags).sub("X", text, count=js.count) == expected


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [("a{2,1}", ""), ("*a", ""), ("a**", ""), ("(a", ""), ("a)", ""), ("[a", ""), ("\\e", "u"),
     ("(?<1a>x)", ""), ("\\k<nope>(?<n>a)", ""), ("a", "x"), ("a", "gg"), ("(?<=a)*", ""),
     ("[z-a]", ""), ("\\u{110000}", "u"), ("]", "u"), ("(?<", ""),
     ("[\\c_]", "u"), ("[\\c1]", "u")],
)  # fmt: skip
def test_patterns_javascript_rejects_are_invalid(pattern: str, flags: str) -> None:
    with pytest.raises(JSRegexError) as caught:
        translate(pattern, flags)
    assert caught.value.invalid


@pytest.mark.parametrize(("pattern", "flags"), [("(?i:a)", ""), ("a", "v"), ("(?<n>a)(?<n>b)", "")])
def test_syntax_not_reproduced_is_unsupported(pattern: str, flags: str) -> None:
    with pytest.raises(JSRegexError) as caught:
        translate(pattern, flags)
    assert not caught.value.invalid


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("/a/g", ("a", "g")),
        ("/a/b/gi", ("a/b", "gi")),
        ("/abc/g xyz", ("abc", "g")),  # text after the flags is ignored
        ("/a/y", ("/a/y", "")),  # y is not a flag SillyTavern reads: all of it is the pattern
        ("/a/gg", ("/a/gg", "")),
        ("/A/Gi", ("/A/Gi", "")),
        ("/a/x", ("a", "x")),  # read, then rejected by JavaScript (translate: invalid)
        ("knife", ("knife", "")),
        ("abc/def/g", ("abc/def/g", "")),
        ("/a\nb/g", ("/a", "")),  # the first line only
        ("\n", None),
    ],
)
def test_from_string_reads_as_sillytavern(text: str, parsed: tuple[str, str] | None) -> None:
    assert from_string(text) == parsed


def test_no_python_only_syntax_gets_through() -> None:
    """Escapes that mean something in Python but not in JavaScript stay literal letters."""
    for letter in "AZGzeNQKRXh":
        js = translate(f"\\{letter}", "")
        assert regex.compile(js.pattern, js.flags).fullmatch(letter), letter


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_same_as_node() -> None:
    script = (
        "const c = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(c.map(([p, f, s]) => s.replace(new RegExp(p, f), 'X'))));"
    )
    cases = [[p, f, s] for p, f, s, _ in CASES]
    done = subprocess.run(
        ["node", "-e", script], input=json.dumps(cases), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [expected for *_, expected in CASES]
