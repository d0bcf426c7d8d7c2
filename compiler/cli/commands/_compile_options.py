"""The options ``apc compile`` and ``apc explain`` share, their checks, and the compile call."""

from __future__ import annotations

import argparse
from pathlib import Path

from compiler import CompileOptions, CompileResult
from compiler import compile as compile_source
from compiler.cli.commands._common import add_options, number_problem, option_values
from compiler.errors import LoweringError
from compiler.inputs import is_file, lexists
from compiler.profile import add_profile_arguments, layers_from_args, write_resolved_profile
from compiler.providers import DEFAULT_PROVIDER, SAMPLER_FLAGS, get_dialect, provider_help

#: the options of apc compile, explain and bench, in their --help order
COMPILE_OPTIONS = (
    "mode",
    "provider",
    "model",
    "encoding",
    "budget",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_k",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "stop",
    "reserve",
    "cache_stable",
    "plan",
    "plan_node",
    "strict",
)


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
    """SOURCE, --context, the compile options (made from CompileOptions' option table), and
    the profile layers."""
    p.add_argument("source", metavar="SOURCE", help="a template, or a SillyTavern preset .json")
    p.add_argument("--context", metavar="RUN.json", help="the run context")
    add_options(
        p, COMPILE_OPTIONS, provider_action=_ProviderOption, provider_default=DEFAULT_PROVIDER
    )
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
    """The :class:`CompileOptions` the command line says (the one options object): every
    option of the table the command took, and the profile layers."""
    return CompileOptions(**option_values(args), profile=layers_from_args(args))


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
