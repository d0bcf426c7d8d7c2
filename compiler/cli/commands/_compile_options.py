"""The options ``apc compile`` and ``apc explain`` share, their checks, and the compile call."""

from __future__ import annotations

import argparse
from pathlib import Path

from compiler._driver.api import CompileResult
from compiler._driver.options import CACHE_STABLE_STEP, CompileOptions
from compiler._driver.session import compile as compile_source
from compiler.cli.commands._common import add_output_tokens, add_strict, number_problem
from compiler.context.inputs import is_file, lexists
from compiler.errors import LoweringError
from compiler.profile import add_profile_arguments, layers_from_args
from compiler.profile.registry import write_resolved_profile
from compiler.providers import DEFAULT_PROVIDER, get_dialect
from compiler.providers.dialect import SAMPLER_FLAGS
from compiler.providers.registry import provider_help


class _ProviderOption(argparse.Action):
    """``--provider``, stored as given. Its help lists the installed providers, read from
    the installed packages' metadata only when the help is shown (not on every run)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)

    @property
    def help(self) -> str:
        return f"{provider_help()} (default: {DEFAULT_PROVIDER})"

    @help.setter
    def help(self, value: str | None) -> None:
        """argparse sets it (to None); the property above is the help."""


def add_compile_arguments(p: argparse.ArgumentParser) -> None:
    """SOURCE, --context, --mode, model and budget options, and the profile layers."""
    p.add_argument("source", metavar="SOURCE", help="a template, or a SillyTavern preset .json")
    p.add_argument("--context", metavar="RUN.json", help="the run context")
    p.add_argument(
        "--mode",
        choices=("agent", "legacy"),
        help="preset mode (default: agent when the preset or card has an enabled agent schema "
        "or the preset's entries hold <<agent.*>> macros)",
    )
    p.add_argument("--provider", default=DEFAULT_PROVIDER, action=_ProviderOption)
    p.add_argument(
        "--model", help="the model (default: the provider's: gpt-4o, claude-sonnet-4-5, ...)"
    )
    p.add_argument("--encoding", help="tokenizer encoding (default: the model's)")
    p.add_argument("--budget", type=int, metavar="N", help="total token budget of the request")
    add_output_tokens(p)
    g = p.add_argument_group("generation options (each sent under the provider's own name)")
    g.add_argument("--temperature", type=float)
    g.add_argument("--top-p", type=float)
    g.add_argument("--top-k", type=int, help="Anthropic, Gemini (not an OpenAI option)")
    g.add_argument("--frequency-penalty", type=float)
    g.add_argument("--presence-penalty", type=float)
    g.add_argument("--seed", type=int)
    g.add_argument("--stop", action="append", metavar="TEXT", help="a stop sequence (repeatable)")
    p.add_argument(
        "--reserve",
        type=int,
        metavar="N",
        help="tokens reserved for the response: the total budget is the model's window minus N "
        "(default: --max-output-tokens; --budget overrides)",
    )
    p.add_argument(
        "--cache-stable",
        type=int,
        nargs="?",
        const=CACHE_STABLE_STEP,
        metavar="STEP",
        help="move history cut points in steps of STEP messages "
        f"(default {CACHE_STABLE_STEP}) so successive "
        "turns keep a byte-identical prefix",
    )
    g = p.add_argument_group("plan (compile for one node of a plan)")
    g.add_argument("--plan", metavar="PLAN.json", help="a plan policy {mode, nodes}")
    g.add_argument(
        "--plan-node",
        metavar="ID",
        help="the node to compile for: its allowedTools, visibleFiles and contextBudget apply, "
        "and <<agent.plan>> marks it",
    )
    add_strict(p)
    add_profile_arguments(p)


def usage_problem(args: argparse.Namespace) -> str | None:
    """Why the options cannot work (a usage error, exit 2), or None."""
    if getattr(args, "plan_node", None) and not getattr(args, "plan", None):
        return "--plan-node needs --plan PLAN.json"
    for name in (args.source, args.context, getattr(args, "plan", None)):
        if name and not is_file(name):
            return f"not a file: {name[:200]}" if lexists(name) else f"no such file: {name[:200]}"
    return number_problem(args) or sampler_problem(args)


def sampler_problem(args: argparse.Namespace) -> str | None:
    """A generation option outside the provider's documented range (a usage error, exit 2;
    :meth:`compiler.providers.dialect.Dialect.sampler_problem`, the rule the lowering enforces), or
    None. An unknown provider is left to the compile to report."""
    try:
        dialect = get_dialect(args.provider)
    except LoweringError:
        return None
    for name, flag in SAMPLER_FLAGS.items():
        value = getattr(args, name, None)
        problem = None if value is None else dialect.sampler_problem(name, value)
        if problem is not None:
            return f"{flag} {problem.split(' ', 1)[1]}"
    return None


def options_from_args(args: argparse.Namespace) -> CompileOptions:
    """The :class:`CompileOptions` the command line says (the one options object)."""
    return CompileOptions(
        provider=args.provider,
        model=getattr(args, "model", None),
        budget=args.budget,
        encoding=args.encoding,
        max_output_tokens=args.max_output_tokens,
        temperature=getattr(args, "temperature", None),
        top_p=getattr(args, "top_p", None),
        top_k=getattr(args, "top_k", None),
        frequency_penalty=getattr(args, "frequency_penalty", None),
        presence_penalty=getattr(args, "presence_penalty", None),
        seed=getattr(args, "seed", None),
        stop=tuple(getattr(args, "stop", None) or ()),
        plan=getattr(args, "plan", None),
        plan_node=getattr(args, "plan_node", None),
        reserve=args.reserve,
        profile=layers_from_args(args),
        mode=getattr(args, "mode", None),
        cache_stable=getattr(args, "cache_stable", None) or 0,
        strict=getattr(args, "strict", False),
    )


def compile_from_args(args: argparse.Namespace) -> CompileResult:
    """Compile as the options say. The profile layers are the options' (--profile, --user,
    --run, ...); the compiled preset and the run's card are layers too unless --preset /
    --character name others. Each input is read once, by the compile."""
    context = Path(args.context) if args.context else None
    result = compile_source(Path(args.source), context=context, options=options_from_args(args))
    if getattr(args, "run_dir", None) and result.profile is not None:
        # the profile bound to this run: tools.visible includes the run's own tools, so a
        # runtime building its gate from this file admits exactly what the model was offered
        write_resolved_profile(args.run_dir, result.profile)
    return result
