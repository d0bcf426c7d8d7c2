"""Holding a lowered request to an official SDK, offline: strict validation against the
SDK's request TypedDict, and the body the SDK puts on the wire through a mock transport.

The SDKs are test extras (``pip install -e '.[test]'``); without them the tests that use
these helpers skip (:data:`needs_openai`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

try:
    import openai
except ImportError:  # pragma: no cover - the SDK is a test extra
    openai = None  # type: ignore[assignment]

try:  # the SDKs send through httpx2 now; older ones through httpx
    import httpx2 as http
except ImportError:  # pragma: no cover
    try:
        import httpx as http  # type: ignore[no-redef]
    except ImportError:
        http = None  # type: ignore[assignment]

needs_openai = pytest.mark.skipif(
    openai is None or http is None,
    reason="the openai SDK is not installed (pip install -e '.[test]')",
)


def consumed(value: Any) -> Any:
    """``value`` with every lazy iterable consumed into a list: pydantic validates an
    ``Iterable[...]`` field only as it is walked."""
    if isinstance(value, Mapping):
        return {k: consumed(v) for k, v in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Iterable):
        return [consumed(v) for v in value]
    return value


def difference(sent: Any, kept: Any, path: str = "request") -> str | None:
    """Where ``kept`` (the validated value) differs from ``sent``: a key the SDK type does
    not know is dropped by validation, a value it would coerce comes back changed."""
    if isinstance(sent, dict) and isinstance(kept, dict):
        for key in sent:
            if key not in kept:
                return f"{path}.{key}: not a field of the SDK type"
            found = difference(sent[key], kept[key], f"{path}.{key}")
            if found:
                return found
        extra = set(kept) - set(sent)
        return f"{path}: the SDK type added {sorted(extra)}" if extra else None
    if isinstance(sent, list) and isinstance(kept, list) and len(sent) == len(kept):
        for i, (a, b) in enumerate(zip(sent, kept, strict=True)):
            found = difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if sent == kept and type(sent) is type(kept) else f"{path}: {sent!r} -> {kept!r}"


def validate_strictly(params: Any, request: dict[str, Any]) -> None:
    """Fail unless ``request`` validates against the SDK TypedDict ``params`` in strict mode,
    every nested array walked, with no key the type does not know."""
    from pydantic import TypeAdapter

    # the adapter must outlive the walk: a lazy iterable's validator refers to the adapter's
    # schema definitions, and pydantic-core panics on walking it once they are freed
    adapter = TypeAdapter(params)
    kept = consumed(adapter.validate_python(request, strict=True))
    problem = difference(request, kept)
    assert problem is None, problem


def wire_body(
    send: Callable[[Any], object],
    reply: dict[str, Any],
    base_url: str = "https://api.openai.test/v1",
) -> tuple[str, dict[str, Any]]:
    """The path and JSON body ``send(client)`` puts on the wire, through an ``openai.OpenAI``
    client at ``base_url`` whose transport answers ``reply`` and never opens a socket."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def handler(request: Any) -> Any:
        seen.append((request.url.path, json.loads(request.content)))
        return http.Response(200, json=reply)

    client = openai.OpenAI(
        api_key="test",
        base_url=base_url,
        http_client=http.Client(transport=http.MockTransport(handler)),
        max_retries=0,
    )
    send(client)
    assert len(seen) == 1
    return seen[0]
