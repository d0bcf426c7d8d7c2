"""What the routes do, without HTTP: compile, explain and check a request's source.

Internal: :mod:`compiler.serve.app` runs these in its worker threads.

Every file a request names (``source``, a RUN.json ``context``, and the paths inside a run
context) is read under :func:`compiler.inputs.sandbox.confine` of the server's roots, so the
one sandbox check (:func:`compiler.inputs.sandbox.admit`) refuses what lies outside them.
A relative path resolves under the first root; an inline run context's paths too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from compiler import (
    CheckReport,
    CompileOptions,
    CompileResult,
    RunContext,
    Session,
    SourceText,
    budget_requested,
    check_sources,
    load_context,
    read_source,
)
from compiler.errors import APCError, Diagnostic, StrictError, deep_inputs_coded
from compiler.inputs import admit, collect_warnings, confine
from compiler.profile import ProfileLayers
from compiler.serve.limits import ServeConfig, session_bytes
from compiler.serve.models import CheckIn, ProfileIn, SourceIn
from compiler.serve.sessions import SessionCache, session_key


def options_of(given: BaseModel, data_root: Path | None) -> CompileOptions:
    """The :class:`CompileOptions` a request's options say (as ``apc compile``'s do)."""
    p: ProfileIn | None = getattr(given, "profile", None)
    layers = ProfileLayers(
        profile_id=p.id if p else None,
        preset=p.preset if p else None,
        character=p.character if p else None,
        user=p.user if p else None,
        run=p.run if p else None,
        data_root=data_root,
    )
    # the request's option names are CompileOptions' own (every option is dumped: a name
    # CompileOptions lacks fails every compile the serve tests make)
    fields = given.model_dump(exclude={"profile"})
    return CompileOptions(**{**fields, "stop": tuple(fields["stop"])}, profile=layers)


class Service:
    """The compile service: the server's configuration and its sessions."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        #: the compile sessions (keys of :func:`session_key`) and the turn sessions
        #: (:mod:`compiler.serve.turns`) together
        self.sessions: SessionCache[object] = SessionCache(
            config.max_sessions, config.max_session_bytes, config.session_idle
        )

    def path(self, given: str) -> Path:
        """A path a request names: under the first root when relative (checked when read)."""
        path = Path(given)
        if not path.is_absolute():
            if not self.config.roots:
                with confine(()):  # no --root: a relative path names nothing readable
                    admit(given)
            path = self.config.roots[0] / path
        return path

    def source(self, body: SourceIn) -> SourceText:
        """The request's source: inline, or read from its path (named as the client names
        it, as the CLI names its argument)."""
        if body.template is not None:
            return SourceText("template", body.template, body.name or "<template>")
        if body.preset is not None:
            text = json.dumps(body.preset, ensure_ascii=False)
            return SourceText("preset", text, body.name or "<preset>")
        assert body.source is not None  # the model requires one of the three
        return read_source(self.path(body.source), name=body.source)

    def session(
        self, body: SourceIn, src: SourceText | None = None
    ) -> tuple[Session, Callable[[int], None]]:
        """The session of this caller, source content and options (made on first use), and
        what to call with the size of the body once a turn is done: it weighs the session
        again, with what the turn left in its caches. ``src``: the request's source, when
        already read."""
        src = src if src is not None else self.source(body)
        key = session_key(
            body.caller, src.kind, src.name, src.text, body.options.model_dump(mode="json")
        )
        options = options_of(body.options, self.config.data_root)
        found = self.sessions.get(
            key,
            lambda: Session.from_string(src.text, kind=src.kind, name=src.name, options=options),
            weight=session_bytes(len(src.text), 0, (0, 0)),
        )
        assert isinstance(found, Session)  # a compile session's key (a turn's has its prefix)
        session = found

        def weigh(sent: int) -> None:
            weight = session_bytes(len(src.text), sent, session.cache_size())
            self.sessions.weigh(key, session, weight)

        return session, weigh

    def context(self, given: dict[str, Any] | str | None, sent: int | None = None) -> RunContext:
        """The run context: inline (paths under the first root) or a RUN.json under a root.
        ``sent`` is the size of the body it came in: an inline context, as compact JSON, is
        no larger, so it is measured only when the body is over the context limit."""
        if isinstance(given, str):
            return load_context(self.path(given))
        if given is not None and (sent is None or sent > self.config.max_context_bytes):
            size = len(json.dumps(given, ensure_ascii=False, separators=(",", ":")).encode())
            if size > self.config.max_context_bytes:
                raise APCError(
                    code="serve.context_too_large",
                    message=f"the run context is {size} bytes, over the server's limit of "
                    f"{self.config.max_context_bytes}",
                    hint="send fewer messages (the compile keeps what fits the budget) or "
                    "start the server with a larger --max-context-bytes",
                )
        base = self.config.roots[0] if self.config.roots else None
        # the body was read by parse_json: its surrogates repaired, its numbers checked
        return load_context(given, base_dir=base, from_json=isinstance(given, dict))

    def compile(
        self, body: SourceIn, sent: int | None = None, read: Sequence[Diagnostic] = ()
    ) -> CompileResult:
        """Compile the request (``apc compile`` of the same inputs); ``sent`` is the body's
        size, ``read`` the warnings of reading it."""
        with confine(self.config.read_roots), deep_inputs_coded():
            session, weigh = self.session(body)
            try:
                with collect_warnings() as found:
                    context = self.context(body.context, sent)
                found[:0] = read
                if found and session.options.strict:
                    raise StrictError(found)
                result = session.compile(context)
            finally:
                weigh(sent or 0)
        result.warnings[:0] = found
        return result

    def check(
        self, body: CheckIn, read: Sequence[Diagnostic] = (), sent: int | None = None
    ) -> CheckReport:
        """The diagnostics of the request's source (``apc check``), and whether none is an
        error; budget options or a context also check the budget set-up. ``sent``: the
        body's size."""
        given = body.options.model_dump()
        options = None
        if budget_requested(given, body.context):
            options = options_of(body.options, self.config.data_root)
        weighs: list[Callable[[int], None]] = []
        # read when the budget check runs; none given: the source alone, as apc check counts it
        context = None if body.context is None else partial(self.context, body.context, sent)

        def session_of(source: SourceText, _: CompileOptions) -> Session:
            session, weigh = self.session(body, source)  # the source checked, not read again
            weighs.append(weigh)
            return session

        with confine(self.config.read_roots), deep_inputs_coded():
            try:
                return check_sources(
                    [self.source(body)],
                    mode=given["mode"],
                    strict=given["strict"],
                    read=read,
                    budget=options,
                    context=context,
                    session_of=session_of,
                )
            finally:
                for weigh in weighs:
                    weigh(sent or 0)
