"""How to compile: the one options object that ``compile()``, ``compile_string()``,
``check_budget()`` and the CLI share.

:class:`CompileOptions` is frozen; keyword arguments to the entry points override its fields
(:class:`OptionFields` spells the same fields for type checkers, and a test keeps the two
equal).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict

from compiler._assemble.assemble import PresetMode
from compiler._base.tokens import TokenCounter
from compiler._driver.option_specs import BY_NAME, CACHE_STABLE_STEP
from compiler._records import record
from compiler.fit import Summarizer, SummaryCache
from compiler.profile import ProfileLayers, ResolvedAgentProfile
from compiler.profile.models import PlanPolicy
from compiler.providers import DEFAULT_PROVIDER
from compiler.providers.dialect import LoweringOptions

__all__ = ["CACHE_STABLE_STEP", "CompileOptions", "OptionFields", "PresetMode"]


@record(frozen=True)
class CompileOptions:
    """Everything about a compile but its source and run context.

    - ``provider``/``model``/``encoding``: the target (``model`` None: the provider's
      default model: gpt-4o, claude-sonnet-4-5, gemini-2.5-flash) and its tokenizer
      (default: the one the provider's dialect counts the model with);
    - ``budget``: the total token budget (default: the smaller of the profile's
      ``totalContextBudget`` and the model's window minus ``reserve``, itself
      ``max_output_tokens`` unless given);
    - ``max_output_tokens`` (``max_completion_tokens`` is the same, under OpenAI's Chat
      name), ``temperature``, ``top_p``, ``top_k``, ``frequency_penalty``, ``presence_penalty``,
      ``seed``, ``stop``: generation options, each lowered under the provider's own name;
    - ``profile``: a resolved profile, :class:`ProfileLayers`, a profile id, or None
      (default-writer with the layers the inputs carry);
    - ``mode``: for a preset, ``agent`` or ``legacy`` (None: from its agent schema);
    - ``cache_stable``: True or a step in messages: history cut points move in steps so that
      successive turns keep a byte-identical prefix;
    - ``summarizer``/``summaries``/``summary_cache``: a caller's summarizer, precomputed
      summaries by component id or kind, and the cache the caller owns for the summarizer;
    - ``strict``: warnings are errors (:class:`compiler.errors.StrictError`);
    - ``plan``/``plan_node``: compile for one node of a plan (a PLAN.json path or a
      ``PlanPolicy``): the node's ``allowedTools`` narrow the tools, its ``visibleFiles``
      the workspace, its ``contextBudget`` the budget, and ``<<agent.plan>>`` shows the
      plan with the node marked;
    - ``token_counter``: a :class:`compiler._base.tokens.TokenCounter` the caller owns, or a
      callable ``text -> tokens`` (e.g. the provider's count-tokens endpoint), used instead
      of tiktoken's count (cached per content).
    """

    provider: str = DEFAULT_PROVIDER
    model: str | None = None
    budget: int | None = None
    encoding: str | None = None
    max_output_tokens: int | None = None
    max_completion_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    reserve: int | None = None
    profile: ResolvedAgentProfile | ProfileLayers | str | None = None
    mode: PresetMode | None = None
    cache_stable: bool | int = False
    summarizer: Summarizer | None = None
    summaries: Mapping[str, str] | None = None
    summary_cache: SummaryCache | None = None
    strict: bool = False
    token_counter: TokenCounter | Callable[[str], int] | None = None
    plan: PlanPolicy | str | Path | None = None
    plan_node: str | None = None

    def __post_init__(self) -> None:
        """Refuse values no compile can use: the option table's bounds (the CLI and ``apc
        serve`` report the same as usage errors). ``top_k`` only from below: above, the
        provider's range refuses the caller's value and clamps a preset's (coded)."""
        for name, spec in (
            ("budget", "budget"),
            ("reserve", "reserve"),
            ("max_output_tokens", "max_output_tokens"),
            ("max_completion_tokens", "max_output_tokens"),  # its Chat-name alias
            ("top_k", "top_k"),
            ("seed", "seed"),
        ):
            option, value = BY_NAME[spec], getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name} must be an integer, not {value!r}")
            if name == "top_k" and value >= 0:
                continue  # above a provider's range: its dialect refuses or clamps (coded)
            problem = option.problem(value)
            if problem is not None:
                raise ValueError(f"{name} {problem}, not {value!r}")
        modes = BY_NAME["mode"].choices
        if self.mode is not None and self.mode not in modes:
            raise ValueError(f"mode must be {' or '.join(modes)} (or None), not {self.mode!r}")
        step, most = self.cache_stable, BY_NAME["cache_stable"].high or 0
        if not isinstance(step, bool) and (not isinstance(step, int) or not 0 <= step <= most):
            raise ValueError(
                f"cache_stable must be True, False or a step from 0 to {most}, not {step!r}"
            )

    @property
    def output_tokens(self) -> int | None:
        """The response's token limit (``max_output_tokens``, else its Chat-name alias)."""
        return self.max_output_tokens or self.max_completion_tokens

    def lowering(self) -> LoweringOptions:
        """The generation options for the dialect (strict: unsupported features are errors)."""
        return LoweringOptions(
            max_output_tokens=self.output_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            frequency_penalty=self.frequency_penalty,
            presence_penalty=self.presence_penalty,
            seed=self.seed,
            stop=tuple(self.stop),
            strict=self.strict,
            cache_stable=self.step > 0,
        )

    @property
    def step(self) -> int:
        """The cache-stable step in messages (0: off)."""
        if self.cache_stable is True:
            return CACHE_STABLE_STEP
        return max(0, int(self.cache_stable))

    def with_fields(self, **fields: object) -> CompileOptions:
        """A copy with ``fields`` replaced; an unknown name is a TypeError that says which."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(fields) - known)
        if unknown:
            raise TypeError(f"unknown compile option(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **fields)  # type: ignore[arg-type]


class OptionFields(TypedDict, total=False):
    """:class:`CompileOptions`' fields as keyword arguments (for ``**overrides``)."""

    provider: str
    model: str | None
    budget: int | None
    encoding: str | None
    max_output_tokens: int | None
    max_completion_tokens: int | None
    temperature: float | None
    top_p: float | None
    top_k: int | None
    frequency_penalty: float | None
    presence_penalty: float | None
    seed: int | None
    stop: tuple[str, ...]
    reserve: int | None
    profile: ResolvedAgentProfile | ProfileLayers | str | None
    mode: PresetMode | None
    cache_stable: bool | int
    summarizer: Summarizer | None
    summaries: Mapping[str, str] | None
    summary_cache: SummaryCache | None
    strict: bool
    token_counter: TokenCounter | Callable[[str], int] | None
    plan: PlanPolicy | str | Path | None
    plan_node: str | None
