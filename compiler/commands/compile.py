"""``apc compile TEMPLATE --context RUN.json``: print the provider request body."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from compiler.api import compile as compile_source
from compiler.commands._common import add_format, dumps, usage_error, write_output
from compiler.commands.explain import add_budget_arguments, budget_usage_problem
from compiler.context._load import load_json_file
from compiler.errors import APCError
from compiler.journal import append_jsonl
from compiler.profile import add_profile_arguments, resolve_from_args
from compiler.render import print_diagnostics
from compiler.tavern.assemble import load_preset_source


def register(sub: Any) -> None:
    p = sub.add_parser("compile", help="compile a template into a provider request")
    p.add_argument("source", metavar="TEMPLATE", help="a template, or a SillyTavern preset .json")
    p.add_argument(
        "--mode",
        choices=("agent", "legacy"),
        help="preset mode (default: agent when the profile's agent schema is enabled)",
    )
    p.add_argument("--context", metavar="RUN.json", help="the run context")
    p.add_argument("--provider", default="openai")
    p.add_argument("--model", default="gpt-4o")
    p.add_argument("--encoding", help="tokenizer encoding (default: the model's)")
    p.add_argument("--budget", type=int, metavar="N", help="total token budget of the request")
    p.add_argument("--max-completion-tokens", type=int, metavar="N")
    add_budget_arguments(p)
    p.add_argument(
        "--emit", choices=("request", "frame", "ledger"), default="request", help="what to print"
    )
    p.add_argument("--journal", metavar="FILE", help="append journal events (JSONL)")
    add_profile_arguments(p)
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not Path(args.source).is_file():
        return usage_error(f"no such file: {args.source}")
    if args.context and not Path(args.context).is_file():
        return usage_error(f"no such file: {args.context}")
    if args.budget is not None and args.budget < 0:
        return usage_error("--budget must be at least 0")
    if args.max_completion_tokens is not None and args.max_completion_tokens < 1:
        return usage_error("--max-completion-tokens must be at least 1")
    problem = budget_usage_problem(args)
    if problem:
        return usage_error(problem)
    _default_layers(args)
    try:
        result = compile_source(
            Path(args.source),
            context=Path(args.context) if args.context else None,
            provider=args.provider,
            model=args.model,
            budget=args.budget,
            encoding=args.encoding,
            max_completion_tokens=args.max_completion_tokens,
            profile=resolve_from_args(args),
            mode=args.mode,
            reserve=args.reserve,
            cache_stable=args.cache_stable or 0,
        )
    except APCError as exc:
        if args.journal and exc.details.get("events"):
            append_jsonl(exc.details["events"], Path(args.journal))
        raise
    if result.warnings:
        print_diagnostics(result.warnings, fmt=args.format)
    if args.journal:
        append_jsonl(result.events, Path(args.journal))
    if args.emit == "frame":
        payload: Any = result.frame.model_dump(mode="json", by_alias=True, exclude_none=True)
    elif args.emit == "ledger":
        payload = result.ledger.model_dump(mode="json", by_alias=True)
    else:
        payload = result.request
    write_output(dumps(payload), args.output)
    return 0


def _default_layers(args: argparse.Namespace) -> None:
    """Without --preset/--character, the compiled preset and the run's card are the layers."""
    if args.preset is None and load_preset_source(Path(args.source)) is not None:
        args.preset = args.source
    if args.character is None and args.context:
        raw = load_json_file(Path(args.context))
        character = raw.get("character") if isinstance(raw, dict) else None
        if isinstance(character, str):
            args.character = str(Path(args.context).resolve().parent / character)
        elif isinstance(character, dict):
            args.character = character
