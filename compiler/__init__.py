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

from typing import TYPE_CHECKING

from compiler._base.lazy import lazy_exports

if TYPE_CHECKING:  # the names import lazily (PEP 562): `apc check` never loads the pipeline
    from compiler._assemble.macros import (
        BoundTemplate,
        MacroCall,
        MacroSpec,
        Param,
        macro_catalogue,
    )
    from compiler._base.frame import Component, ComponentKind, ContextFrame, Message, ToolSpec
    from compiler._base.journal import Event, Journal
    from compiler._base.tokens import ScriptScale, TokenCounter
    from compiler._driver.api import CompileResult
    from compiler._driver.check_report import CheckReport, check_sources
    from compiler._driver.checking import PresetCheck, check, check_string
    from compiler._driver.environment import Environment, check_budget, compile, compile_string
    from compiler._driver.feasibility import Feasibility
    from compiler._driver.messages import request_messages
    from compiler._driver.option_specs import OPTIONS, Option, budget_requested
    from compiler._driver.options import CompileOptions, OptionFields
    from compiler._driver.session import Limits, Session
    from compiler._driver.sources import SourceText, read_source
    from compiler.codes import CodeExplanation, explain_code
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
    from compiler.inputs.chat_log import ChatLog
    from compiler.inputs.run import RunContext, load_context
    from compiler.policy.tools import ToolGate
    from compiler.profile import AgentProfile, ProfileLayers, ResolvedAgentProfile, resolve_profile
    from compiler.profile.platform import PlatformPolicy
    from compiler.replay import BenchReport, RunReport, bench
    from compiler.st.catalogue import sillytavern_macros
    from compiler.st.world.placement import WorldPlacement
    from compiler.st.world.report import WorldEntryDecision, WorldInfoReport
    from compiler.st.world.trace import ScanTrace
    from compiler.syntax import parse
    from compiler.syntax.ast import Template

_HOMES = {
    "compiler.codes": "CodeExplanation explain_code",
    "compiler._driver.api": "CompileResult",
    "compiler._driver.feasibility": "Feasibility",
    "compiler._driver.messages": "request_messages",
    "compiler._driver.checking": "PresetCheck check check_string",
    "compiler._driver.check_report": "CheckReport check_sources",
    "compiler._driver.sources": "SourceText read_source",
    "compiler.inputs.chat_log": "ChatLog",
    "compiler.inputs.run": "RunContext load_context",
    "compiler.st.world.placement": "WorldPlacement",
    "compiler.st.world.report": "WorldEntryDecision WorldInfoReport",
    "compiler.st.world.trace": "ScanTrace",
    "compiler.errors": "APCError BudgetError ContextError Diagnostic InternalError LoweringError "
    "PolicyError ProfileError Span StrictError TemplateError TokenizerError",
    "compiler.fit": "BudgetLedger LedgerEntry Summarizer SummaryCache SummaryRequest",
    "compiler._base.frame": "Component ComponentKind ContextFrame Message ToolSpec",
    "compiler._base.journal": "Event Journal",
    "compiler._base.tokens": "ScriptScale TokenCounter",
    "compiler._assemble.macros": "BoundTemplate MacroCall MacroSpec Param macro_catalogue",
    "compiler._driver.options": "CompileOptions OptionFields",
    "compiler._driver.option_specs": "OPTIONS Option budget_requested",
    "compiler.profile.platform": "PlatformPolicy",
    "compiler.policy.tools": "ToolGate",
    "compiler.profile": "AgentProfile ProfileLayers ResolvedAgentProfile resolve_profile",
    "compiler.replay": "BenchReport RunReport bench",
    "compiler._driver.environment": "Environment check_budget compile compile_string",
    "compiler._driver.session": "Limits Session",
    "compiler.st.catalogue": "sillytavern_macros",
    "compiler.syntax": "parse",
    "compiler.syntax.ast": "Template",
}
__all__ = [
    "OPTIONS",
    "APCError",
    "AgentProfile",
    "BenchReport",
    "BoundTemplate",
    "BudgetError",
    "BudgetLedger",
    "ChatLog",
    "CheckReport",
    "CodeExplanation",
    "CompileOptions",
    "CompileResult",
    "Component",
    "ComponentKind",
    "ContextError",
    "ContextFrame",
    "Diagnostic",
    "Environment",
    "Event",
    "Feasibility",
    "InternalError",
    "Journal",
    "LedgerEntry",
    "Limits",
    "LoweringError",
    "MacroCall",
    "MacroSpec",
    "Message",
    "Option",
    "OptionFields",
    "Param",
    "PlatformPolicy",
    "PolicyError",
    "PresetCheck",
    "ProfileError",
    "ProfileLayers",
    "ResolvedAgentProfile",
    "RunContext",
    "RunReport",
    "ScanTrace",
    "ScriptScale",
    "Session",
    "SourceText",
    "Span",
    "StrictError",
    "Summarizer",
    "SummaryCache",
    "SummaryRequest",
    "Template",
    "TemplateError",
    "TokenCounter",
    "TokenizerError",
    "ToolGate",
    "ToolSpec",
    "WorldEntryDecision",
    "WorldInfoReport",
    "WorldPlacement",
    "bench",
    "budget_requested",
    "check",
    "check_budget",
    "check_sources",
    "check_string",
    "compile",
    "compile_string",
    "explain_code",
    "load_context",
    "macro_catalogue",
    "parse",
    "read_source",
    "request_messages",
    "resolve_profile",
    "sillytavern_macros",
]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
