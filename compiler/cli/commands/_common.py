"""Helpers shared by the command modules: output files, JSON printing, format option."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from compiler import OPTIONS, Option
from compiler._base.atomic import atomic_write_text, check_target
from compiler.errors import APCError


def add_format(parser: argparse.ArgumentParser, *, html: bool = False) -> None:
    """``--format text|json`` (and ``html`` where a command draws a report page)."""
    if html:
        parser.add_argument(
            "--format",
            choices=("text", "json", "html"),
            default="text",
            help="output format (html: a self-contained page to open in a browser; its "
            "diagnostics are on the page, and in text on stderr)",
        )
        return
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="diagnostics format"
    )


def diagnostics_format(args: argparse.Namespace) -> str:
    """The format of the diagnostics on stderr: a page's are text."""
    return "json" if args.format == "json" else "text"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any) -> str:
    """Stable, human-readable JSON (the same input gives the same bytes), valid UTF-8: a
    lone surrogate (a file name that is not UTF-8) is written as its JSON escape."""
    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


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


def import_extra(
    module: str, extra: str, needs: frozenset[str], what: str, code: str
) -> ModuleType:
    """``module`` of the command ``apc EXTRA``, which needs the optional extra ``extra``
    (its top-level packages ``needs``, named ``what`` to a user): a missing one of those is
    the coded error ``code`` with the install command; any other missing module is a bug,
    raised as it is."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in needs:
            raise
        raise APCError(
            code=code,
            message=f"apc {extra} needs the {extra} extra ({what}): no {exc.name}",
            hint=f"pip install 'agent-prompt-compiler[{extra}]'",
        ) from None


def usage_error(message: str) -> int:
    sys.stderr.write(f"apc: error: {message}\n")
    return 2


_BY_NAME = {option.name: option for option in OPTIONS}


def add_options(
    p: argparse.ArgumentParser | argparse._ArgumentGroup,
    names: Iterable[str],
    *,
    provider_help: str | None = None,
    provider_default: str | None = None,
    provider_action: type[argparse.Action] | None = None,
) -> None:
    """The command-line options ``names`` of CompileOptions' option table
    (:mod:`compiler._driver.option_specs`), each ``--name-with-dashes`` with its help, in
    its group. ``provider_help``/``provider_default``/``provider_action``: what a command
    says of ``--provider`` (an action whose help reads the installed providers only when
    the help is shown)."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for name in names:
        option = _BY_NAME[name]
        target: argparse.ArgumentParser | argparse._ArgumentGroup = p
        if option.group is not None:
            if option.group not in groups:
                groups[option.group] = p.add_argument_group(option.group)
            target = groups[option.group]
        kwargs = _argparse_form(option)
        if name == "provider":
            kwargs.update(help=provider_help or option.help, default=provider_default)
            if provider_action is not None:
                kwargs.update(action=provider_action, help=None)
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
        form.update(type=int, nargs="?", const=option.const)
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
        problem = option.problem(getattr(args, option.name, None))
        if problem is not None:
            metavar = f" {option.metavar}" if option.kind == "step" else ""
            return f"{option.flag}{metavar} {problem}"
    return None
