"""The budget's promises for a preset lowered as SillyTavern sends Claude and Google
(hypothesis): the corpus preset with its Claude and Gemini settings varied
(``claude_use_sysprompt`` on and off, a prefill, ``squash_system_messages``,
``use_makersuite_sysprompt`` on and off, a model that takes a system instruction and one
that takes the samplers), compiled in agent and legacy mode at random budgets. Each compile
fails with ``context.budget_exceeded`` or is never over budget, its ledger is the dialect's
count of the request, a bigger budget leaves out nothing it sent, and it is deterministic.

The corpus is read in place; the tests skip when it is absent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler._base.tokens import counter_for
from compiler.providers import get_dialect
from tests.fit.test_budget_promises import PRESET, check_one, compiled, runs

pytestmark = pytest.mark.skipif(not PRESET.is_file(), reason="the corpus is absent")
COUNTER = counter_for("o200k_base")
#: per provider: a model that takes SillyTavern's samplers (a system instruction), and one
#: that refuses them and a prefill (none)
MODELS = {
    "anthropic": ["claude-3-5-sonnet-20240620", "claude-sonnet-4-6"],
    "gemini": ["gemini-2.5-flash", "gemini-pro"],
}


@st.composite
def variants(draw: st.DrawFn, provider: str) -> dict[str, Any]:
    return {
        "model": draw(st.sampled_from(MODELS[provider])),
        "claude_use_sysprompt": draw(st.booleans()),
        "assistant_prefill": draw(st.sampled_from(["", "{{char}}:", "  ", "Sure, "])),
        "squash_system_messages": draw(st.booleans()),
        "use_makersuite_sysprompt": draw(st.booleans()),
        "human_sysprompt_message": draw(st.sampled_from(["", "Begin, {{user}}."])),
    }


SESSIONS: dict[str, compiler.Session] = {}


def preset_text(variant: dict[str, Any]) -> str:
    settings_ = {k: v for k, v in variant.items() if k != "model"}
    return json.dumps(json.loads(PRESET.read_text(encoding="utf-8")) | settings_)


def session(provider: str, mode: str, variant: dict[str, Any]) -> compiler.Session:
    key = json.dumps([provider, mode, variant], sort_keys=True)
    if key not in SESSIONS:
        SESSIONS[key] = compiler.Session.from_string(
            preset_text(variant),
            kind="preset",
            provider=provider,
            mode=mode,
            model=variant["model"],
        )
    return SESSIONS[key]


def counted(provider: str, result: Any) -> int:
    return get_dialect(provider).count_request(result.request, COUNTER)


@settings(max_examples=60, deadline=None)
@given(
    run=runs(),
    variant=st.sampled_from(sorted(MODELS)).flatmap(variants),
    mode=st.sampled_from(["agent", "legacy"]),
    budget=st.integers(2500, 9000),
    more=st.integers(1, 3000),
)
def test_sillytaverns_claude_and_google_layouts_keep_the_promises(
    run: dict[str, Any], variant: dict[str, Any], mode: str, budget: int, more: int
) -> None:
    provider = "anthropic" if variant["model"].startswith("claude") else "gemini"
    held = session(provider, mode, variant)
    small = compiled(provider, mode, run, budget, held)
    big = compiled(provider, mode, run, budget + more, held)
    if small is None:
        return
    assert big is not None, "a budget that fits failed at a bigger one"
    for result in (small, big):
        check_one(result, run)
        assert counted(provider, result) == result.ledger.total_tokens
    sent = {e.id for e in small.ledger.entries if e.action not in ("dropped", "not_reached")}
    kept = {e.id for e in big.ledger.entries if e.action not in ("dropped", "not_reached")}
    assert sent <= kept, f"left out at the bigger budget: {sorted(sent - kept)}"
    fresh = compiler.compile_string(
        preset_text(variant), kind="preset", provider=provider, model=variant["model"],
        mode=mode, context=run, budget=budget,
    )  # fmt: skip
    assert json.dumps(fresh.request, sort_keys=True) == json.dumps(small.request, sort_keys=True)
