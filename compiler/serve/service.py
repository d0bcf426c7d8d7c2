"""What the routes do, without HTTP: compile, explain and check a request's source.

Internal: :mod:`compiler.serve.app` runs these in its worker threads.

Every file a request names (``source``, a RUN.json ``context``, and the paths inside a run
context) is read under :func:`compiler.context.sandbox.confine` of the server's roots, so the
one sandbox check (:func:`compiler.context.sandbox.admit`) refuses what lies outside them.
A relative path resolves under the first root; an inline run context's paths too.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from compiler._assemble.assemble import PresetMode
from compiler._driver.api import CompileResult, deep_inputs_coded
from compiler._driver.checking import (
    MAX_TEMPLATE_FILE_BYTES,
    SourceKind,
    add_new,
    check_string,
    over_window,
)
from compiler._driver.options import CompileOptions
from compiler._driver.session import Session
from compiler.context.inputs import (
    MAX_INPUT_BYTES,
    collect_warnings,
    decode_text,
    read_bytes,
)
from compiler.context.run import RunContext, load_context
from compiler.context.sandbox import admit, confine
from compiler.errors import APCError, Diagnostic, StrictError
from compiler.profile import ProfileLayers
from compiler.serve.limits import ServeConfig, session_bytes
from compiler.serve.models import CheckIn, OptionsIn, SourceIn
from compiler.serve.sessions import SessionCache, session_key

_BUDGET_OPTIONS = ("model", "encoding", "budget", "max_output_tokens", "reserve")


def options_of(given: OptionsIn, data_root: Path | None) -> CompileOptions:
    """The :class:`CompileOptions` a request's options say (as ``apc compile``'s do)."""
    p = given.profile
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
    fields = given.model_dump(exclude={"profile", "stop"})
    return CompileOptions(**fields, stop=tuple(given.stop), profile=layers)


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

    def source(self, body: SourceIn) -> tuple[SourceKind, str, str]:
        """The request's source as (kind, text, name): inline, or read from its path."""
        if body.template is not None:
            return "template", body.template, body.name or "<template>"
        if body.preset is not None:
            text = json.dumps(body.preset, ensure_ascii=False)
            return "preset", text, body.name or "<preset>"
        assert body.source is not None  # the model requires one of the three
        path = self.path(body.source)
        name = body.source  # as the client named it (the CLI names its argument)
        if path.suffix.lower() == ".json":
            data = read_bytes(path, limit=MAX_INPUT_BYTES, what="preset")
            return "preset", decode_text(data, name), name
        data = read_bytes(path, limit=MAX_TEMPLATE_FILE_BYTES, what="template")
        return "template", decode_text(data, name, code="template.unreadable"), name

    def session(self, body: SourceIn) -> tuple[Session, Callable[[int], None]]:
        """The session of this caller, source content and options (made on first use), and
        what to call with the size of the body once a turn is done: it weighs the session
        again, with what the turn left in its caches."""
        kind, text, name = self.source(body)
        key = session_key(body.caller, kind, name, text, body.options.model_dump(mode="json"))
        options = options_of(body.options, self.config.data_root)
        found = self.sessions.get(
            key,
            lambda: Session.from_string(text, kind=kind, name=name, options=options),
            weight=session_bytes(len(text), 0, (0, 0)),
        )
        assert isinstance(found, Session)  # a compile session's key (a turn's has its prefix)
        session = found

        def weigh(sent: int) -> None:
            weight = session_bytes(len(text), sent, session.cache_size())
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
                if found and body.options.strict:
                    raise StrictError(found)
                result = session.compile(context)
            finally:
                weigh(sent or 0)
        result.warnings[:0] = found
        return result

    def check(
        self, body: CheckIn, read: Sequence[Diagnostic] = (), sent: int | None = None
    ) -> tuple[bool, list[Diagnostic]]:
        """The diagnostics of the request's source (``apc check``), and whether none is an
        error; budget options or a context also check the budget set-up. ``sent``: the
        body's size."""
        with confine(self.config.read_roots), deep_inputs_coded():
            kind, text, name = self.source(body)
            diagnostics, failed = _check_source(kind, text, name, body.options.mode)
            diagnostics[:0] = read
            if body.options.budget is not None:
                given = body.options
                diagnostics += over_window(
                    given.provider,
                    given.model,
                    given.budget,
                    given.reserve,
                    given.max_output_tokens,
                )
            if not failed and _budget_requested(body):
                found = self._check_budget(body, name, sent)
                add_new(diagnostics, found)
                failed = any(d.severity == "error" for d in found)
        if body.options.strict and any(d.severity == "warning" for d in diagnostics):
            diagnostics = [_as_error(d) for d in diagnostics]
            failed = True
        return not failed, diagnostics

    def _check_budget(self, body: CheckIn, name: str, sent: int | None) -> list[Diagnostic]:
        session, weigh = self.session(body)
        try:
            found = session.check_budget(self.context(body.context, sent))
        except APCError as exc:
            return exc.diagnostics
        finally:
            weigh(sent or 0)
        return found.diagnostics(name)


def _check_source(
    kind: SourceKind, text: str, name: str, mode: PresetMode | None
) -> tuple[list[Diagnostic], bool]:
    """The source's own diagnostics (``apc check FILE``, :func:`compiler.check_string`), and
    whether one is an error."""
    try:
        return list(check_string(text, name=name, kind=kind, mode=mode).warnings), False
    except APCError as exc:
        return exc.diagnostics, True


def _budget_requested(body: CheckIn) -> bool:
    given = body.options
    return body.context is not None or any(
        getattr(given, name) is not None for name in _BUDGET_OPTIONS
    )


def _as_error(d: Diagnostic) -> Diagnostic:
    return dataclasses.replace(d, severity="error")
