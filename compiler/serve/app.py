"""The FastAPI application of ``apc serve``: routes, error handlers, the bounded worker pool.

Internal: the interface is the HTTP API (docs: "apc serve"); :func:`create_app` builds it.

Compiles run in a pool of :attr:`ServeConfig.workers` threads, so the event loop keeps
answering (``/healthz`` too) while they run. A request waits for its compile at most
:attr:`ServeConfig.compile_timeout` seconds, queueing included: past it the answer is 503
``serve.compile_timeout``. A compile that had not started is cancelled; one that had runs
to its end in its thread (Python cannot stop a thread) and its result is dropped; it holds
one worker meanwhile, and the others keep serving. With more than
:attr:`ServeConfig.max_pending` requests compiling or waiting, the next is 503
``serve.busy`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.responses import Response

from compiler._base.tokens import counter_for
from compiler.errors import APCError, Diagnostic, is_too_deep, too_deep
from compiler.inputs import collect_warnings, decode_text, parse_json
from compiler.serve.guard import Guard
from compiler.serve.limits import ServeConfig
from compiler.serve.models import (
    CheckIn,
    CheckOut,
    CompileIn,
    CompileOut,
    ErrorOut,
    ExplainOut,
    HealthOut,
)
from compiler.serve.replies import (
    as_named,
    compile_payload,
    diagnostics_out,
    error_response,
    explain_payload,
    json_response,
    root_prefix,
)
from compiler.serve.service import Service
from compiler.serve.turn_routes import add_turn_routes
from compiler.serve.turns import TurnService

T = TypeVar("T")
LOG = logging.getLogger("apc.serve")
SchemaName = Literal["profile", "preset", "context"]
Schemas = dict[str, Callable[[], dict[str, Any]]]
READ_WARNINGS = "apc.read_warnings"
INLINE_PARSE_BYTES = 64 * 1024
"""A body up to this size is parsed on the event loop (a turn's: well under a millisecond);
a larger one in a thread, so that the loop keeps answering meanwhile."""
EXPIRE_SECONDS = 60.0
"""How often idle sessions are looked for when no request comes."""
WARM_ENCODINGS = ("o200k_base", "cl100k_base")
"""Tokenizer encodings loaded at start-up, so that no request pays for loading them."""

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": what}
    for status, what in (
        (400, "the body is not JSON"),
        (401, "a bearer token is needed"),
        (403, "a path outside the roots, or a policy denial"),
        (413, "the body or the run context is over the limit"),
        (408, "the request did not arrive in time"),
        (422, "bad input: the same codes as the CLI"),
        (429, "too many connections from this address"),
        (500, "a bug in the compiler"),
        (503, "over the compile time limit, or too many requests"),
    )
}


def _parse_body(body: bytes) -> tuple[Any, list[Diagnostic]]:
    """The body's JSON, and the warnings of reading it (a lone surrogate, replaced)."""
    text = decode_text(body, "<request>")
    with collect_warnings() as found:
        return parse_json(text, "<request>"), found


class StrictJSONRequest(Request):
    """A request whose JSON body is parsed as the compiler parses input files: NaN,
    Infinity, over-long integers and too-deep nesting are refused (``context.invalid_json``).
    The parse runs in a thread: a large body takes seconds to parse, and the event loop
    keeps answering the other requests (``/healthz`` too) meanwhile."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            if len(body) <= INLINE_PARSE_BYTES:
                self._json, found = _parse_body(body)
            else:
                self._json, found = await asyncio.to_thread(_parse_body, body)
            self.scope[READ_WARNINGS] = found
        return self._json


def _read_warnings(request: Request) -> list[Diagnostic]:
    """The warnings of reading the body (``context.lone_surrogate``)."""
    found: list[Diagnostic] = request.scope.get(READ_WARNINGS, [])
    return found


class StrictJSONRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Any]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            result: Response = await handler(StrictJSONRequest(request.scope, request.receive))
            return result

        return strict


class Pool:
    """The worker threads, with the deadline and the admission bound."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.executor = ThreadPoolExecutor(config.workers, thread_name_prefix="apc-compile")
        self.pending = 0

    async def run(self, fn: Callable[[], T]) -> T:
        if self.pending >= self.config.max_pending:
            raise APCError(
                code="serve.busy",
                message=f"{self.pending} requests are already compiling or waiting",
                hint="retry shortly, or run more replicas",
            )
        self.pending += 1
        try:
            future = asyncio.wrap_future(self.executor.submit(fn))
            try:
                return await asyncio.wait_for(future, self.config.compile_timeout)
            except TimeoutError:
                raise APCError(
                    code="serve.compile_timeout",
                    message=f"the compile ran over the server's limit of "
                    f"{self.config.compile_timeout:g} s",
                    hint="send a smaller input, or start the server with a larger --timeout",
                ) from None
        finally:
            self.pending -= 1


def create_app(config: ServeConfig, schemas: Schemas | None = None) -> FastAPI:
    """The service for ``config``; ``schemas`` serve ``GET /v1/schema/{name}``."""
    service = Service(config)
    pool = Pool(config)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        for encoding in WARM_ENCODINGS:
            await loop.run_in_executor(pool.executor, counter_for, encoding)
        # what start-up made (modules, the app, the encodings) lives as long as the server:
        # the collector's full passes skip it from here on (its pauses were up to 30 ms)
        gc.collect()
        gc.freeze()
        expiring = asyncio.create_task(_expire(service, config))
        yield
        expiring.cancel()
        pool.executor.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="agent-prompt-compiler",
        summary="Compile templates and SillyTavern presets into provider requests.",
        version=_version(),
        lifespan=lifespan,
        responses=_ERRORS,
        docs_url=None,  # the interactive pages load scripts from a CDN: not on an offline tool
        redoc_url=None,
    )
    app.router.route_class = StrictJSONRoute
    prefix = root_prefix(config.roots[0] if config.roots else None)
    _routes(app, service, pool, schemas or {}, prefix)
    turns = TurnService(service)
    add_turn_routes(app, turns, pool.run, lambda: pool.pending == 0, _read_warnings, prefix)
    _handlers(app, prefix)
    app.add_middleware(
        Guard,
        token=config.token,
        max_body_bytes=config.max_body_bytes,
        max_held_bytes=config.max_held_bytes,
        body_seconds=config.body_seconds,
    )
    if config.token is not None:
        _document_bearer(app)
    app.state.service = service
    app.state.turns = turns
    return app


