"""Compile sessions: a source read once, compiled turn after turn with caches it owns.

A :class:`Session` is to :func:`compile` what httpx's ``Client`` is to ``httpx.get``: it
holds the parsed template or preset, a bounded token-count cache per encoding and the
summary cache, and reuses them for every :meth:`Session.compile`. Nothing is cached per
process but the loaded tokenizer encodings, so two sessions never share what one learnt.
:func:`compile` and :func:`compile_string` are the one-shot form: a session used once.

Internal: the names are public as ``compiler.Session``, ``compiler.compile`` and friends.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Unpack

from compiler._base.tokens import TokenCounter
from compiler._driver.api import (
    CompileResult,
    Context,
    Source,
    TurnMemo,
    check_source_budget,
    compile_source,
    deep_inputs_coded,
    open_source,
    string_source,
)
from compiler._driver.checking import SourceKind
from compiler._driver.feasibility import Feasibility
from compiler._driver.options import CompileOptions, OptionFields
from compiler.context.inputs import collect_warnings, is_file
from compiler.errors import ContextError, Diagnostic
from compiler.fit import SummaryCache

__all__ = ["Session", "check_budget", "compile", "compile_string"]

COUNT_CACHE_ENTRIES = 200_000
"""How many texts a session's token counter remembers per encoding (then it starts over)."""


class Session:
    """A template or SillyTavern preset, read and checked once, compiled for run after run.

    ``Session(path, options=..., **fields)`` reads the file at ``path`` (``.json``: a
    preset); :meth:`from_string` takes text. :meth:`compile` takes a run context and returns
    the same :class:`CompileResult` as :func:`compile`; its keyword arguments override the
    session's options for that compile only. The session keeps a token counter per encoding
    (bounded), a summary cache (``options.summary_cache`` when given) and the last chat it
    checked, so a turn that repeats the last turn's messages checks, counts and summarizes
    only what is new (a message is reused when it is equal to what was checked, whether the
    caller passes the same dicts, fresh copies or changed one in place). A compile that
    passes its own ``summarizer`` shares that cache only when the summarizer has a
    ``cache_key`` (else its summaries are its compile's alone). Safe to use from several
    threads at once.
    """

    def __init__(
        self,
        source: str | os.PathLike[str],
        *,
        options: CompileOptions | None = None,
        **overrides: Unpack[OptionFields],
    ) -> None:
        path = Path(source)
        if not is_file(path):
            raise ContextError(
                code="context.file_not_found",
                message=f"no template or preset file: {str(source)[:200]!r}",
                hint="compile() and Session() take a path; compile text with compile_string() or "
                "Session.from_string()",
            )
        opts = (options or CompileOptions()).with_fields(**overrides)
        with deep_inputs_coded(), collect_warnings() as found:
            src = open_source(path)
        self._setup(src, opts, found)

    @classmethod
    def from_string(
        cls,
        text: str,
        *,
        kind: SourceKind = "template",
        name: str | None = None,
        options: CompileOptions | None = None,
        **overrides: Unpack[OptionFields],
    ) -> Session:
        """A session over template text (``kind="template"``) or a preset's JSON text
        (``kind="preset"``); ``name`` is what diagnostics call it."""
        opts = (options or CompileOptions()).with_fields(**overrides)
        with deep_inputs_coded(), collect_warnings() as found:
            src = string_source(text, kind, name)
        session = cls.__new__(cls)
        session._setup(src, opts, found)
        return session

    def _setup(self, src: Source, opts: CompileOptions, found: list[Diagnostic]) -> None:
        self._source = src
        self._source_warnings = tuple(found)
        self._options = opts
        self._summaries = opts.summary_cache if opts.summary_cache is not None else SummaryCache()
        self._counters: dict[str, TokenCounter] = {}
        self._memo = TurnMemo()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The source's name (its path, or the name given to :meth:`from_string`)."""
        return self._source.name

    @property
    def options(self) -> CompileOptions:
        """The session's options (a compile's keyword arguments override them)."""
        return self._options

    @property
    def summary_cache(self) -> SummaryCache:
        """The summaries this session made or was given, reused turn after turn."""
        return self._summaries

    def counter(self, encoding: str) -> TokenCounter:
        """The session's token counter of ``encoding`` (made on first use)."""
        with self._lock:
            counter = self._counters.get(encoding)
            if counter is None:
                counter = TokenCounter(encoding, COUNT_CACHE_ENTRIES)
                self._counters[encoding] = counter
            return counter

    def cache_size(self) -> tuple[int, int]:
        """The texts and characters the session's token counters remember (a server weighs
        what it keeps by them)."""
        with self._lock:
            counters = list(self._counters.values())
        sizes = [c.cache_size() for c in counters]
        return sum(t for t, _ in sizes), sum(c for _, c in sizes)

    def compile(
        self,
        context: Context = None,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        **overrides: Unpack[OptionFields],
    ) -> CompileResult:
        """Compile the source with a run ``context`` into a provider request (see
        :func:`compiler.compile`); ``overrides`` replace option fields for this compile.
        ``base_dir``: where the relative paths of a ``dict`` context resolve (default: the
        current directory; a RUN.json's resolve beside it)."""
        where = Path(base_dir) if base_dir is not None else None
        return self._compile(context, overrides, self._memo, where)

    def _compile(
        self,
        context: Context,
        overrides: OptionFields,
        memo: TurnMemo | None,
        base_dir: Path | None = None,
    ) -> CompileResult:
        """A compile; ``memo``: what the last turn kept (None: a one-shot compile keeps
        nothing, so it pays nothing to keep it)."""
        opts = self._compile_options(overrides)
        with deep_inputs_coded(), collect_warnings() as found:
            found.extend(self._source_warnings)
            return compile_source(self._source, context, opts, found, self.counter, memo, base_dir)

    def check_budget(
        self, context: Context = None, **overrides: Unpack[OptionFields]
    ) -> Feasibility:
        """The budget set-up of a compile with ``context``, checked before fitting (see
        :func:`compiler.check_budget`)."""
        opts = self._compile_options(overrides)
        with deep_inputs_coded(), collect_warnings() as found:
            found.extend(self._source_warnings)
            return check_source_budget(self._source, context, opts, found, self.counter)

    def _compile_options(self, overrides: OptionFields) -> CompileOptions:
        opts = self._options.with_fields(**overrides) if overrides else self._options
        if opts.summary_cache is None:
            # a compile's own summarizer never reads what another one wrote (a summarizer is
            # known by its cache_key, never by identity): without a cache_key it gets a cache
            # of its own for this compile
            summarizer = opts.summarizer
            shared = summarizer is self._options.summarizer or isinstance(
                getattr(summarizer, "cache_key", None), str
            )
            opts = opts.with_fields(summary_cache=self._summaries if shared else SummaryCache())
        return opts


