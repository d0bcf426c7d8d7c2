"""Checking a template or preset without compiling it: ``compiler.check`` and
``compiler.check_string``.

Internal: the functions are public as ``compiler.check`` and friends. A template's check loads
only the parser and the macro catalogue (no pydantic, no pipeline), so ``apc check`` starts
fast; a preset's loads what checking a preset needs.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from compiler._assemble.macros import BoundTemplate, bind
from compiler._driver.sources import SourceKind, read_source
from compiler._records import record
from compiler.errors import Diagnostic, TemplateError
from compiler.inputs.read import parse_json, sanitize, surrogate_warning
from compiler.syntax import parse

if TYPE_CHECKING:
    from compiler._assemble.assemble import PresetMode
    from compiler.tavern.preset import TavernPreset


@record(frozen=True)
class PresetCheck:
    """A SillyTavern preset :func:`check` found no error in: the mode it was checked in and
    its warnings (each with its place: ``FILE#prompts[3].content:1:5``,
    ``FILE#prompt_order[0].order[2]``, ...)."""

    source: str
    mode: PresetMode
    warnings: tuple[Diagnostic, ...] = ()


def check(
    path: str | os.PathLike[str], *, mode: PresetMode | None = None
) -> BoundTemplate | PresetCheck:
    """Check the template or SillyTavern preset (``.json``) file at ``path`` without
    compiling it; raises TemplateError with every error (a preset's: with its warnings).

    A template is parsed and bound (its warnings are the BoundTemplate's); a preset is
    checked as ``apc check`` checks it, in ``mode`` (None: the mode a compile would choose
    from the preset's agent schema), see :mod:`compiler.tavern.check`.
    """
    source = read_source(path)
    return check_string(source.text, name=source.name, kind=source.kind, mode=mode)


def _check_preset(preset: TavernPreset, mode: PresetMode | None) -> PresetCheck:
    if mode not in (None, "agent", "legacy"):
        raise ValueError(f"mode must be 'agent' or 'legacy', not {mode!r}")
    from compiler.tavern.agent_entries import schema_mode
    from compiler.tavern.check import check_preset

    mode = mode or schema_mode(preset)
    found = check_preset(preset, mode)
    if any(d.severity == "error" for d in found):
        raise TemplateError(found)
    return PresetCheck(preset.source, mode, tuple(found))


def check_string(
    text: str,
    *,
    name: str | None = None,
    kind: SourceKind = "template",
    mode: PresetMode | None = None,
) -> BoundTemplate | PresetCheck:
    """Check template text (``kind="template"``: parse and bind) or a preset's JSON text
    (``kind="preset"``, as :func:`check` checks a preset file); raises TemplateError with
    every error."""
    if kind == "preset":
        from compiler.tavern.preset import read_preset

        label = name or "<preset>"
        return _check_preset(read_preset(parse_json(text, label), origin=label), mode)
    if kind != "template":
        raise ValueError(f"kind must be 'template' or 'preset', not {kind!r}")
    return check_template(text, name or "<string>")


def check_template(text: str, name: str) -> BoundTemplate:
    """Parse and bind template ``text``; raises TemplateError with every error of it."""
    text, repaired = sanitize(text)  # only a str from Python can hold lone surrogates
    bound = bind(parse(text, name))
    if repaired:
        warning = surrogate_warning(repaired, name)
        bound = dataclasses.replace(bound, warnings=(warning, *bound.warnings))
    return bound


def add_new(diagnostics: list[Diagnostic], found: Iterable[Diagnostic]) -> None:
    """Append to ``diagnostics`` each of ``found`` it does not hold yet: a budget check
    compiles the source, whose warnings (an Agent entry inserted, macros a legacy compile
    removes, a SillyTavern macro left as written, ...) the source's own check already
    reported, there with its position. One is held when it is equal, or has the same code,
    file and subject (the first quoted name of its message: the macro, the entry)."""
    held = {_about(d) for d in diagnostics}
    for d in found:
        if d not in diagnostics and _about(d) not in held:
            diagnostics.append(d)
            held.add(_about(d))


_SUBJECT = re.compile(r"'([^']*)'")


def _about(d: Diagnostic) -> tuple[str, str | None, str]:
    """What a diagnostic is about: its code, file and subject (the message when it quotes
    no name)."""
    subject = _SUBJECT.search(d.message)
    return d.code, d.file, subject.group(1) if subject else d.message


def over_window(
    provider: str,
    model: str | None,
    budget: int | None,
    reserve: int | None,
    max_output_tokens: int | None,
) -> list[Diagnostic]:
    """``context.budget_over_window`` when ``budget`` (plus the reserve) exceeds the model's
    window (``apc check --budget``, ``/v1/check``); loads the dialects when it runs."""
    from compiler.fit.budgets import budget_warnings, total_budget
    from compiler.providers import get_dialect

    dialect = get_dialect(provider)
    model = model or dialect.default_model
    total = total_budget(
        budget=budget,
        profile_total=None,
        window=dialect.window(model),
        reserve=reserve,
        max_output_tokens=dialect.reserved_output(model, max_output_tokens),
    )
    return budget_warnings(total, model)
