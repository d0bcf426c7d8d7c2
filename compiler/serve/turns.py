"""The turn protocol: sessions that hold a chat, and turns that send only what changed.

Internal: :mod:`compiler.serve.turn_routes` serves these (docs: "apc serve", "Turns").

A session is started whole (``POST /v1/sessions``: the source, the options, the run context
and its chat); a turn names the state it applies to (the message count and
:mod:`~compiler.serve.chat_chain` digest the last answer gave), drops the messages from an
index on if it says so, appends its messages, and may replace fields of the run context or
the options. The answer is the one ``/v1/compile`` gives for the whole chat the session then
holds, byte for byte: the session compiles its :class:`compiler.ChatLog` with a
:class:`compiler.Session` of its own, so only what is new is checked and counted.

A turn whose base is not the session's state is refused (``serve.turn_out_of_step``, 409:
send the chat whole again); a session that is not kept (never started, dropped as the least
recently used, over its weight, idle too long) is ``serve.unknown_session`` (404). Turns of
one session run one at a time (its lock), never interleaved; a turn that fails changes
nothing. Sessions share the server's bounds with the compile sessions
(:class:`~compiler.serve.sessions.SessionCache`): their count, their weight
(:func:`~compiler.serve.limits.turn_session_bytes`) and their idle time.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compiler import APCError, CompileResult, Diagnostic, Session, SourceText, StrictError
from compiler.inputs import confine
from compiler.serve.chat_chain import ChatChain
from compiler.serve.limits import QUICK_TURN_SECONDS, turn_session_bytes
from compiler.serve.models import OptionsIn
from compiler.serve.service import Service, options_of
from compiler.serve.turn_models import SessionIn, TurnIn

Source = SourceText
"""A session's source: its kind, its text and its name."""
KEY_PREFIX = "turn:"
CHAT_FIELD = len('"chat":')


def unknown_session(sid: str) -> APCError:
    return APCError(
        code="serve.unknown_session",
        message=f"no session {sid[:128]!r} on this server (never started, or dropped: the "
        "least recently used, too heavy, or idle too long)",
        hint="start it again whole: POST /v1/sessions with this id and the whole chat",
    )


def out_of_step(count: int, digest: str, given_count: int, given_digest: str) -> APCError:
    return APCError(
        code="serve.turn_out_of_step",
        message=f"the session holds {count} messages ({digest}); the turn is based on "
        f"{given_count} ({given_digest})",
        hint="send the whole chat again: POST /v1/sessions with this session's id",
    )


def _invalid(message: str, path: str) -> APCError:
    return APCError(
        code="serve.invalid_request",
        message=message,
        path=path,
        hint="see the request schema at /openapi.json",
    )


def _compact_size(value: dict[str, Any]) -> int:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Answer:
    """A start's or a turn's answer: the session's id and state after it, and the compile."""

    session: str
    count: int
    digest: str
    result: CompileResult


class TurnSession:
    """One session: its source, options and run context (without the chat), the chat with its
    digests, the compile session that keeps the caches, and the lock its turns take."""

    def __init__(self, sid: str, source: Source, options: OptionsIn, session: Session) -> None:
        self.id = sid
        self.source = source
        self.options = options
        self.session = session
        self.rest: dict[str, Any] = {}
        self.rest_bytes = 2
        self.chat = ChatChain()
        self.lock = threading.Lock()
        #: the state after the last turn done (read without the lock: one reference)
        self.state: tuple[int, str] = (0, self.chat.digest)
        #: the CPU time of the last compile, in seconds (none yet: unknown)
        self.seconds = float("inf")
        #: whether the last compile ran no text-dependent regular expression (no world info
        #: entry scanned, no regex script): a new message's cost then follows the last one's
        self.plain = False

    @property
    def count(self) -> int:
        return len(self.chat)

    @property
    def digest(self) -> str:
        return self.chat.digest

    def publish(self) -> tuple[int, str]:
        """The state now, kept as :attr:`state` (a turn is done)."""
        self.state = (self.count, self.digest)
        return self.state

    def set_rest(self, rest: dict[str, Any]) -> None:
        self.rest, self.rest_bytes = rest, _compact_size(rest)

    def context_bytes(self) -> int:
        """The size of the run context held (chat included) as compact JSON."""
        return self.rest_bytes + CHAT_FIELD + self.chat.json_bytes + (1 if self.rest else 0)

    def weight(self) -> int:
        return turn_session_bytes(
            len(self.source.text),
            self.count,
            self.chat.json_bytes,
            self.rest_bytes,
            self.session.cache_size(),
        )


