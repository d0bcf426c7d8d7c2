"""One suite, every dialect: each shared frame lowers to a request that fits its budget, whose
count is the ledger's, that passes the dialect's own shape check, and keeps every tool call
paired with its result (issue 11)."""

from __future__ import annotations

from typing import Any

import pytest

import compiler
from compiler._base.tokens import counter_for
from compiler.providers import get_dialect
from compiler.providers.registry import PROVIDERS
from tests.providers.frames import CASES, dumps, preset_case

DIALECTS = sorted(PROVIDERS)
MODELS = {
    "openai": "gpt-4o",
    "openai-chat": "gpt-4o",
    "openai-responses": "gpt-4o",
    "openai-compatible": "llama-3.1-8b-instruct",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}


def compile_case(provider: str, name: str, **extra: Any) -> compiler.CompileResult:
    template, ctx, options = CASES[name]
    return compiler.compile_string(
        template, context=ctx, provider=provider, model=MODELS[provider], **options, **extra
    )


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("provider", DIALECTS)
def test_every_dialect_lowers_every_shared_frame(provider: str, name: str) -> None:
    result = compile_case(provider, name)
    dialect = get_dialect(provider)
    counter = counter_for(dialect.encoding(MODELS[provider]))
    counted = dialect.count_request(result.request, counter)
    assert counted == result.ledger.total_tokens
    budget = CASES[name][2].get("budget")
    if budget is not None:
        assert counted <= budget
    dialect.check(result.request)
    assert result.ledger.counts == ("exact" if dialect.exact_counts else "estimate")
    text = dumps(result.request)
    if name == "tools and results":  # the call and its result both reach the request
        assert "call_1" in text and "17" in text and "call_2" in text


@pytest.mark.parametrize("provider", DIALECTS)
def test_the_same_inputs_give_byte_identical_requests(provider: str) -> None:
    first = compile_case(provider, "cache stable")
    again = compile_case(provider, "cache stable")
    assert dumps(first.request) == dumps(again.request)


@pytest.mark.parametrize("provider", DIALECTS)
def test_the_corpus_preset_lowers(provider: str) -> None:
    case = preset_case()
    if case is None:
        pytest.skip("../shared/corpus is absent")
    path, ctx = case
    result = compiler.compile(path, context=ctx, provider=provider, model=MODELS[provider])
    get_dialect(provider).check(result.request)


@pytest.mark.skipif("anthropic" not in PROVIDERS, reason="the anthropic dialect is not built")
def test_unknown_provider_has_a_did_you_mean() -> None:
    with pytest.raises(compiler.LoweringError) as info:
        get_dialect("antropic")
    assert info.value.code == "lower.unknown_provider"
    assert info.value.hint is not None and "anthropic" in info.value.hint
