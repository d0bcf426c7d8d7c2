"""The options ``apc compile`` and ``apc explain`` share, their checks, and the compile call."""

from __future__ import annotations

import argparse
from pathlib import Path

from compiler.api import CACHE_STABLE_STEP, CompileResult
from compiler.api import compile as compile_source
from compiler.profile import add_profile_arguments, layers_from_args
from compiler.profile.registry import write_resolved_profile


def add_compile_arguments(p: argparse.ArgumentParser) -> None:
    """SOURCE, --context, --mode, model and budget options, and the profile layers."""
    p.add_argument("source", metavar="SOURCE", help="a template, or a SillyTavern preset .json")
    p.add_argument("--context", metavar="RUN.json", help="the run context")
    p.add_argument(
        "--mode",
        choices=("agent", "legacy"),
        help="preset mode (default: agent when the preset or card has an agent schema)",
    )
    p.add_argument("--provider", default="openai")
    p.add_argument("--model", default="gpt-4o")
    p.add_argument("--encoding", help="tokenizer encoding (default: the model's)")
    p.add_argument("--budget", type=int, metavar="N", help="total token budget of the request")
    p.add_argument("--max-completion-tokens", type=int, metavar="N")
    p.add_argument(
        "--reserve",
        type=int,
        metavar="N",
        help="tokens reserved for the response: the total budget is the model's window minus N "
        "(default: --max-completion-tokens; --budget overrides)",
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
    add_strict(p)
    add_profile_arguments(p)


def add_strict(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings (e.g. context.budget_over_window) as errors: exit 1, no output",
    )


def usage_problem(args: argparse.Namespace) -> str | None:
    """Why the options cannot work (a usage error, exit 2), or None."""
    for name in (args.source, args.context):
        if name and not Path(name).is_file():
            return f"not a file: {name}" if Path(name).exists() else f"no such file: {name}"
    if args.budget is not None and args.budget < 0:
        return "--budget must be at least 0"
    if args.max_completion_tokens is not None and args.max_completion_tokens < 1:
        return "--max-completion-tokens must be at least 1"
    if args.reserve is not None and args.reserve < 0:
        return "--reserve must be at least 0"
    if args.cache_stable is not None and args.cache_stable < 1:
        return "--cache-stable STEP must be at least 1"
    return None


def compile_from_args(args: argparse.Namespace) -> CompileResult:
    """Compile as the options say. The profile layers are the options' (--profile, --user,
    --run, ...); the compiled preset and the run's card are layers too unless --preset /
    --character name others. Each input is read once, by the compile."""
    result = compile_source(
        Path(args.source),
        context=Path(args.context) if args.context else None,
        provider=args.provider,
        model=args.model,
        budget=args.budget,
        encoding=args.encoding,
        max_completion_tokens=args.max_completion_tokens,
        profile=layers_from_args(args),
        mode=args.mode,
        reserve=args.reserve,
        cache_stable=args.cache_stable or 0,
        strict=args.strict,
    )
    if getattr(args, "run_dir", None) and result.profile is not None:
        # the profile bound to this run: tools.visible includes the run's own tools, so a
        # runtime building its gate from this file admits exactly what the model was offered
        write_resolved_profile(args.run_dir, result.profile)
    return result
