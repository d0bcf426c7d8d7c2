"""Schemathesis against the live server's OpenAPI document: generated requests, valid and
not, never get a 500, and every response matches the schema of its status."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.serve.server import LOOPBACK, Server

schemathesis = pytest.importorskip("schemathesis", reason="the test extra is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation.modes import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = LOOPBACK
EXAMPLES = int(os.environ.get("APC_SERVE_EXAMPLES", "10"))
"""Generated requests per route and mode (valid, invalid): bounded, derandomized."""
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_generated_requests(server: Server, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {
        "/v1/compile",
        "/v1/check",
        "/healthz",
        "/v1/sessions",
        "/v1/sessions/{session}/turns",
        "/v1/sessions/{session}",
    }
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and operation.path == "/healthz":
            continue  # no input to get wrong

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any) -> None:
            case.call_and_validate(checks=CHECKS)

        check()
