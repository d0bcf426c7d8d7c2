"""``{{idle_duration}}`` as SillyTavern 1.12.6 fills it (public/scripts/macros.js
getTimeSinceLastMessage, moment.js ``duration.humanize()``; issue 12, item 13)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.inputs.run import ChatMessageIn
from compiler.st.chat_macros import idle_duration
from compiler.st.macros import ENVIRONMENT_MACROS, humanize, literal_macros, send_time

#: moment.duration(seconds * 1000).humanize(), printed by SillyTavern 1.12.6's own
#: public/lib/moment.min.js under Node
MOMENT = [
    (0, "a few seconds"), (44, "a few seconds"), (45, "a minute"), (89, "a minute"),
    (90, "2 minutes"), (2669, "44 minutes"), (2670, "an hour"), (2699, "an hour"),
    (2700, "an hour"), (5399, "an hour"), (5400, "2 hours"), (75599, "21 hours"),
    (75600, "21 hours"), (129599, "a day"), (129600, "2 days"), (2203199, "25 days"),
    (2203200, "a month"), (2246399, "a month"), (2246400, "a month"), (3888000, "a month"),
    (3952800, "2 months"), (27648000, "a year"), (28555200, "a year"), (29808000, "a year"),
    (47260800, "a year"), (47347200, "2 years"), (86400000, "3 years"),
]  # fmt: skip


@pytest.mark.parametrize(("seconds", "words"), MOMENT)
def test_humanize_matches_moment(seconds: int, words: str) -> None:
    assert humanize(timedelta(seconds=seconds)) == words
    assert humanize(timedelta(seconds=-seconds)) == words  # a send time in the future


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("June 19, 2023 2:20pm", datetime(2023, 6, 19, 14, 20)),  # local time
        ("Jan 5, 2024 12:05am", datetime(2024, 1, 5, 0, 5)),
        ("December 31, 2023 12:30pm", datetime(2023, 12, 31, 12, 30)),
        ("2024-7-12@01h31m37s", datetime(2024, 7, 12, 1, 31, 37, tzinfo=UTC)),
        ("2024-6-5 @14h 56m 50s 682ms", datetime(2024, 6, 5, 14, 56, 50, 682000, tzinfo=UTC)),
        (1700000000000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
        ("1700000000000", datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
        ("2024-03-05T14:07:00+01:00", datetime(2024, 3, 5, 13, 7, tzinfo=UTC)),
        ("garbage", None),
        ("Smarch 1, 2024 1:00pm", None),
        ("2024-13-40@01h31m37s", None),
        ("9" * 400, None),
        (-5, None),
        ("", None),
    ],
)
def test_send_times_sillytavern_writes(value: str | int, expected: datetime | None) -> None:
    assert send_time(value) == expected


def msg(role: str, sent: Any = None, **kw: Any) -> ChatMessageIn:
    return ChatMessageIn(role=role, content="x", send_date=sent, **kw)  # type: ignore[arg-type]


NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)


def test_the_newest_message_is_passed_over() -> None:
    """The newest message is the one just sent: the idle time is since the user's message
    before it, whoever sent the newest."""
    chat = [
        msg("user", "2024-3-5@09h00m00s"),
        msg("assistant", "2024-3-5@10h00m00s"),
        msg("user", "2024-3-5@11h59m50s"),
    ]
    assert idle_duration(chat, NOW) == "3 hours"
    assert idle_duration([*chat, msg("assistant")], NOW) == "a few seconds"
    # tool rows are SillyTavern's hidden system rows: skipped
    call = msg("assistant", tool_calls=[{"id": "c", "name": "t", "arguments": "{}"}])
    assert idle_duration([*chat[:2], call, msg("tool", tool_call_id="c")], NOW) == "3 hours"


def test_just_now_and_invalid_date() -> None:
    assert idle_duration([], NOW) == "just now"
    assert idle_duration([msg("user", "2024-3-5@09h00m00s")], NOW) == "just now"
    assert idle_duration([msg("user"), msg("user")], NOW) == "just now"
    assert idle_duration([msg("user", 0), msg("user")], NOW) == "just now"  # 0 is falsy
    assert idle_duration([msg("user", "not a date"), msg("user")], NOW) == "Invalid date"


def test_a_time_without_zone_is_in_nows_zone() -> None:
    plus2 = timezone(timedelta(hours=2))
    chat = [msg("user", "March 5, 2024 1:00pm"), msg("user")]
    assert idle_duration(chat, datetime(2024, 3, 5, 14, 0, tzinfo=plus2)) == "an hour"
    assert idle_duration(chat, datetime(2024, 3, 5, 18, 0)) == "5 hours"


def test_idle_duration_is_a_known_macro() -> None:
    assert "idle_duration" in ENVIRONMENT_MACROS
    assert literal_macros("{{idle_duration}} {{IDLE_DURATION}}") == []


def preset(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"prompts": [
        {"identifier": "main", "content": text}, {"identifier": "chatHistory", "marker": True},
    ]}))  # fmt: skip
    return path


def test_compiled_from_the_run_context(tmp_path: Path) -> None:
    chat = [
        {"role": "user", "content": "hi", "sendDate": "2024-03-05T10:00:00Z"},
        {"role": "assistant", "content": "yo", "sendDate": "2024-03-05T10:01:00Z"},
        {"role": "user", "content": "back", "sendDate": "2024-03-05T11:59:00Z"},
    ]
    ctx = {"chat": chat, "now": "2024-03-05T12:00:00Z"}
    result = compiler.compile(
        preset(tmp_path, "Idle {{idle_duration}}."), context=ctx, mode="legacy"
    )
    assert result.request["messages"][0]["content"] == "Idle 2 hours."
    assert not result.warnings


def test_compiled_from_a_chat_file(tmp_path: Path) -> None:
    lines = [
        {"user_name": "U", "character_name": "C"},
        {"name": "U", "is_user": True, "mes": "hi", "send_date": "June 19, 2023 2:20pm"},
        {"name": "C", "is_user": False, "mes": "yo", "send_date": "June 19, 2023 2:21pm"},
        {"name": "U", "is_user": True, "mes": "hidden", "is_system": True, "send_date": 1},
        {"name": "U", "is_user": True, "mes": "back", "send_date": "June 21, 2023 2:20pm"},
    ]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    ctx = {"chat": str(tmp_path / "chat.jsonl"), "now": "2023-06-21T14:20:00"}
    result = compiler.compile(preset(tmp_path, "{{idle_duration}}"), context=ctx, mode="legacy")
    assert result.request["messages"][0]["content"] == "2 days"


def test_a_bad_send_date_is_a_context_error(tmp_path: Path) -> None:
    with pytest.raises(compiler.ContextError) as caught:
        compiler.load_context({"chat": [{"role": "user", "content": "x", "sendDate": True}]})
    assert caught.value.code == "context.invalid_context"


@pytest.mark.parametrize(
    ("now", "ok"),
    [
        ("0001-01-01T00:00:00", False),  # local time of year 1: before the calendar
        ("0001-01-01T00:30:00+00:30", False),
        ("9999-12-31T23:59:59-14:00", False),  # {{time_UTC+14}}: past the calendar
        ("0002-01-01T00:00:00", True),
        ("9998-12-31T23:59:59-14:00", True),
    ],
)
def test_a_clock_at_the_calendar_s_ends_is_refused_not_overflowed(now: str, ok: bool) -> None:
    body = "{{idle_duration}} {{time}} {{isodate}} {{time_UTC+14}} {{time_UTC-14}}"
    preset = {"prompts": [{"identifier": "main", "content": body}]}
    chat = [
        {"role": "user", "content": "a", "sendDate": "2024-7-12@01h31m37s"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    context = {"chat": chat, "now": now}
    if ok:
        compiler.compile_string(json.dumps(preset), kind="preset", context=context, mode="legacy")
        return
    with pytest.raises(compiler.ContextError) as err:
        compiler.compile_string(json.dumps(preset), kind="preset", context=context, mode="legacy")
    assert err.value.code == "context.invalid_context" and "year 2 to 9998" in err.value.message


@pytest.mark.parametrize("value", ["a" * 200_000, "1" * 100_000 + "x", "ab " * 50_000])
def test_a_long_send_date_is_read_in_time_in_proportion(value: str) -> None:
    """A chat's send date is read on every compile: a long one is not searched quadratically
    (the meridiem pattern retried inside each word)."""
    import time

    start = time.perf_counter()
    assert send_time(value) is None
    assert time.perf_counter() - start < 60  # a hang guard: quadratic here is hours


def test_the_meridiem_format_reads_ascii_words_as_javascript() -> None:
    assert send_time("sent June 19, 2023 2:20pm") == datetime(2023, 6, 19, 14, 20)
    # JavaScript's \w is ASCII: the word before the day is "June", after the "é"
    assert send_time("éJune 19, 2023 2:20pm") == datetime(2023, 6, 19, 14, 20)
