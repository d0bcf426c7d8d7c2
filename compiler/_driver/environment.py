"""The one driver: an :class:`Environment` holds what compiles share (option defaults and
:class:`~compiler.Limits`) and runs the one path of each job (compile, check, budget check)
through a :class:`~compiler.Session`; the module's functions are the default environment's.

As jinja2's ``Environment`` holds a template loader's configuration and httpx's ``Client``
a transport's, an Environment holds a runtime's: make one with its defaults, then compile
with it (``env.compile(path, context=...)``) or open sessions (``env.session(path)``).
``apc compile`` and ``apc explain`` compile through the default environment; ``apc check``,
``apc serve`` and ``compiler.bench`` (whose limits are the defaults) call what its jobs do:
:func:`~compiler.check_sources` and :class:`~compiler.Session`.

Internal: the names are public as ``compiler.Environment``, ``compiler.compile`` and friends.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Unpack

from compiler._driver.api import CompileResult, Context
from compiler._driver.check_report import CheckReport, check_sources
from compiler._driver.feasibility import Feasibility
from compiler._driver.option_specs import OPTIONS, budget_requested
from compiler._driver.options import CompileOptions, OptionFields
from compiler._driver.session import Limits, Session
from compiler._driver.sources import SourceKind, SourceText
from compiler.inputs.read import input_limit

__all__ = ["Environment", "check_budget", "compile", "compile_string"]


class Environment:
    """Option defaults and limits shared by every compile made through it.

    ``Environment(options=..., limits=..., **fields)``: ``options`` (a
    :class:`CompileOptions`, with ``fields`` of it as keywords) are the defaults each job's
    keyword arguments override; ``limits`` (:class:`Limits`) bound what its sessions read
    and remember."""

    def __init__(
        self,
        *,
        options: CompileOptions | None = None,
        limits: Limits | None = None,
        **overrides: Unpack[OptionFields],
    ) -> None:
        self._options = (options or CompileOptions()).with_fields(**overrides)
        self._limits = limits or Limits()

    @property
    def options(self) -> CompileOptions:
        """The default options of every job."""
        return self._options

    @property
    def limits(self) -> Limits:
        """What a session reads and remembers at most."""
        return self._limits

    def session(self, source: str | os.PathLike[str], **overrides: Unpack[OptionFields]) -> Session:
        """A :class:`Session` over the template or preset file ``source`` (``.json``: a
        preset), with these defaults (``overrides`` replace some)."""
        return Session(source, options=self._options.with_fields(**overrides), limits=self._limits)

    def session_from_string(
        self,
        text: str,
        *,
        kind: SourceKind = "template",
        name: str | None = None,
        **overrides: Unpack[OptionFields],
    ) -> Session:
        """A :class:`Session` over template text or a preset's JSON text (``kind``)."""
        options = self._options.with_fields(**overrides)
        return Session.from_string(text, kind=kind, name=name, options=options, limits=self._limits)

    def compile(
        self,
        source: str | os.PathLike[str],
        *,
        context: Context = None,
        **overrides: Unpack[OptionFields],
    ) -> CompileResult:
        """Compile the template or preset file ``source`` once (see :func:`compiler.compile`)."""
        return self.session(source, **overrides)._compile(context, {}, None)

    def compile_string(
        self,
        text: str,
        *,
        kind: SourceKind = "template",
        name: str | None = None,
        context: Context = None,
        **overrides: Unpack[OptionFields],
    ) -> CompileResult:
        """Compile template or preset text once (see :func:`compiler.compile_string`)."""
        session = self.session_from_string(text, kind=kind, name=name, **overrides)
        return session._compile(context, {}, None)

    def check_budget(
        self,
        source: str | os.PathLike[str],
        *,
        context: Context = None,
        **overrides: Unpack[OptionFields],
    ) -> Feasibility:
        """The budget set-up of a compile of ``source`` (see :func:`compiler.check_budget`)."""
        return self.session(source, **overrides).check_budget(context)

    def check_sources(
        self,
        sources: Sequence[SourceText | str | os.PathLike[str]],
        *,
        context: Context = None,
        with_budget: bool | None = None,
        **overrides: Unpack[OptionFields],
    ) -> CheckReport:
        """``apc check`` of ``sources`` (see :func:`compiler.check_sources`) with these
        options (``mode``, ``strict``, and the budget set-up's). ``with_budget``: whether to
        check the budget set-up too (None: when a context or a budget option is given, as a
        keyword or as the environment's default)."""
        options = self._options.with_fields(**overrides)
        if with_budget is None:  # the environment's defaults ask as much as a job's keywords
            asked = {o.name: getattr(options, o.name) for o in OPTIONS if o.budget_setup}
            with_budget = budget_requested(asked, context)

        def session_of(source: SourceText, given: CompileOptions) -> Session:
            return Session.from_string(
                source.text, kind=source.kind, name=source.name, options=given, limits=self._limits
            )

        with input_limit(self._limits.max_input_bytes):
            return check_sources(
                sources,
                mode=options.mode,
                strict=options.strict,
                budget=options.with_fields(strict=False) if with_budget else None,
                context=context,
                session_of=session_of,
            )


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
    return Environment(options=options).compile(source, context=context, **overrides)


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
    env = Environment(options=options)
    return env.compile_string(text, kind=kind, name=name, context=context, **overrides)


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
    return Environment(options=options).check_budget(source, context=context, **overrides)
