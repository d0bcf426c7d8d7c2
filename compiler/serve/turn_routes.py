"""The routes of the turn protocol: ``/v1/sessions`` and its turns.

Internal: :func:`compiler.serve.app.create_app` adds them (docs: "apc serve", "Turns").

The body of a start or a turn is ``/v1/compile``'s for the whole chat the session then holds,
byte for byte; the session's state is in the headers :data:`SESSION_HEADER`,
:data:`COUNT_HEADER` and :data:`DIGEST_HEADER` (the next turn's ``base``).

A warm turn takes a short lane (:class:`TurnLane`, inside the guard): its body parsed and
validated as the route would, the turn run on the event loop, the answer sent, without
FastAPI's routing and request handling, which cost a warm turn about a tenth of its compile.
Anything else (another content type, a body that is not a valid turn or warns, a session
that is not warm or busy, a turn that fails) goes on to the route, which answers it as
always (a turn that failed changed nothing, so the route runs it again and says why).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, Path, Request
from starlette.responses import Response

from compiler import Diagnostic
from compiler.inputs import collect_warnings, decode_text, parse_json
from compiler.serve.guard import ASGIApp, Message, Receive, Scope, Send
from compiler.serve.limits import QUICK_TURN_BYTES
from compiler.serve.models import CompileOut, ErrorOut
from compiler.serve.replies import compile_payload, json_bytes, json_response
from compiler.serve.turn_models import SESSION_ID, SessionIn, SessionOut, TurnIn
from compiler.serve.turns import Answer, TurnService

T = TypeVar("T")
Run = Callable[[Callable[[], T]], Awaitable[T]]

SESSION_HEADER = "apc-session"
COUNT_HEADER = "apc-session-count"
DIGEST_HEADER = "apc-session-digest"
_STATE_HEADERS = {
    SESSION_HEADER: {"description": "the session's id", "schema": {"type": "string"}},
    COUNT_HEADER: {
        "description": "how many messages the session holds now (the next turn's base.count)",
        "schema": {"type": "integer"},
    },
    DIGEST_HEADER: {
        "description": "their digest (the next turn's base.digest)",
        "schema": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    },
}
_ANSWER: dict[int | str, dict[str, Any]] = {
    200: {"headers": _STATE_HEADERS},
    404: {"model": ErrorOut, "description": "no such session (serve.unknown_session)"},
}
_TURN = {
    **_ANSWER,
    409: {"model": ErrorOut, "description": "the turn's base is not the session's state"},
}
SidPath = Annotated[str, Path(pattern=SESSION_ID, max_length=128)]
TURN_PATH = re.compile(r"/v1/sessions/([A-Za-z0-9._~-]{1,128})/turns")
"""The path of a session's turns (the route's, its id as :data:`SESSION_ID` says)."""


def _state(sid: str, count: int, digest: str) -> dict[str, str]:
    return {SESSION_HEADER: sid, COUNT_HEADER: str(count), DIGEST_HEADER: digest}


def answer_response(got: Answer, prefix: str | None) -> Response:
    """The answer of a start or a turn: ``/v1/compile``'s body, the state in the headers."""
    body = json_bytes(compile_payload(got.result, prefix))
    headers = _state(got.session, got.count, got.digest)
    return Response(body, 200, headers, media_type="application/json")


def _json_body(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return bool(value.split(b";", 1)[0].strip().lower() == b"application/json")
    return False


class TurnLane:
    """The short lane of a warm turn, in front of the routes (module docstring)."""

    def __init__(
        self, app: ASGIApp, *, turns: TurnService, idle: Callable[[], bool], prefix: str | None
    ) -> None:
        self.app = app
        self.turns = turns
        self.idle = idle
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = None
        if scope["type"] == "http" and scope["method"] == "POST":
            found = TURN_PATH.fullmatch(scope["path"])
        if found is None or found[1] in {".", ".."} or not _json_body(scope):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = [await receive()]
        while messages[-1]["type"] == "http.request" and messages[-1].get("more_body", False):
            messages.append(await receive())
        body = b"".join(m.get("body", b"") for m in messages)
        quick = len(body) <= QUICK_TURN_BYTES and self.idle()
        got = self._turn(found[1], body) if quick else None
        if got is not None:
            await answer_response(got, self.prefix)(scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    def _turn(self, sid: str, body: bytes) -> Answer | None:
        """The turn run here, when it is warm and sound; else None (nothing done)."""
        try:
            with collect_warnings() as found:
                data = parse_json(decode_text(body, "<request>"), "<request>")
            if found:
                return None
            return self.turns.quick_turn(sid, TurnIn.model_validate(data))
        except Exception:  # answered by the route, as usual: a failed turn changed nothing
            return None


def add_turn_routes(
    app: FastAPI,
    turns: TurnService,
    run: Run[Any],
    idle: Callable[[], bool],
    read_warnings: Callable[[Request], list[Diagnostic]],
    prefix: str | None,
) -> None:
    """The routes of :mod:`compiler.serve.turns` on ``app``, and the :class:`TurnLane` in
    front of them: each compile runs by ``run`` (the worker pool), but a warm turn's while
    the pool is ``idle`` (no compile running or waiting there: a turn on the event loop
    would hold them back); ``read_warnings`` are the warnings of reading a request's
    body."""
    app.add_middleware(TurnLane, turns=turns, idle=idle, prefix=prefix)

    def respond(got: Answer) -> Response:
        return answer_response(got, prefix)

    def answer(done: Callable[[], Answer]) -> Callable[[], Response]:
        def work() -> Response:  # in a worker: the payload is made there, off the event loop
            return respond(done())

        return work

    @app.post("/v1/sessions", response_model=CompileOut, responses=_ANSWER)
    async def start_route(body: SessionIn, request: Request) -> Response:
        """Start a session whole (or start it again: the same ``session`` id): the source,
        the options and the run context with its whole chat. The answer is
        ``/v1/compile``'s for them; the headers say the session's id and state."""
        read = read_warnings(request)
        response: Response = await run(answer(lambda: turns.start(body, read)))
        return response

    @app.post("/v1/sessions/{session}/turns", response_model=CompileOut, responses=_TURN)
    async def turn_route(session: SidPath, body: TurnIn, request: Request) -> Response:
        """One turn: the messages appended, or dropped from ``replaceFrom`` on and then
        appended, to the state ``base`` names. The answer is ``/v1/compile``'s for the whole
        chat the session then holds; out of step with the session: 409, send it whole."""
        read = read_warnings(request)
        if len(await request.body()) <= QUICK_TURN_BYTES and idle():
            # a warm turn (bounded work) runs here: the hand-off to a worker and back costs
            # about as much as the turn's own work beyond its compile
            got = turns.quick_turn(session, body, read)
            if got is not None:
                return respond(got)
        response: Response = await run(answer(lambda: turns.turn(session, body, read)))
        return response

    @app.get("/v1/sessions/{session}", response_model=SessionOut, responses=_ANSWER)
    async def state_route(session: SidPath) -> Response:
        """The session's state: how many messages it holds and their digest."""
        count, digest = turns.find(session).state
        state = {"session": session, "count": count, "digest": digest}
        return json_response(state, headers=_state(session, count, digest))

    @app.delete(
        "/v1/sessions/{session}",
        status_code=204,
        response_class=Response,
        responses={404: _ANSWER[404]},
    )
    async def end_route(session: SidPath) -> Response:
        """Drop the session and what it holds."""
        turns.end(session)
        return Response(status_code=204)
