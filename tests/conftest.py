"""Shared fixtures. Sockets are blocked for the whole session (pytest-socket, see pyproject).

Hypothesis profiles: ``ci`` (loaded when the CI environment variable is set) is
derandomized, so every CI run tries the same examples and a red build is never a lucky
draw; ``dev`` (the default) is randomized and tries more examples, keeping the ones that
failed in the local example database. ``HYPOTHESIS_PROFILE=ci|dev`` picks one explicitly and
``APC_EXAMPLES=N`` sets the number of examples of either (``APC_EXAMPLES=1000`` digs deeper).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CORPUS = ROOT.parent / "shared" / "corpus"

# the token-rank cache of the session (and of the processes it starts) in a temp dir, not
# the user's: set at import, before any test module is collected (some count at import)
_RANK_CACHE = tempfile.mkdtemp(prefix="apc-test-cache-")
os.environ["APC_CACHE_DIR"] = _RANK_CACHE
atexit.register(shutil.rmtree, _RANK_CACHE, ignore_errors=True)

_EXAMPLES = os.environ.get("APC_EXAMPLES")
_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    print_blob=True,
    max_examples=int(_EXAMPLES or 100),
    deadline=None,
    suppress_health_check=_SLOW_DATA,
)
settings.register_profile(
    "dev", max_examples=int(_EXAMPLES or 200), deadline=None, suppress_health_check=_SLOW_DATA
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture
def corpus() -> Path:
    """../shared/corpus, read in place; tests that need it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-data corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def priced(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """The messages the OpenAI dialect prices one by one (``message_tokens``) from here on:
    what a history walk reads and prices afresh, not from a session's kept prices."""
    from compiler.providers.openai_chat import OpenAIChat

    seen: list[dict[str, object]] = []
    original = OpenAIChat.message_tokens

    def spy(self: OpenAIChat, message: dict[str, object], counter: object) -> int:
        seen.append(message)
        return original(self, message, counter)  # type: ignore[arg-type]

    monkeypatch.setattr(OpenAIChat, "message_tokens", spy)
    return seen
