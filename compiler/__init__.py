"""agent-prompt-compiler: compile agent prompt presets into provider requests.

>>> import compiler
>>> result = compiler.compile_string("<<agent.chat.history>>", context={"chat": []})
>>> result.request["messages"]
[]

``compile(path)`` compiles a template or preset file, ``compile_string(text, kind=...)``
text; both take a :class:`CompileOptions` (or its fields as keywords). A runtime that
compiles the same source turn after turn keeps a :class:`Session` (``Session(path)`` or
``Session.from_string(text)``; ``session.compile(context)``): it reads the source once and
keeps its token-count and summary caches between turns; a :class:`ChatLog` as the run's
``chat`` tells it which messages are new, so a turn checks only those.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names import lazily (PEP 562): `apc check` never loads the pipeline
    from compiler._assemble.macros import BoundTemplate
    from compiler._base.frame import Component, ComponentKind, ContextFrame
    from compiler._base.journal import Event
    from compiler._driver.api import CompileResult
    from compiler._driver.checking import PresetCheck, check, check_string
    from compiler._driver.feasibility import Feasibility
    from compiler._driver.messages import request_messages
    from compiler._driver.options import CompileOptions
    from compiler._driver.session import Session, check_budget, compile, compile_string
    from compiler.context.chat_log import ChatLog
    from compiler.context.run import RunContext, load_context
    from compiler.context.world_placement import WorldPlacement
    from compiler.context.world_report import WorldEntryDecision, WorldInfoReport
    from compiler.errors import (
        APCError,
        BudgetError,
        ContextError,
        Diagnostic,
        InternalError,
        LoweringError,
        PolicyError,
        ProfileError,
        Span,
        StrictError,
        TemplateError,
        TokenizerError,
    )
    from compiler.fit import BudgetLedger, LedgerEntry, Summarizer, SummaryCache, SummaryRequest
    from compiler.policy.creator import PlatformPolicy
    from compiler.policy.tools import ToolGate
    from compiler.profile import AgentProfile, ProfileLayers, ResolvedAgentProfile, resolve_profile
    from compiler.replay import BenchReport, bench
    from compiler.syntax import parse
    from compiler.syntax.ast import Template

_HOMES = {
    "compiler._driver.api": "CompileResult",
    "compiler._driver.feasibility": "Feasibility",
    "compiler._driver.messages": "request_messages",
    "compiler._driver.checking": "PresetCheck check check_string",
    "compiler.context.chat_log": "ChatLog",
    "compiler.context.run": "RunContext load_context",
    "compiler.context.world_placement": "WorldPlacement",
    "compiler.context.world_report": "WorldEntryDecision WorldInfoReport",
    "compiler.errors": "APCError BudgetError ContextError Diagnostic InternalError LoweringError "
    "PolicyError ProfileError Span StrictError TemplateError TokenizerError",
    "compiler.fit": "BudgetLedger LedgerEntry Summarizer SummaryCache SummaryRequest",
    "compiler._base.frame": "Component ComponentKind ContextFrame",
    "compiler._base.journal": "Event",
    "compiler._assemble.macros": "BoundTemplate",
    "compiler._driver.options": "CompileOptions",
    "compiler.policy.creator": "PlatformPolicy",
    "compiler.policy.tools": "ToolGate",
    "compiler.profile": "AgentProfile ProfileLayers ResolvedAgentProfile resolve_profile",
    "compiler.replay": "BenchReport bench",
    "compiler._driver.session": "Session check_budget compile compile_string",
    "compiler.syntax": "parse",
    "compiler.syntax.ast": "Template",
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names.split()}


def __getattr__(name: str) -> Any:
    """Import a public name on first use (and keep it, so the next lookup is plain)."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'compiler' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "APCError",
    "AgentProfile",
    "BenchReport",
    "BoundTemplate",
    "BudgetError",
    "BudgetLedger",
    "ChatLog",
    "CompileOptions",
    "CompileResult",
    "Component",
    "ComponentKind",
    "ContextError",
    "ContextFrame",
    "Diagnostic",
    "Event",
    "Feasibility",
    "InternalError",
    "LedgerEntry",
    "LoweringError",
    "PlatformPolicy",
    "PolicyError",
    "PresetCheck",
    "ProfileError",
    "ProfileLayers",
    "ResolvedAgentProfile",
    "RunContext",
    "Session",
    "Span",
    "StrictError",
    "Summarizer",
    "SummaryCache",
    "SummaryRequest",
    "Template",
    "TemplateError",
    "TokenizerError",
    "ToolGate",
    "WorldEntryDecision",
    "WorldInfoReport",
    "WorldPlacement",
    "bench",
    "check",
    "check_budget",
    "check_string",
    "compile",
    "compile_string",
    "load_context",
    "parse",
    "request_messages",
    "resolve_profile",
]
