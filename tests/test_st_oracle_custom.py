"""The ``openai-compatible`` dialect against SillyTavern 1.12.6's "Custom (OpenAI-compatible)"
source, field for field.

Every capture in ``tests/fixtures/st_oracle`` is the body SillyTavern's server sent to a mock
custom endpoint (``chat_completion_source: custom``, model ``gpt-4o``, streaming on): this
project compiles each case with ``--provider openai-compatible`` and must send the same body,
every key and value, but for the documented differences (docs, Providers): ``stream`` and
SillyTavern's empty ``logit_bias`` are not sent, and the deliberate differences of
``tests/test_st_oracle.py`` apply as they do to the openai dialect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.errors import BudgetError
from tests.test_st_oracle import (
    CASES,
    FIXTURES,
    MESSAGE_DIFFERENCES,
    SAMPLER_DIFFERENCES,
    XFAIL,
    _case,
    _compile,
    _first_difference,
    _load,
    _shape,
)

#: What SillyTavern sends to a custom endpoint that this dialect leaves to the caller.
NOT_SENT = ("stream", "logit_bias")


def expected(name: str) -> dict[str, Any]:
    """The capture's body as this dialect sends it: the documented differences applied."""
    capture = _load(FIXTURES / "captures" / f"{name}.json")
    body = {**capture["body"], **SAMPLER_DIFFERENCES.get(name, {})}
    assert body["stream"] is True and body["logit_bias"] == {}  # streaming on, no bias preset
    for key in NOT_SENT:
        del body[key]
    body["messages"] = MESSAGE_DIFFERENCES.get(name, list)(list(body["messages"]))
    return body


@pytest.mark.parametrize("name", [_case(n) for n in CASES if n not in XFAIL])
def test_the_body_equals_what_sillytavern_sends_a_custom_endpoint(
    name: str, tmp_path: Path
) -> None:
    spec = _load(FIXTURES / "cases" / f"{name}.json")
    capture = _load(FIXTURES / "captures" / f"{name}.json")
    assert capture["sillytavern"]["oai_settings"]["chat_completion_source"] == "custom"
    if "expectError" in spec:
        with pytest.raises(BudgetError) as err:
            _compile(spec, tmp_path, "openai-compatible")
        assert err.value.code == spec["expectError"]
        return
    request = _compile(spec, tmp_path, "openai-compatible")
    want = expected(name)
    got = {**request, "messages": [_shape(m, capture["hashed"]) for m in request["messages"]]}
    assert got["messages"] == want["messages"], _first_difference(want["messages"], got["messages"])
    assert got == want
