"""Response bodies: results as JSON, and errors as ``{diagnostics: [...]}`` with a status.

Internal: used by :mod:`compiler.serve.app`.

The status of an error follows its class (docs: "apc serve"): a policy refusal
(``workspace.path_denied``, ``policy.*``) is 403; any other input error the CLI reports
(template, context, profile, budget, tokenizer, lowering, strict) is 422; the service's own
codes carry theirs (:data:`SERVE_STATUS`); ``internal.*`` is 500.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from starlette.responses import Response

from compiler import CompileResult
from compiler.errors import APCError, Diagnostic, InternalError, PolicyError, omitted_json

MAX_DIAGNOSTICS = 200
"""Diagnostics in one response at most (the rest are counted in a last ``note``)."""

SERVE_STATUS = {
    "serve.bad_request": 400,
    "serve.bad_host": 400,
    "serve.unauthorized": 401,
    "serve.not_found": 404,
    "serve.unknown_session": 404,
    "serve.method_not_allowed": 405,
    "serve.slow_request": 408,
    "serve.turn_out_of_step": 409,
    "serve.body_too_large": 413,
    "serve.context_too_large": 413,
    "serve.invalid_request": 422,
    "serve.too_many_connections": 429,
    "serve.internal_error": 500,
    "serve.compile_timeout": 503,
    "serve.busy": 503,
}


def status_of(exc: APCError) -> int:
    """The HTTP status of an error."""
    if exc.code in SERVE_STATUS:
        return SERVE_STATUS[exc.code]
    if isinstance(exc, InternalError):
        return 500
    if isinstance(exc, PolicyError):
        return 403
    return 422


def diagnostics_out(found: list[Diagnostic]) -> list[dict[str, Any]]:
    """At most :data:`MAX_DIAGNOSTICS` of ``found`` (each as :meth:`Diagnostic.to_json`: the
    shape ``apc ... --format json`` writes), then a note of how many were left out."""
    out = [d.to_json() for d in found[:MAX_DIAGNOSTICS]]
    if len(found) > MAX_DIAGNOSTICS:
        left = len(found) - MAX_DIAGNOSTICS
        out.append(omitted_json(f"and {left} more diagnostics", left))
    return out


def root_prefix(root: Path | None) -> str | None:
    """What answers leave out of the names of files under ``root`` (the first ``--root``,
    where relative names resolve): its path and a separator. None: no root, or the
    filesystem's root (under which every absolute name would lose its slash)."""
    if root is None or root == Path(root.anchor):
        return None
    return os.path.join(str(root), "")


def as_named(value: Any, prefix: str | None) -> Any:
    """``value`` (JSON: an answer's ledger, events or diagnostics) with each file under the
    first root named relative to it, as a client names it (relative names resolve there):
    ``template.txt``, not the server's ``/home/.../template.txt``."""
    if prefix is None:
        return value
    if isinstance(value, str):
        return value.replace(prefix, "") if prefix in value else value
    if isinstance(value, dict):
        return {k: as_named(v, prefix) for k, v in value.items()}
    if isinstance(value, list):
        return [as_named(v, prefix) for v in value]
    return value


def json_bytes(payload: Any) -> bytes:
    """``payload`` as compact UTF-8 JSON, by orjson (a 16k-token answer in a tenth of the
    time): the same bytes as ``json.dumps(payload, ensure_ascii=False, separators=(",",
    ":"))`` but for how floats are written (the shortest form either way: ``1e-7``, not
    ``1e-07``). What orjson refuses (an integer over 64 bits, a key that is not text) is
    written by ``json``. (No input carries NaN: orjson would write it as null.)"""
    try:
        return orjson.dumps(payload)
    except TypeError:
        body = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return body.encode("utf-8")


def json_response(
    payload: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """``payload`` as compact UTF-8 JSON (:func:`json_bytes`)."""
    return Response(json_bytes(payload), status, headers, media_type="application/json")


def error_body(exc: APCError) -> bytes:
    """The body of :func:`error_response` (for an answer written without the app)."""
    found = {"diagnostics": diagnostics_out(exc.diagnostics)}
    return json.dumps(found, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_response(
    exc: APCError, headers: Mapping[str, str] | None = None, prefix: str | None = None
) -> Response:
    """The error's diagnostics, with its status (files under ``prefix``: :func:`as_named`)."""
    found = as_named(diagnostics_out(exc.diagnostics), prefix)
    return json_response({"diagnostics": found}, status_of(exc), headers)


def compile_payload(result: CompileResult, prefix: str | None = None) -> dict[str, Any]:
    """``{request, ledger, warnings, events, worldInfoState, tools}``: the request is ``apc
    compile``'s, as is; the world info state is ``--world-state``'s; ``tools`` is ``--emit
    tools``'s (with each rewritten schema's ``argumentNames``); the ledger, warnings and
    events name files under ``prefix`` as :func:`as_named` says."""
    return {
        "request": result.request,
        "ledger": as_named(result.ledger.model_dump(mode="json", by_alias=True), prefix),
        "warnings": as_named(diagnostics_out(result.warnings), prefix),
        "events": as_named(
            [e.model_dump(mode="json", by_alias=True) for e in result.events], prefix
        ),
        "worldInfoState": result.world_info_state,
        "tools": result.tools_json(),
    }


def explain_payload(result: CompileResult, prefix: str | None = None) -> dict[str, Any]:
    """``{ledger, warnings, worldInfo}`` (``apc explain --format json`` prints the ledger
    with its ``worldInfo``)."""
    world = result.world_info_report
    return {
        "ledger": as_named(result.ledger.model_dump(mode="json", by_alias=True), prefix),
        "warnings": as_named(diagnostics_out(result.warnings), prefix),
        "worldInfo": world.as_json() if world is not None else None,
    }
