"""The run context a document is compiled with, for token-count hovers and the profile's
tools and resources: the client's ``apc`` settings, else the nearest ``apc.toml`` or
``pyproject.toml`` ``[tool.apc]`` table beside or above the file (no higher than the
workspace root, for a file inside it).

Internal: the interface is ``apc lsp``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import compiler
from compiler.errors import APCError, Diagnostic
from compiler.lsp.document import Document

KEYS = ("context", "provider", "model", "budget")


@dataclass(frozen=True)
class RunSettings:
    """How to compile a document for its hovers (``context`` None: no run context)."""

    context: Path | None = None
    provider: str | None = None
    model: str | None = None
    budget: int | None = None
    origin: str = ""  # where the settings came from: "settings", or a TOML file


def _table(file: Path) -> Mapping[str, Any] | None:
    """The ``apc`` table of an ``apc.toml`` (its top level, or ``[tool.apc]``) or of a
    ``pyproject.toml`` (``[tool.apc]``); None when it has none or cannot be read."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool")
    table = tool.get("apc") if isinstance(tool, dict) else None
    if isinstance(table, dict):
        return table
    if file.name == "apc.toml" and any(key in data for key in KEYS):
        return data
    return None


def _settings(table: Mapping[str, Any], base: Path, origin: str) -> RunSettings:
    context = table.get("context")
    budget = table.get("budget")
    return RunSettings(
        context=(base / context) if isinstance(context, str) and context else None,
        provider=table.get("provider") if isinstance(table.get("provider"), str) else None,
        model=table.get("model") if isinstance(table.get("model"), str) else None,
        budget=budget if isinstance(budget, int) and not isinstance(budget, bool) else None,
        origin=origin,
    )


def find_settings(file: Path | None, given: Mapping[str, Any], root: Path | None) -> RunSettings:
    """The client's settings when they name a context (relative: to the workspace root, else
    the file's directory), else the nearest TOML table beside or above ``file``: within the
    workspace ``root`` for a file inside it (a TOML file above the workspace, e.g. one
    planted in ``/tmp``, is not the workspace's to apply)."""
    if given.get("context"):
        base = root or (file.parent if file is not None else Path.cwd())
        return _settings(given, base, "settings")
    if file is None:
        return RunSettings()
    here = file.parent.resolve()
    folders = [here, *here.parents]
    top = root.resolve() if root is not None else None
    if top is not None and top in folders:
        folders = folders[: folders.index(top) + 1]
    for folder in folders:
        for name in ("apc.toml", "pyproject.toml"):
            candidate = folder / name
            if candidate.is_file():
                table = _table(candidate)
                if table is not None:
                    return _settings(table, folder, str(candidate))
    return RunSettings()


@dataclass
class Run:
    """One compile of a document's text under its run settings: the result, or the
    diagnostics that stopped it."""

    settings: RunSettings
    result: compiler.CompileResult | None = None
    problems: tuple[Diagnostic, ...] = ()

    @property
    def tool_names(self) -> list[str]:
        """The tools the resolved profile, bound to the run, makes visible."""
        if self.result is None:
            return []
        if self.result.profile is not None:
            return sorted(self.result.profile.tools.visible)
        return [tool["name"] for tool in self.result.tools]

    @property
    def visible_roots(self) -> tuple[str, ...] | None:
        """The workspace folders the resolved profile lets the model see (None: unknown)."""
        if self.result is None or self.result.profile is None:
            return None
        return tuple(self.result.profile.workspace.visible_roots)


def compile_run(doc: Document, settings: RunSettings) -> Run:
    """Compile the document's text with the run context (nothing without one)."""
    if settings.context is None or doc.kind == "json":
        return Run(settings)
    options: dict[str, Any] = {
        key: value
        for key, value in (
            ("provider", settings.provider),
            ("model", settings.model),
            ("budget", settings.budget),
        )
        if value is not None
    }
    try:
        result = compiler.compile_string(
            doc.text,
            kind="preset" if doc.kind == "preset" else "template",
            name=doc.label,
            context=settings.context,
            **options,
        )
    except APCError as exc:
        return Run(settings, problems=tuple(exc.diagnostics))
    return Run(settings, result)


def skill_names(settings: RunSettings) -> list[str]:
    """The skills the run context names (its ``skills`` object's keys)."""
    if settings.context is None:
        return []
    try:
        run = compiler.load_context(settings.context)
    except (APCError, OSError):
        return []
    return sorted(run.skills) if isinstance(run.skills, dict) else []


def workspace_root(doc: Document, settings: RunSettings) -> Path | None:
    """The workspace directory ``<<agent.file>>`` paths are relative to: the run context's
    (a directory named relative to the context file), else the document's directory."""
    if settings.context is not None:
        try:
            run = compiler.load_context(settings.context)
        except (APCError, OSError):
            run = None
        if run is not None and isinstance(run.workspace, str):
            folder = settings.context.parent / run.workspace
            if folder.is_dir():
                return folder
    return doc.file.parent if doc.file is not None else None
