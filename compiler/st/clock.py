"""The clock of SillyTavern's macros: moment.js formats (English) and ``humanize``, pure
functions of a time, importing nothing of the compiler.

Internal: the clock behind :mod:`compiler.st.macros` (which exports ``humanize``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime, timedelta

__all__ = ["MONTHS", "format_moment", "humanize"]

_MOMENT = re.compile(
    r"\[[^\]]*\]|LTS|LT|LLLL|LLL|LL|L|YYYY|YY|MMMM|MMM|MM|Mo|M|DDDD|DDD|Do|DD|D|dddd|ddd|dd|d"
    r"|HH|H|hh|h|mm|m|ss|s|SSS|A|a|ZZ|Z|X|x"
)
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _offset(t: datetime, sep: str) -> str:
    delta = t.utcoffset() or timedelta()
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{sep}{abs(minutes) % 60:02d}"


def _token(t: datetime, token: str) -> str:
    """One moment.js format token (English locale)."""
    h12 = t.hour % 12 or 12
    simple: dict[str, Callable[[], str]] = {
        "LTS": lambda: f"{h12}:{t.minute:02d}:{t.second:02d} {'AM' if t.hour < 12 else 'PM'}",
        "LT": lambda: f"{h12}:{t.minute:02d} {'AM' if t.hour < 12 else 'PM'}",
        "L": lambda: f"{t.month:02d}/{t.day:02d}/{t.year:04d}",
        "LL": lambda: f"{MONTHS[t.month - 1]} {t.day}, {t.year}",
        "LLL": lambda: f"{_token(t, 'LL')} {_token(t, 'LT')}",
        "LLLL": lambda: f"{_DAYS[t.weekday()]}, {_token(t, 'LLL')}",
        "YYYY": lambda: f"{t.year:04d}",
        "YY": lambda: f"{t.year % 100:02d}",
        "MMMM": lambda: MONTHS[t.month - 1],
        "MMM": lambda: MONTHS[t.month - 1][:3],
        "MM": lambda: f"{t.month:02d}",
        "Mo": lambda: _ordinal(t.month),
        "M": lambda: str(t.month),
        "DDDD": lambda: f"{t.timetuple().tm_yday:03d}",
        "DDD": lambda: str(t.timetuple().tm_yday),
        "Do": lambda: _ordinal(t.day),
        "DD": lambda: f"{t.day:02d}",
        "D": lambda: str(t.day),
        "dddd": lambda: _DAYS[t.weekday()],
        "ddd": lambda: _DAYS[t.weekday()][:3],
        "dd": lambda: _DAYS[t.weekday()][:2],
        "d": lambda: str((t.weekday() + 1) % 7),
        "HH": lambda: f"{t.hour:02d}",
        "H": lambda: str(t.hour),
        "hh": lambda: f"{h12:02d}",
        "h": lambda: str(h12),
        "mm": lambda: f"{t.minute:02d}",
        "m": lambda: str(t.minute),
        "ss": lambda: f"{t.second:02d}",
        "s": lambda: str(t.second),
        "SSS": lambda: f"{t.microsecond // 1000:03d}",
        "A": lambda: "AM" if t.hour < 12 else "PM",
        "a": lambda: "am" if t.hour < 12 else "pm",
        "ZZ": lambda: _offset(t, ""),
        "Z": lambda: _offset(t, ":"),
        "X": lambda: str(int(t.timestamp())),
        "x": lambda: str(int(t.timestamp() * 1000)),
    }
    if token.startswith("["):
        return token[1:-1]
    return simple[token]()


def format_moment(t: datetime, fmt: str) -> str:
    """``t`` in the moment.js format ``fmt`` (the tokens of :data:`_MOMENT`, English)."""
    return _MOMENT.sub(lambda m: _token(t, m.group()), fmt)


def humanize(delta: timedelta) -> str:
    """A duration as moment.js's ``duration.humanize()`` words it (English, its default
    thresholds: 44 s, 45 s, 45 min, 22 h, 26 days, 11 months), which SillyTavern's
    ``{{idle_duration}}`` prints (public/scripts/macros.js getTimeSinceLastMessage)."""
    ms = abs(delta) // timedelta(milliseconds=1)

    def rounded(x: float) -> int:  # JavaScript's Math.round
        return math.floor(x + 0.5)

    days = ms / 864e5
    seconds, minutes, hours = rounded(ms / 1e3), rounded(ms / 6e4), rounded(ms / 36e5)
    months = days * 4800 / 146097  # moment's daysToMonths
    for words, value, limit in (
        ("a few seconds", seconds, 45),
        ("a minute", minutes, 2),
        ("{} minutes", minutes, 45),
        ("an hour", hours, 2),
        ("{} hours", hours, 22),
        ("a day", rounded(days), 2),
        ("{} days", rounded(days), 26),
        ("a month", rounded(months), 2),
        ("{} months", rounded(months), 11),
        ("a year", rounded(months / 12), 2),
    ):
        if value < limit:
            return words.format(value)
    return f"{rounded(months / 12)} years"
