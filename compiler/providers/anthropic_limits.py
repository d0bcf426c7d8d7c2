"""The output limits of Claude models (the Anthropic dialect's table), and a model name's
version.

Internal: part of :mod:`compiler.providers.anthropic`.
"""

from __future__ import annotations

import re

#: claude-<family>-<major>[-<minor>] or claude-<major>[-<minor>]-<family> (a date is no minor)
VERSION_RE = re.compile(
    r"claude-(?:(?:opus|sonnet|haiku)-(\d+)(?:-(\d)(?!\d))?"
    r"|(\d+)(?:-(\d)(?!\d))?-(?:opus|sonnet|haiku))"
)


def claude_version(model: str) -> tuple[int, int] | None:
    """(major, minor) of a Claude model name (``claude-sonnet-4-5-20250929`` is (4, 5),
    ``claude-3-5-haiku-latest`` (3, 5)), or None when the name does not say."""
    m = VERSION_RE.match(model.split("/")[-1])
    if m is None:
        return None
    major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return int(major), int(minor or 0)


#: The maximum output (``max_tokens``) of Claude models, longest prefix wins (snapshots and
#: aliases take their model's; no ``claude`` catch-all: an unknown model's is sent as asked).
#: Source: Anthropic's models overview and model pages ("Max output"), as of February 2026.
#: Claude 3.7 Sonnet's 128,000 needs a beta header not sent; Sonnet 4.6: its release figure.
CLAUDE_OUTPUT_LIMITS: dict[str, int] = {
    **dict.fromkeys(("claude-3-haiku", "claude-3-sonnet", "claude-3-opus"), 4_096),
    **dict.fromkeys(("claude-3-5-haiku", "claude-3-5-sonnet"), 8_192),
    **dict.fromkeys(("claude-opus-4", "claude-opus-4-1"), 32_000),
    **dict.fromkeys(("claude-3-7-sonnet", "claude-sonnet-4", "claude-sonnet-4-5"), 64_000),
    **dict.fromkeys(("claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-5"), 64_000),
    "claude-opus-4-6": 128_000,
}
