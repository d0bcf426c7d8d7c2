"""``apc plan check`` and ``apc plan simulate``: a plan against a resolved profile.

Internal: the interface is the ``apc`` command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from compiler.cli.commands._common import add_format
from compiler.cli.render import print_diagnostics
from compiler.errors import ContextError, PolicyError
from compiler.inputs import parse_json, read_bytes
from compiler.policy import PlanAction, PlanGuard, check_plan, load_plan
from compiler.profile import (
    ResolvedAgentProfile,
    add_profile_arguments,
    layers_from_args,
    resolve_from_args,
)


def register(sub: Any) -> None:
    p = sub.add_parser("plan", help="plan policies")
    actions = p.add_subparsers(dest="plan_command", metavar="ACTION")
    actions.required = True
    c = actions.add_parser(
        "check",
        help="check a plan against the resolved profile",
        description="Check PLAN.json ({mode, nodes}) against the resolved profile.",
    )
    c.add_argument("plan", metavar="PLAN.json")
    add_profile_arguments(c)
    add_format(c)
    c.set_defaults(func=run_check)
    s = actions.add_parser(
        "simulate",
        help="replay actions through the plan guard",
        description="Replay ACTIONS.jsonl (one action a line) through the plan guard and "
        "print every journal event as JSONL; exit 1 at the first violation.",
    )
    s.add_argument("plan", metavar="PLAN.json")
    s.add_argument("--actions", metavar="ACTIONS.jsonl", required=True)
    add_profile_arguments(s)
    add_format(s)
    s.set_defaults(func=run_simulate)


def _lookup(args: argparse.Namespace) -> Any:
    layers = layers_from_args(args)

    def lookup(profile_id: str) -> ResolvedAgentProfile:
        return dataclasses.replace(layers, profile_id=profile_id).resolve()

    return lookup


def run_check(args: argparse.Namespace) -> int:
    plan = load_plan(args.plan)
    resolved = resolve_from_args(args)
    found = check_plan(plan, resolved, lookup=_lookup(args), file=args.plan)
    if found:
        print_diagnostics(found, fmt=args.format)
        return 1
    return 0


def run_simulate(args: argparse.Namespace) -> int:
    plan = load_plan(args.plan)
    resolved = resolve_from_args(args)
    lookup = _lookup(args)
    found = check_plan(plan, resolved, lookup=lookup, file=args.plan)
    if found:
        print_diagnostics(found, fmt=args.format)
        return 1
    text = read_bytes(Path(args.actions), what="actions").decode("utf-8", errors="replace")
    guard = PlanGuard(resolved, plan, lookup=lookup)
    printed = 0

    def flush() -> None:
        nonlocal printed
        for event in guard.journal.events[printed:]:
            sys.stdout.write(json.dumps(event.model_dump(by_alias=True), ensure_ascii=False) + "\n")
        printed = len(guard.journal.events)

    flush()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{args.actions}:{number}"
        try:  # strict, as every JSON input: no NaN, integers of at most 100 digits
            data = parse_json(line, where, line_offset=number - 1, what="plan action")
        except ContextError as exc:
            raise ContextError(
                code="agent.plan_action_invalid", message=f"not JSON: {exc.message}", file=where
            ) from None
        try:
            action = PlanAction.from_json(data)
        except ContextError as exc:
            raise dataclasses.replace(exc, file=where) from None
        try:
            guard.apply(action)
        except PolicyError as exc:
            flush()
            raise dataclasses.replace(exc, file=where) from None
        flush()
    return 0
