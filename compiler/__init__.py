"""agent-prompt-compiler: compile agent prompt presets into provider requests.

>>> import compiler
>>> result = compiler.compile_string("<<agent.chat.history>>", context={"chat": []})
>>> result.request["messages"]
[]

``compile(path)`` compiles a template or preset file, ``compile_string(text, kind=...)``
text; both take a :class:`CompileOptions` (or its fields as keywords).
"""

from compiler.api import (
    CompileResult,
    Feasibility,
    check,
    check_budget,
    check_string,
    compile,
    compile_string,
)
from compiler.context.run import RunContext, load_context
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
from compiler.frame import Component, ComponentKind, ContextFrame
from compiler.journal import Event
from compiler.macros import BoundTemplate
from compiler.options import CompileOptions
from compiler.policy.creator import PlatformPolicy
from compiler.policy.tools import ToolGate
from compiler.profile import AgentProfile, ProfileLayers, ResolvedAgentProfile, resolve_profile
from compiler.replay import BenchReport, bench
from compiler.syntax import parse
from compiler.syntax.ast import Template

__all__ = [
    "APCError",
    "AgentProfile",
    "BenchReport",
    "BoundTemplate",
    "BudgetError",
    "BudgetLedger",
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
    "ProfileError",
    "ProfileLayers",
    "ResolvedAgentProfile",
    "RunContext",
    "Span",
    "StrictError",
    "Summarizer",
    "SummaryCache",
    "SummaryRequest",
    "Template",
    "TemplateError",
    "TokenizerError",
    "ToolGate",
    "bench",
    "check",
    "check_budget",
    "check_string",
    "compile",
    "compile_string",
    "load_context",
    "parse",
    "resolve_profile",
]
