"""The providers' prompt-cache billing rules, one table per dialect family (each dialect
class takes its table as ``cache_rules``; see :class:`compiler.providers.dialect.CacheRule`).

Internal: the API is :meth:`compiler.providers.Dialect.cache_rule`.

Multipliers are relative to the model's base input price; prices themselves are not kept
(they change more often than the rules). Read from the providers' documentation and pricing
pages on the date each rule carries; ``docs/pages/budgets/caching.md`` is the table a user
reads, with the same sources.
"""

from __future__ import annotations

from collections.abc import Mapping

from compiler.providers.dialect import CacheRule

AS_OF = "2026-12-02"

_OPENAI_SOURCE = (
    "https://platform.openai.com/docs/guides/prompt-caching; "
    "https://platform.openai.com/docs/pricing"
)


def _openai(read: float) -> CacheRule:
    """OpenAI's automatic prefix caching: prompts of 1,024 tokens or more, hits in steps of
    128 tokens, cached input at ``read`` of the input price, no write surcharge."""
    return CacheRule(
        minimum=1024,
        read=read,
        increment=128,
        ttl="5-10 minutes unused (up to 1 hour off-peak)",
        source=_OPENAI_SOURCE,
        as_of=AS_OF,
    )


#: OpenAI (Chat Completions and Responses): the cached-input price is half the input price
#: for the GPT-4o (mini too), GPT-4.5, o1 and o3-mini families, a quarter for GPT-4.1, o3 and
#: o4-mini, a tenth for GPT-5. Models before GPT-4o are not cached.
OPENAI_CACHE_RULES: Mapping[str, CacheRule] = {
    **dict.fromkeys(("gpt-4o", "gpt-4.5", "o1", "o1-mini", "o3-mini"), _openai(0.5)),
    **dict.fromkeys(("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini"), _openai(0.25)),
    **dict.fromkeys(("gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5.2"), _openai(0.1)),
}

_ANTHROPIC_SOURCE = (
    "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching; "
    "https://docs.anthropic.com/en/docs/about-claude/pricing"
)


def _claude(minimum: int) -> CacheRule:
    """Anthropic's explicit caching (``cache_control`` breakpoints, 5-minute TTL): a cache
    write costs 1.25 times the input price, a cache read a tenth; below the model's minimum
    cacheable length nothing is cached."""
    return CacheRule(
        minimum=minimum,
        read=0.1,
        write=1.25,
        explicit=True,
        ttl="5 minutes, refreshed on each hit (1 hour: writes at 2x)",
        source=_ANTHROPIC_SOURCE,
        as_of=AS_OF,
    )


#: Anthropic: the minimum cacheable prompt per model (1,024 tokens unless listed).
ANTHROPIC_CACHE_RULES: Mapping[str, CacheRule] = {
    "claude": _claude(1024),
    **dict.fromkeys(("claude-3-haiku", "claude-3-5-haiku"), _claude(2048)),
    **dict.fromkeys(("claude-opus-4-5", "claude-opus-4-6", "claude-haiku-4-5"), _claude(4096)),
}

_GEMINI_SOURCE = (
    "https://ai.google.dev/gemini-api/docs/caching; https://ai.google.dev/gemini-api/docs/pricing"
)


def _gemini(minimum: int) -> CacheRule:
    """Gemini's implicit caching (2.5 and later models): automatic, at a tenth of the input
    price, from the model's minimum prompt length; no write surcharge or storage fee."""
    return CacheRule(
        minimum=minimum,
        read=0.1,
        ttl="not documented (minutes)",
        source=_GEMINI_SOURCE,
        as_of=AS_OF,
    )


#: Gemini: implicit caching of Gemini 2.5 and later (earlier models have none).
GEMINI_CACHE_RULES: Mapping[str, CacheRule] = {
    **dict.fromkeys(("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite"), _gemini(2048)),
    **dict.fromkeys(("gemini-3", "gemini-3.1", "gemini-3.5"), _gemini(4096)),
}
