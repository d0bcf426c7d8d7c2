"""The Chat Completions dialect ('openai', 'openai-chat'): system text under the role
"developer" for o1, o3, o4 and gpt-5 models."""

from __future__ import annotations

import pytest

import compiler
from compiler.lower import get_dialect
from compiler.lower.openai_chat import system_role
from compiler.tokens import counter_for
from tests.providers.frames import CASES


@pytest.mark.parametrize(
    "model",
    [
        "o1",
        "o1-2024-12-17",
        "o3",
        "o3-mini",
        "o4-mini",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5.1",
        "openai/gpt-5-2025-08-07",
    ],
)
def test_reasoning_models_take_system_text_as_developer(model: str) -> None:
    assert system_role(model) == "developer"


@pytest.mark.parametrize(
    "model", ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-3.5-turbo", "gpt-oss-120b", "o10x"]
)
def test_other_models_keep_system(model: str) -> None:
    assert system_role(model) == "system"


@pytest.mark.parametrize(("model", "role"), [("o3", "developer"), ("gpt-4o", "system")])
def test_the_request_says_developer_where_the_model_wants_it(model: str, role: str) -> None:
    template, ctx, options = CASES["system text mid-conversation"]
    result = compiler.compile_string(template, context=ctx, model=model, **options)
    roles = [m["role"] for m in result.request["messages"]]
    assert roles[0] == role and roles[-1] == role  # leading and trailing system text
    assert ({"system", "developer"} - {role}).isdisjoint(roles)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_both_role_names_cost_the_same(encoding: str) -> None:
    """message_tokens has no model: it prices system text as 'system', which must be what
    'developer' costs in the request."""
    counter = counter_for(encoding)
    assert counter.count("system") == counter.count("developer")
    dialect = get_dialect("openai")
    for role in ("system", "developer"):
        assert dialect.message_tokens({"role": role, "content": "Rules."}, counter) == (
            dialect.message_tokens({"role": "system", "content": "Rules."}, counter)
        )
