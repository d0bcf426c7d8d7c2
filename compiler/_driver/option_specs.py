"""How each user-facing field of :class:`compiler.CompileOptions` is offered: its help, its
bounds, its command-line form, and whether ``apc serve`` takes it.

Internal: the command line's options (``apc compile``, ``explain``, ``bench``, ``check``),
``apc serve``'s request model and ``CompileOptions``' own checks are made from this one
table (a test keeps it equal to ``CompileOptions``' fields and their types). It imports
nothing heavy: ``apc check`` builds its options from it without loading the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from compiler._base.kinds import MAX_SEED, MAX_TOKENS, MIN_SEED
from compiler._records import record

Kind = Literal["int", "float", "str", "bool", "strings", "choice", "step", "path"]
"""What a value is on the command line: a number, a name, a flag, a repeatable text, one of
``choices``, the cache-stable step (a flag with an optional number), a file path."""

CACHE_STABLE_STEP = 32
"""The default cache-stable step: history cut points move 32 messages at a time."""


NAME_CHARS = 200
"""The longest provider, model or encoding name ``apc serve`` takes."""
MAX_STOPS = 16
"""The most stop sequences ``apc serve`` takes (each at most 1,000 characters)."""


@record(frozen=True)
class Option:
    """One option: ``name`` (``CompileOptions``' field; the flag is ``--name-with-dashes``),
    ``kind``, ``help``, the least (and greatest) value, the command-line group and metavar,
    other flags, whether ``apc serve``'s request takes it, whether it is part of the budget
    set-up (any of those given, ``apc check`` checks the budget), the value of a flag given
    without its number (``const``: the cache-stable step), the longest text and most items
    ``apc serve`` takes, and what its OpenAPI document says of it when ``help`` speaks of
    flags or exit codes (``api_help``)."""

    name: str
    kind: Kind
    help: str = ""
    low: int | None = None
    high: int | None = None
    group: str | None = None
    metavar: str | None = None
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    serve: bool = True
    budget_setup: bool = False
    const: int | None = None
    max_chars: int | None = None
    max_items: int | None = None
    api_help: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def problem(self, value: object) -> str | None:
        """Why a number ``value`` is outside the bounds (None: it is not, or it is no
        number)."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        if self.low is not None and value < self.low:
            return f"must be at least {self.low}"
        if self.high is not None and value > self.high:
            return f"must be at most {self.high}"
        return None


GENERATION = "generation options (each sent under the provider's own name)"
PLAN = "plan (compile for one node of a plan)"
STOP_CHARS = 1000
"""The longest stop sequence ``apc serve`` takes."""

OPTIONS: tuple[Option, ...] = (
    Option("provider", "str", "the provider", max_chars=NAME_CHARS),
    Option(
        "model",
        "str",
        "the model (default: the provider's: gpt-4o, claude-sonnet-4-5, ...)",
        budget_setup=True,
        max_chars=NAME_CHARS,
    ),
    Option(
        "encoding",
        "str",
        "tokenizer encoding (default: the model's)",
        budget_setup=True,
        max_chars=NAME_CHARS,
    ),
    Option(
        "budget",
        "int",
        "total token budget of the request",
        low=0,
        high=MAX_TOKENS,
        metavar="N",
        budget_setup=True,
    ),
    Option(
        "max_output_tokens",
        "int",
        "the response's token limit (max_completion_tokens, max_output_tokens, max_tokens or "
        "generationConfig.maxOutputTokens, by provider)",
        low=1,
        high=MAX_TOKENS,
        metavar="N",
        aliases=("--max-completion-tokens",),
        budget_setup=True,
    ),
    Option("temperature", "float", group=GENERATION),
    Option("top_p", "float", group=GENERATION),
    Option(
        "top_k",
        "int",
        "Anthropic, Gemini (not an OpenAI option)",
        low=0,
        high=2**31 - 1,
        group=GENERATION,
    ),
    Option("frequency_penalty", "float", group=GENERATION),
    Option("presence_penalty", "float", group=GENERATION),
    Option("seed", "int", low=MIN_SEED, high=MAX_SEED, group=GENERATION),
    Option(
        "stop",
        "strings",
        "a stop sequence (repeatable)",
        metavar="TEXT",
        group=GENERATION,
        max_chars=STOP_CHARS,
        max_items=MAX_STOPS,
        api_help=f"stop sequences (at most {MAX_STOPS}, each at most {STOP_CHARS:,} characters)",
    ),
    Option(
        "reserve",
        "int",
        "tokens reserved for the response: the total budget is the model's window minus N "
        "(default: --max-output-tokens; --budget overrides)",
        low=0,
        high=MAX_TOKENS,
        metavar="N",
        budget_setup=True,
        api_help="tokens reserved for the response: the total budget is the model's window "
        "minus this (default: maxOutputTokens; budget overrides)",
    ),
    Option(
        "cache_stable",
        "step",
        "move history cut points in steps of STEP messages "
        f"(default {CACHE_STABLE_STEP}) so successive turns keep a byte-identical prefix",
        low=1,
        high=2**31,
        metavar="STEP",
        const=CACHE_STABLE_STEP,
        api_help=f"true (a step of {CACHE_STABLE_STEP} messages) or the step: history cut points "
        "move in steps of that many messages so successive turns keep a byte-identical prefix",
    ),
    Option(
        "mode",
        "choice",
        "preset mode (default: agent when the preset or card has an enabled agent schema or "
        "the preset's entries hold <<agent.*>> macros)",
        choices=("agent", "legacy"),
    ),
    Option(
        "plan", "path", "a plan policy {mode, nodes}", group=PLAN, metavar="PLAN.json", serve=False
    ),
    Option(
        "plan_node",
        "str",
        "the node to compile for: its allowedTools, visibleFiles and contextBudget apply, and "
        "<<agent.plan>> marks it",
        group=PLAN,
        metavar="ID",
        serve=False,
        max_chars=NAME_CHARS,
    ),
    Option(
        "strict",
        "bool",
        "treat warnings (e.g. context.budget_over_window) as errors: exit 1, no output",
        api_help="treat warnings (e.g. context.budget_over_window) as errors: a compile "
        "answers 422 with them, a check is not ok",
    ),
)

BY_NAME = {o.name: o for o in OPTIONS}


def budget_requested(values: Mapping[str, Any], context: object) -> bool:
    """Whether a check also checks the budget set-up: a run context, or any option of the
    budget set-up (``values``: option values by name)."""
    return context is not None or any(
        values.get(o.name) is not None for o in OPTIONS if o.budget_setup
    )
