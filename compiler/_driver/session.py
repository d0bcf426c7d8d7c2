"""Compile sessions: a source read once, compiled turn after turn with caches it owns.

A :class:`Session` is to :func:`compile` what httpx's ``Client`` is to ``httpx.get``: it
holds the parsed template or preset, a bounded token-count cache per encoding and the
summary cache, and reuses them for every :meth:`Session.compile`. Nothing is cached per
process but the loaded tokenizer encodings, so two sessions never share what one learnt.
:func:`compiler.compile` and :func:`compiler.compile_string` are the one-shot form: a
session used once.

Internal: the names are public as ``compiler.Session`` and ``compiler.Limits``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
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
    open_source,
    string_source,
)
from compiler._driver.feasibility import Feasibility
from compiler._driver.options import CompileOptions, OptionFields
from compiler._driver.sources import SourceKind
from compiler._records import record
from compiler.errors import ContextError, Diagnostic, deep_inputs_coded
from compiler.fit import SummaryCache
from compiler.inputs.read import MAX_INPUT_BYTES, collect_warnings, input_limit, is_file

__all__ = ["Limits", "Session"]


@record(frozen=True)
class Limits:
    """How much a session reads and remembers (an :class:`~compiler.Environment`'s, or the
    defaults): ``max_input_bytes``, the largest input file (run context, chat, card,
    lorebook, preset) read; ``count_cache_entries``, the texts a token counter remembers per
    encoding (then it starts over)."""

    max_input_bytes: int = MAX_INPUT_BYTES
    count_cache_entries: int = 200_000

    def __post_init__(self) -> None:
        for name in ("max_input_bytes", "count_cache_entries"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer of at least 1, not {value!r}")


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
        limits: Limits | None = None,
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
        limits = limits or Limits()
        with deep_inputs_coded(), input_limit(limits.max_input_bytes), collect_warnings() as found:
            src = open_source(path)
        self._setup(src, opts, found, limits)

    @classmethod
    def from_string(
        cls,
        text: str,
        *,
        kind: SourceKind = "template",
        name: str | None = None,
        options: CompileOptions | None = None,
        limits: Limits | None = None,
        **overrides: Unpack[OptionFields],
    ) -> Session:
        """A session over template text (``kind="template"``) or a preset's JSON text
        (``kind="preset"``); ``name`` is what diagnostics call it."""
        opts = (options or CompileOptions()).with_fields(**overrides)
        limits = limits or Limits()
        with deep_inputs_coded(), input_limit(limits.max_input_bytes), collect_warnings() as found:
            src = string_source(text, kind, name)
        session = cls.__new__(cls)
        session._setup(src, opts, found, limits)
        return session

    def _setup(
        self, src: Source, opts: CompileOptions, found: list[Diagnostic], limits: Limits
    ) -> None:
        self._limits = limits
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
    def limits(self) -> Limits:
        """How much the session reads and remembers."""
        return self._limits

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
                counter = TokenCounter(encoding, self._limits.count_cache_entries)
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
        with self._reading() as found:
            return compile_source(self._source, context, opts, found, self.counter, memo, base_dir)

    def check_budget(
        self, context: Context = None, **overrides: Unpack[OptionFields]
    ) -> Feasibility:
        """The budget set-up of a compile with ``context``, checked before fitting (see
        :func:`compiler.check_budget`)."""
        opts = self._compile_options(overrides)
        with self._reading() as found:
            return check_source_budget(self._source, context, opts, found, self.counter)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[list[Diagnostic]]:
        """Within: inputs read under the session's limits, too-deep input coded, and the
        warnings of reading collected (the source's first)."""
        with (
            deep_inputs_coded(),
            input_limit(self._limits.max_input_bytes),
            collect_warnings() as found,
        ):
            found.extend(self._source_warnings)
            yield found

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