async def _expire(service: Service, config: ServeConfig) -> None:
    """Drop idle sessions now and then, also when no request comes to do it."""
    while True:
        await asyncio.sleep(min(EXPIRE_SECONDS, config.session_idle))
        service.sessions.expire()


def _routes(
    app: FastAPI, service: Service, pool: Pool, schemas: Schemas, prefix: str | None
) -> None:
    @app.post("/v1/compile", response_model=CompileOut)
    async def compile_route(body: CompileIn, request: Request) -> Response:
        """The provider request ``apc compile`` prints for the same inputs, with the
        ledger, the warnings and the journal events."""
        sent, read = len(await request.body()), _read_warnings(request)
        payload = await pool.run(lambda: compile_payload(service.compile(body, sent, read), prefix))
        return json_response(payload)

    @app.post("/v1/explain", response_model=ExplainOut)
    async def explain_route(body: CompileIn, request: Request) -> Response:
        """How the compile spends its budget (``apc explain --format json``)."""
        sent, read = len(await request.body()), _read_warnings(request)
        payload = await pool.run(lambda: explain_payload(service.compile(body, sent, read), prefix))
        return json_response(payload)

    @app.post("/v1/check", response_model=CheckOut)
    async def check_route(body: CheckIn, request: Request) -> Response:
        """The source's diagnostics (``apc check``); ``ok`` false when one is an error."""
        sent, read = len(await request.body()), _read_warnings(request)
        report = await pool.run(lambda: service.check(body, read, sent))
        found = diagnostics_out(list(report.diagnostics))
        return json_response({"ok": report.ok, "diagnostics": as_named(found, prefix)})

    @app.get("/v1/schema/{name}", response_model=dict[str, Any])
    async def schema_route(name: SchemaName) -> Response:
        """The JSON Schema (draft 2020-12) of an input format (``apc schema NAME``)."""
        make = schemas.get(name)
        if make is None:
            raise HTTPException(404, f"no schema {name!r} on this server")
        return json_response(make())

    @app.get("/healthz", response_model=HealthOut)
    async def health_route() -> Response:
        """Whether the server answers, and how many sessions it keeps (no token needed)."""
        return json_response({"status": "ok", "sessions": len(service.sessions)})


def _handlers(app: FastAPI, prefix: str | None) -> None:
    @app.exception_handler(APCError)
    async def on_apc_error(_: Request, exc: APCError) -> Response:
        return error_response(exc, prefix=prefix)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(_: Request, exc: RequestValidationError) -> Response:
        return error_response(_invalid(exc))

    @app.exception_handler(HTTPException)
    async def on_http(_: Request, exc: HTTPException) -> Response:
        cause = exc.__cause__
        if isinstance(cause, APCError):  # the strict JSON parser's (the body is not JSON)
            return json_response({"diagnostics": diagnostics_out(cause.diagnostics)}, 400)
        if isinstance(cause, RecursionError | ValueError) and is_too_deep(cause):
            return json_response({"diagnostics": diagnostics_out(too_deep().diagnostics)}, 400)
        code = {404: "serve.not_found", 405: "serve.method_not_allowed"}.get(
            exc.status_code, "serve.bad_request"
        )
        return error_response(APCError(code=code, message=str(exc.detail)), exc.headers)

    @app.exception_handler(Exception)
    async def on_bug(_: Request, exc: Exception) -> Response:
        LOG.error("internal error", exc_info=exc)  # the traceback goes to the log only
        return error_response(
            APCError(
                code="serve.internal_error",
                message="the compiler failed on this request: a bug (the server log has it)",
                hint="please report it with the request that caused it",
            )
        )


def _document_bearer(app: FastAPI) -> None:
    """Say in the OpenAPI document that every route but ``/healthz`` needs the token."""
    plain = app.openapi

    def openapi() -> dict[str, Any]:
        doc = plain()  # made once, then cached by FastAPI: the edits below are idempotent
        schemes = doc.setdefault("components", {}).setdefault("securitySchemes", {})
        schemes["bearer"] = {"type": "http", "scheme": "bearer"}
        doc["security"] = [{"bearer": []}]
        doc["paths"]["/healthz"]["get"]["security"] = []
        return doc

    app.openapi = openapi  # type: ignore[method-assign]


def _invalid(exc: RequestValidationError) -> APCError:
    """The first validation error as ``serve.invalid_request``, with the JSON path it
    points at (a body that is not JSON never gets here: the strict parser refuses it)."""
    errors = list(exc.errors())
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return APCError(
        code="serve.invalid_request",
        message=f"{first.get('msg', 'invalid')}{more}",
        path=".".join(loc) or None,
        hint="see the request schema at /openapi.json",
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-prompt-compiler")
    except PackageNotFoundError:
        return "0"
