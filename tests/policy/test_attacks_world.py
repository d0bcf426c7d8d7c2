"""Catastrophic regexes in lorebook keys cannot stall a compile.

A regex key searches with a timeout (``REGEX_KEY_TIMEOUT``) and all of one activation's
regex keys share ``REGEX_SCAN_BUDGET``; a key over its time does not match and is reported
as a ``world.regex_timeout`` warning.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.cli import main
from compiler.errors import Diagnostic
from compiler.inputs.lorebook import Lorebook, read_lorebook
from compiler.st.world import activation as world
from compiler.st.world.activation import REGEX_KEY_TIMEOUT, REGEX_SCAN_BUDGET
from compiler.st.world.scan import activate

#: A bound on work that the unfixed code never finishes in (minutes to forever); not a
#: speed measurement (benchmarks/ measure speed), just proof the work is bounded.
HANG = 60.0  # a hang guard for catastrophic patterns, not a speed limit


def book(*entries: dict[str, Any]) -> Lorebook:
    """A world file with the given entries, uids 0..n-1."""
    return read_lorebook({"entries": {str(i): {"uid": i, **e} for i, e in enumerate(entries)}})


def run(
    lore: Lorebook, messages: list[str], **kw: Any
) -> tuple[list[Any], list[Diagnostic], float]:
    """(activated uids, warnings, seconds)."""
    warnings: list[Diagnostic] = []
    start = time.perf_counter()
    active = activate(lore, messages, warnings=warnings, **kw)
    return [e.uid for e in active], warnings, time.perf_counter() - start


@pytest.fixture
def generous_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """For tests about what matches, not about time: a loaded machine must not turn an
    ordinary key into a timeout."""
    monkeypatch.setattr(world, "REGEX_KEY_TIMEOUT", 10.0)
    monkeypatch.setattr(world, "REGEX_SCAN_BUDGET", 60.0)


def test_limits_are_small() -> None:
    assert REGEX_KEY_TIMEOUT <= 0.1 and REGEX_SCAN_BUDGET <= 1


# (a+)+$ took 13.6 s on 28 characters with the re module, doubling per character; the
# regex package solves it for short inputs, and times out on long ones.
@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("/(a+)+$/", "a" * 5000 + "!"),
        ("/(a|aa)+$/", "a" * 40 + "!"),
        ("/(a|a)+$/i", "a" * 40 + "!"),
        ("/^(a|aa)+$/m", "b\n" + "a" * 40 + "!"),  # the buffer starts with \x01
    ],
)
def test_catastrophic_key_is_skipped_with_a_warning(key: str, text: str) -> None:
    lore = book({"key": [key], "content": "never", "comment": "evil"}, {"key": ["aaa"]})
    uids, warnings, seconds = run(lore, [text])
    assert uids == [1]  # the evil entry does not activate; the others still do
    assert seconds < HANG
    assert [w.code for w in warnings] == ["world.regex_timeout"]
    assert warnings[0].severity == "warning"
    assert "entry 0 (evil)" in warnings[0].message and key in warnings[0].message


def test_the_reported_key_is_fast_on_short_text_and_does_not_match(generous_time: None) -> None:
    lore = book({"key": ["/(a+)+$/"], "content": "never"})
    uids, warnings, seconds = run(lore, ["a" * 40 + "!"])
    assert (uids, seconds < HANG) == ([], True)
    assert warnings == []  # not catastrophic for the regex package: no timeout, no match


def test_a_timed_out_key_is_not_tried_again_in_the_same_activation() -> None:
    evil = "/(a|aa)+$/"
    lore = book(
        {"key": [evil], "content": "x moat"},
        {"key": ["x"], "keysecondary": [evil], "selectiveLogic": 0},
        {"key": [evil]},
        {"key": ["moat"], "content": "castle"},
    )
    uids, warnings, seconds = run(lore, ["a" * 40 + "! x"], recursive=True)
    assert uids == []  # AND_ANY with only the evil secondary key: no
    assert len(warnings) == 1
    assert seconds < HANG


def test_all_regex_keys_share_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "REGEX_KEY_TIMEOUT", 0.02)
    monkeypatch.setattr(world, "REGEX_SCAN_BUDGET", 0.1)
    entries = [{"key": [f"/(a|aa)+$|q{i}q/"]} for i in range(200)]  # 200 distinct keys
    lore = book(*entries, {"key": ["/a!/"]})
    uids, warnings, seconds = run(lore, ["a" * 40 + "!"])
    assert uids == []  # the budget is spent: even the cheap key is skipped
    assert seconds < HANG  # the work is counted below: ~5 timeouts, not 200
    assert all(w.code == "world.regex_timeout" for w in warnings)
    assert 3 <= len(warnings) <= 7  # ~5 timeouts, then one "budget used up"
    assert "used up" in warnings[-1].message


@pytest.mark.parametrize(
    "key",
    [
        "/a{1000000000}/",  # the regex package would copy 'a' a billion times: gigabytes
        "/(?:(?:a{100}){100}){100}/",
        "/[ab]{20000,}/i",
        "/(?:x{65535}){65535}/",
    ],
)
def test_huge_counted_repeat_is_not_compiled(key: str) -> None:
    lore = book({"key": [key], "comment": "big"}, {"key": ["aaa"]})
    uids, warnings, seconds = run(lore, ["a" * 100])
    assert uids == [1]
    assert [w.code for w in warnings] == ["world.regex_too_complex"]
    assert "entry 0 (big)" in warnings[0].message
    assert seconds < HANG


def test_size_limit_leaves_real_keys_alone(generous_time: None) -> None:
    names = "|".join(f"name{i}" for i in range(3000))  # a long pattern: its own length
    lore = book(
        {"key": [f"/\\b(?:{names})\\b/i"]},
        {"key": ["/\\d{4}-\\d{2}-\\d{2}/"]},
        {"key": ["/(?:ab){500}/"]},
    )
    uids, warnings, _ = run(lore, ["NAME2999 on 2024-01-31 " + "ab" * 500])
    assert (sorted(uids), warnings) == ([0, 1, 2], [])
    assert world._pattern_size("(?:ab){500}") <= world.REGEX_MAX_SIZE


@given(st.text(alphabet="ab\\[]():^|{},0123456789*+?#pNx=<!", max_size=40))
@settings(max_examples=300, deadline=None)
def test_size_estimate_always_ends(pattern: str) -> None:
    assert world._pattern_size(pattern) >= 0


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ("/dragon/i", "A DRAGON!", True),
        ("/Dragon/", "a dragon", False),  # the buffer is lower-cased, as in SillyTavern
        ("/^the king/m", "hello\nthe king", True),
        ("/^the king/", "hello\nthe king", False),
        ("/a.b/s", "a\nb", True),
        ("/a.b/", "a\nb", False),
        ("/dra\\p{L}on/u", "dragon", True),
        ("/dragon/g", "dragon", True),
        ("/dragon/y", "a dragon", False),  # sticky: JavaScript matches at index 0 only
        ("/dragon/gimsuy", "dragon", False),  # the buffer starts with \x01
        ("/dragon/gimsu", "DRAGON", True),
        ("/\\bdragon\\b/", "édragonñ", True),  # JavaScript's \b is ASCII
        ("/dra(gon|ke)s?/i", "drakes", True),
        ("/\\/path\\/x/", "a/path/x", True),
        ("/unterminated(/", "an /unterminated(/ key", True),  # invalid: plain text
        ("/unterminated(/", "unterminated(", False),
    ],
)
def test_regex_keys_with_flags_still_work(
    generous_time: None, key: str, text: str, expected: bool
) -> None:
    uids, warnings, _ = run(book({"key": [key]}), [text])
    assert (uids == [0]) is expected
    assert warnings == []


def test_case_sensitive_regex_key() -> None:
    lore = book({"key": ["/Dragon/"], "caseSensitive": True})
    assert run(lore, ["a Dragon"])[0] == [0]
    assert run(lore, ["a dragon"])[0] == []


def test_warnings_are_optional() -> None:
    lore = book({"key": ["/(a|aa)+$/"]})
    start = time.perf_counter()
    assert activate(lore, ["a" * 40 + "!"]) == []
    assert time.perf_counter() - start < HANG


def test_the_warning_reaches_the_compile_result_and_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lore = {
        "entries": {
            "0": {"uid": 0, "key": ["/(a|aa)+$/"], "content": "EVIL-ENTRY"},
            "1": {"uid": 1, "key": ["/dragon/i"], "content": "Dragons breathe fire."},
        }
    }
    (tmp_path / "world.json").write_text(json.dumps(lore))
    chat = [{"role": "user", "content": "a" * 40 + "!"}, {"role": "user", "content": "A Dragon"}]
    (tmp_path / "run.json").write_text(json.dumps({"chat": chat, "worldInfo": "world.json"}))
    (tmp_path / "t.txt").write_text("<<agent.world.activated>>\n<<agent.chat.history>>")
    start = time.perf_counter()
    result = compiler.compile(tmp_path / "t.txt", context=tmp_path / "run.json")
    assert time.perf_counter() - start < HANG
    frame = str(result.frame)
    assert "Dragons breathe fire." in frame and "EVIL-ENTRY" not in frame
    found = [(w.code, w.severity, w.file) for w in result.warnings]
    assert found == [("world.regex_timeout", "warning", str(tmp_path / "world.json"))]
    args = ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "warning[world.regex_timeout]" in err and "Traceback" not in err
