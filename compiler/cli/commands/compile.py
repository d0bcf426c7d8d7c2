"""``apc compile TEMPLATE --context RUN.json``: print the provider request body.

Internal: the interface is the ``apc`` command line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from compiler._base.journal import Event, Journal, append_jsonl
from compiler.cli.commands._common import (
    add_format,
    check_output,
    dumps,
    same_file,
    usage_error,
    write_output,
)
from compiler.cli.commands._compile_options import (
    add_compile_arguments,
    compile_from_args,
    usage_problem,
)
from compiler.cli.render import print_diagnostics
from compiler.errors import APCError


def register(sub: Any) -> None:
    p = sub.add_parser("compile", help="compile a template or preset into a provider request")
    add_compile_arguments(p)
    p.add_argument(
        "--emit",
        choices=("request", "frame", "ledger", "tools"),
        default="request",
        help="what to print (tools: the offered tools, with argumentNames where a schema was "
        "rewritten for the provider)",
    )
    p.add_argument("--journal", metavar="FILE", help="append journal events (JSONL)")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    p.add_argument(
        "--world-state",
        metavar="FILE",
        help="write the world info timed-effects state after this compile (SillyTavern's "
        "timedWorldInfo: pass it back as the run context's timedWorldInfo next turn)",
    )
    add_format(p)
    p.set_defaults(func=run)


def failure_events(exc: APCError) -> list[Event]:
    """The journal of a failed compile: its events when assembly had started, else one
    ``context_assembly_failed`` (a template, context, profile or output error)."""
    events: list[Event] | None = exc.details.get("events")
    if events:
        return events
    journal = Journal()
    journal.emit("context_assembly_failed", "error", code=exc.code, message=exc.message)
    return journal.events


def run(args: argparse.Namespace) -> int:
    problem = usage_problem(args)
    if args.world_state == "-":
        problem = problem or "--world-state needs a file: stdout holds the compiled output"
    elif same_file(args.world_state, args.output):
        problem = problem or "--world-state and -o name the same file: one would overwrite it"
    if args.journal == "-":
        problem = problem or "--journal needs a file: stdout holds the compiled output"
    elif same_file(args.journal, args.output) or same_file(args.journal, args.world_state):
        problem = problem or "--journal names the file -o or --world-state writes"
    if problem:
        return usage_error(problem)
    check_output(args.journal)  # the rule -o follows: a FIFO or symlink is refused, not waited on
    try:
        check_output(args.output)  # before compiling: a FIFO or symlink at OUT is refused
        check_output(args.world_state)
        result = compile_from_args(args)
    except APCError as exc:
        if args.journal:
            append_jsonl(failure_events(exc), Path(args.journal))
        raise
    if result.warnings:
        print_diagnostics(result.warnings, fmt=args.format)
    if args.journal:
        append_jsonl(result.events, Path(args.journal))
    if args.emit == "frame":
        payload: Any = result.frame.model_dump(mode="json", by_alias=True, exclude_none=True)
    elif args.emit == "ledger":
        payload = result.ledger.model_dump(mode="json", by_alias=True)
    elif args.emit == "tools":
        payload = result.tools_json()
    else:
        payload = result.request
    if args.world_state is not None:
        state = result.world_info_state or {"sticky": {}, "cooldown": {}}
        write_output(dumps(state), args.world_state)
    write_output(dumps(payload), args.output)
    return 0