def compile(
    source: str | os.PathLike[str],
    *,
    context: Context = None,
    options: CompileOptions | None = None,
    **overrides: Unpack[OptionFields],
) -> CompileResult:
    """Compile the template or SillyTavern preset (``.json``) file at ``source`` into a
    provider request. ``source`` is always a path: to compile text, use
    :func:`compile_string`. ``options`` (:class:`CompileOptions`), with ``overrides`` of its
    fields as keywords, say how (provider, model, budget, profile, mode, ...). To compile
    the same source turn after turn, use a :class:`Session`.

    A preset compiles in ``mode`` ``agent`` or ``legacy``; None means ``agent`` when the
    preset or the card carries an enabled agent schema. Warnings (the profile's, the
    inputs', the template's, ``context.budget_over_window``, world info's) are in
    ``result.warnings``; with ``strict`` they raise :class:`compiler.StrictError`.
    """
    return Session(source, options=options, **overrides)._compile(context, {}, None)


def compile_string(
    text: str,
    *,
    kind: SourceKind = "template",
    name: str | None = None,
    context: Context = None,
    options: CompileOptions | None = None,
    **overrides: Unpack[OptionFields],
) -> CompileResult:
    """Compile template text (``kind="template"``) or a preset's JSON text
    (``kind="preset"``) into a provider request; ``name`` is what diagnostics call it. The
    rest is :func:`compile`'s."""
    session = Session.from_string(text, kind=kind, name=name, options=options, **overrides)
    return session._compile(context, {}, None)


def check_budget(
    source: str | os.PathLike[str],
    *,
    context: Context = None,
    options: CompileOptions | None = None,
    **overrides: Unpack[OptionFields],
) -> Feasibility:
    """The budget set-up of a compile of the file ``source``, checked before fitting: the
    required floors (exact) plus the reserved response against the model's window, and
    against the total budget (``options.budget``)."""
    return Session(source, options=options, **overrides).check_budget(context)
