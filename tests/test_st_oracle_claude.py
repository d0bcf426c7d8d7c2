"""SillyTavern 1.12.6's own Anthropic requests as the yardstick for ``--provider anthropic``.

Each case in ``tests/fixtures/st_oracle/claude/cases`` names a preset, a card, a persona, a
chat and a Claude model; ``claude/captures/<case>.json`` is the Messages API body SillyTavern
1.12.6's server sent to Anthropic for it (chat completion source Claude, captured with
st-oracle against a mock, see the fixtures' README), after its own ``convertClaudeMessages``.
This project compiles the same case (legacy mode, ``--provider anthropic``, the case's model)
and must send the same ``system``, the same turns in order, role and content, and the same
samplers. Cases whose inputs come from ``../shared/corpus`` read it in place (skipped when it
is absent) and their captures keep each text's sha256 and length, never the text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from compiler.providers.anthropic_tavern import API_VERSION
from tests.test_st_oracle import FIXTURES, ST_COMMIT, ST_VERSION, _compile, _load

CLAUDE = FIXTURES / "claude"
CASES = sorted(p.stem for p in (CLAUDE / "captures").glob("*.json"))

#: The body's sampler fields, compared as they are (``stop_sequences``: SillyTavern sends
#: an empty list, this project none).
SAMPLERS = ("max_tokens", "temperature", "top_p", "top_k", "model")

#: Captures whose history SillyTavern cut counting with its Claude tokenizer
#: (src/tokenizers/claude.json): this project counts Anthropic budgets with its per-script
#: estimate, an upper bound, and holds 5% back (docs, Token counting), so it keeps the
#: newest of the same turns, fewer of them.
CUT_EARLIER = {
    "claude_unseen_tight": "a 32-message chat in an 1100-token context",
}


def _text(value: Any, hashed: bool) -> Any:
    """A text as the capture stores it: itself, or (hashed) its sha256 and length."""
    assert isinstance(value, str), f"not text: {value!r}"
    if not hashed:
        return value
    return {"sha256": hashlib.sha256(value.encode("utf-8")).hexdigest(), "length": len(value)}


@pytest.mark.parametrize("name", CASES)
def test_the_anthropic_request_equals_sillytaverns(name: str, tmp_path: Path) -> None:
    spec = _load(CLAUDE / "cases" / f"{name}.json")
    capture = _load(CLAUDE / "captures" / f"{name}.json")
    hashed = capture["hashed"]
    request = _compile(spec, tmp_path, provider="anthropic")
    body = capture["body"]
    system = request.get("system")  # SillyTavern sends "" when nothing leads; none here
    assert (_text(system, hashed) if system else None) == (body.get("system") or None)
    want = [{"role": m["role"], "content": m["content"]} for m in body["messages"]]
    got = [{"role": m["role"], "content": _text(m["content"], hashed)} for m in request["messages"]]
    if name in CUT_EARLIER:
        assert 0 < len(got) < len(want), f"{len(got)} turns, SillyTavern sent {len(want)}"
        want = want[-len(got) :]
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        assert w == g, f"turn {i}: SillyTavern sent {w!r}, this project {g!r}"
    assert len(got) == len(want)
    for key in SAMPLERS:
        assert request.get(key) == body.get(key), f"{key}: SillyTavern sent {body.get(key)!r}"
    assert request.get("stop_sequences", []) == body.get("stop_sequences", [])


@pytest.mark.parametrize("name", CASES)
def test_each_capture_records_sillytavern_and_keeps_corpus_text_out(name: str) -> None:
    spec = _load(CLAUDE / "cases" / f"{name}.json")
    capture = _load(CLAUDE / "captures" / f"{name}.json")
    st = capture["sillytavern"]
    assert (st["version"], st["commit"][:9]) == (ST_VERSION, ST_COMMIT)
    # the API version whose samplers the request carries (create_arguments sends it)
    assert st["request_headers"]["anthropic-version"] == API_VERSION
    uses_corpus = "corpus:" in json.dumps(spec)
    assert capture["hashed"] is uses_corpus
    if uses_corpus:  # corpus text never lands in the repository
        body = capture["body"]
        assert all(set(m["content"]) == {"sha256", "length"} for m in body["messages"])
        assert not isinstance(body.get("system"), str) or not body["system"]


def test_every_case_has_its_capture() -> None:
    cases = sorted(p.stem for p in (CLAUDE / "cases").glob("*.json"))
    assert cases == CASES