class TurnService:
    """Start sessions, run their turns, look them up and end them (no HTTP)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.config = service.config
        self.sessions = service.sessions

    def find(self, sid: str) -> TurnSession:
        found = self.sessions.find(KEY_PREFIX + sid)
        if not isinstance(found, TurnSession):
            raise unknown_session(sid)
        return found

    def end(self, sid: str) -> None:
        if not isinstance(self.sessions.pop(KEY_PREFIX + sid), TurnSession):
            raise unknown_session(sid)

    def start(self, body: SessionIn, read: Sequence[Diagnostic] = ()) -> Answer:
        """A session of ``body`` (kept under its id once it compiled), and its first answer."""
        given = dict(body.context or {})
        messages = given.pop("chat", [])
        if not isinstance(messages, list):
            raise _invalid("a session's chat is a list of messages (not a file)", "context.chat")
        with confine(self.config.read_roots):
            source = self.service.source(body)
            turn = TurnSession(
                body.session or secrets.token_urlsafe(16),
                source,
                body.options,
                self._session(source, body.options),
            )
        turn.set_rest(given)
        turn.chat.extend(messages)
        result = self._compile(turn, read)
        state = turn.publish()
        self.sessions.put(KEY_PREFIX + turn.id, turn, turn.weight())
        return Answer(turn.id, *state, result)

    def turn(self, sid: str, body: TurnIn, read: Sequence[Diagnostic] = ()) -> Answer:
        """Run one turn of session ``sid``: the answer for the whole chat it then holds."""
        turn = self.find(sid)
        with turn.lock:
            return self._turn(turn, body, read)

    def quick_turn(self, sid: str, body: TurnIn, read: Sequence[Diagnostic] = ()) -> Answer | None:
        """:meth:`turn`, when it is quick to run where the caller is (the event loop): the
        session's last compile took at most :data:`QUICK_TURN_SECONDS` and ran no regular
        expression a message's text could make slow (world info keys, regex scripts), the
        turn changes only the chat (not the options nor the rest of the context, which could
        bring such work), and no other turn of the session is running; else None, nothing
        done."""
        turn = self.find(sid)
        if turn.seconds > QUICK_TURN_SECONDS or not turn.plain:
            return None
        if body.options is not None or body.context is not None:
            return None
        if not turn.lock.acquire(blocking=False):
            return None
        try:
            return self._turn(turn, body, read)
        finally:
            turn.lock.release()

    def _turn(self, turn: TurnSession, body: TurnIn, read: Sequence[Diagnostic]) -> Answer:
        """One turn of ``turn``, its lock held."""
        base = body.base
        if base.count != turn.count or base.digest != turn.digest:
            raise out_of_step(turn.count, turn.digest, base.count, base.digest)
        start = turn.count if body.replace_from is None else body.replace_from
        if start > turn.count:
            raise _invalid(
                f"replaceFrom {start} is past the {turn.count} messages held", "replaceFrom"
            )
        if body.context is not None and "chat" in body.context:
            raise _invalid("a turn changes the chat by replaceFrom and append", "context.chat")
        undo = self._apply(turn, body, start)
        try:
            result = self._compile(turn, read)
        except BaseException:
            undo()
            raise
        state = turn.publish()
        self.sessions.weigh(KEY_PREFIX + turn.id, turn, turn.weight())
        return Answer(turn.id, *state, result)

    def _apply(self, turn: TurnSession, body: TurnIn, start: int) -> Callable[[], None]:
        """Apply the turn's changes to ``turn``; what undoes them."""
        options, session, rest = turn.options, turn.session, turn.rest
        if body.options is not None:
            turn.session = self._session(turn.source, body.options)  # may raise: nothing done
            turn.options = body.options
        if body.context is not None:
            dropped = {k for k, v in body.context.items() if v is None}
            merged = {**rest, **body.context}
            turn.set_rest({k: v for k, v in merged.items() if k not in dropped})
        try:
            undo_chat = turn.chat.apply(start, body.append)
        except BaseException:
            turn.options, turn.session = options, session
            turn.set_rest(rest)
            raise

        def undo() -> None:
            undo_chat()
            turn.options, turn.session = options, session
            turn.set_rest(rest)

        return undo

    def _session(self, source: Source, given: OptionsIn) -> Session:
        kind, text, name = source.kind, source.text, source.name
        options = options_of(given, self.config.data_root)
        return Session.from_string(text, kind=kind, name=name, options=options)

    def _compile(self, turn: TurnSession, read: Sequence[Diagnostic]) -> CompileResult:
        """The compile of the whole context ``turn`` holds (``/v1/compile``'s answer)."""
        size = turn.context_bytes()
        if size > self.config.max_context_bytes:
            raise APCError(
                code="serve.context_too_large",
                message=f"the session's run context would be {size} bytes, over the "
                f"server's limit of {self.config.max_context_bytes}",
                hint="drop older messages (replaceFrom 0 and the ones to keep), or start the "
                "server with a larger --max-context-bytes",
            )
        found = list(read)
        if found and turn.session.options.strict:
            raise StrictError(found)
        roots = self.config.roots
        started = time.thread_time()  # the work, not the waits for the GIL
        turn.plain = False  # until a compile says otherwise
        try:
            with confine(self.config.read_roots):
                result = turn.session.compile(
                    {**turn.rest, "chat": turn.chat.log}, base_dir=roots[0] if roots else None
                )
        finally:  # a compile that failed counts too: a slow failure is not run again here
            turn.seconds = time.thread_time() - started
        turn.plain = _plain(turn.rest, result)
        result.warnings[:0] = found
        return result


def _plain(rest: dict[str, Any], result: CompileResult) -> bool:
    """Whether a compile of this context runs no regular expression over the chat's text:
    no world info entry scanned (its keys may be regular expressions) and no regex script
    given (the run's own, or a card's it allows)."""
    world = result.world_info_report
    if world is not None and world.considered:
        return False
    return not any(rest.get(k) for k in ("regexScripts", "regex_scripts")) and not any(
        rest.get(k) for k in ("allowCardRegex", "allow_card_regex")
    )
