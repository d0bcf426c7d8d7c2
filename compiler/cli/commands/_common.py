"""Helpers shared by the command modules: output files, JSON printing, format option."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compiler._base.atomic import atomic_write_text, check_target
from compiler._driver.option_specs import (
    BY_NAME,
    CACHE_STABLE_STEP,
    OPTIONS,
    Option,
    bound_problem,
)


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="diagnostics format"
    )


def dumps(value: Any) -> str:
    """Stable, human-readable JSON (the same input gives the same bytes)."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def check_output(out: str | None) -> None:
    """Refuse ``-o OUT`` up front when OUT exists and is not a regular file."""
    if out is not None and out != "-":
        check_target(Path(out))


def same_file(a: str | None, b: str | None) -> bool:
    """Whether two output paths (``-`` is stdout) name one file: the same path, or one file
    by two names (a link)."""
    if a is None or b is None or "-" in (a, b):
        return False
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def write_output(text: str, out: str | None) -> None:
    """Print to stdout, or write ``out`` atomically (a temp file then a rename)."""
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    atomic_write_text(Path(out), text)


def usage_error(message: str) -> int:
    sys.stderr.write(f"apc: error: {message}\n")
    return 2


def add_options(
    p: argparse.ArgumentParser | argparse._ArgumentGroup,
    names: Iterable[str],
    *,
    provider_help: str | None = None,
    provider_default: str | None = None,
) -> None:
    """The command-line options ``names`` of CompileOptions' option table
    (:mod:`compiler._driver.option_specs`), each ``--name-with-dashes`` with its help, in
    its group. ``provider_help``/``provider_default``: what a command that loads the
    provider registry says of ``--provider`` (``apc check`` does not load it)."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for name in names:
        option = BY_NAME[name]
        target: argparse.ArgumentParser | argparse._ArgumentGroup = p
        if option.group is not None:
            if option.group not in groups:
                groups[option.group] = p.add_argument_group(option.group)
            target = groups[option.group]
        kwargs = _argparse_form(option)
        if name == "provider":
            kwargs.update(help=provider_help or option.help, default=provider_default)
        target.add_argument(option.flag, *option.aliases, dest=option.name, **kwargs)


def _argparse_form(option: Option) -> dict[str, Any]:
    """How argparse reads an option of ``option.kind``."""
    form: dict[str, Any] = {"help": option.help or None}
    if option.metavar is not None:
        form["metavar"] = option.metavar
    if option.kind == "bool":
        form["action"] = "store_true"
    elif option.kind == "strings":
        form["action"] = "append"
    elif option.kind == "choice":
        form["choices"] = option.choices
    elif option.kind == "step":
        form.update(type=int, nargs="?", const=CACHE_STABLE_STEP)
    elif option.kind in ("int", "float"):
        form["type"] = int if option.kind == "int" else float
    return form


def option_values(args: argparse.Namespace) -> dict[str, Any]:
    """The values of the table's options a command took, as CompileOptions' fields."""
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if not hasattr(args, option.name):
            continue
        value = getattr(args, option.name)
        if option.kind == "strings":
            value = tuple(value or ())
        elif option.kind == "step":
            value = value or 0
        if value is not None:
            values[option.name] = value
    return values


def number_problem(args: argparse.Namespace) -> str | None:
    """Why a number option cannot work (a usage error, exit 2), or None: the bounds of
    CompileOptions' option table, for every command that takes the option."""
    for option in OPTIONS:
        problem = bound_problem(option, getattr(args, option.name, None))
        if problem is not None:
            metavar = f" {option.metavar}" if option.kind == "step" else ""
            return f"{option.flag}{metavar} {problem}"
    return None
