"""agent-prompt-compiler: compile agent prompt presets into provider requests.

>>> import compiler
>>> result = compiler.compile("<<agent.chat.history>>", context={"chat": []})
>>> result.request["messages"]
[]
"""

from compiler.api import CompileResult, check, compile
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
from compiler.fit import BudgetLedger, LedgerEntry
from compiler.frame import Component, ComponentKind, ContextFrame
from compiler.journal import Event
from compiler.policy.creator import PlatformPolicy
from compiler.policy.tools import ToolGate
from compiler.profile import AgentProfile, ResolvedAgentProfile, resolve_profile
from compiler.syntax import parse

__all__ = [
    "APCError",
    "AgentProfile",
    "BudgetError",
    "BudgetLedger",
    "CompileResult",
    "Component",
    "ComponentKind",
    "ContextError",
    "ContextFrame",
    "Diagnostic",
    "Event",
    "InternalError",
    "LedgerEntry",
    "LoweringError",
    "PlatformPolicy",
    "PolicyError",
    "ProfileError",
    "ResolvedAgentProfile",
    "RunContext",
    "Span",
    "StrictError",
    "TemplateError",
    "TokenizerError",
    "ToolGate",
    "check",
    "compile",
    "load_context",
    "parse",
    "resolve_profile",
]
