"""RunContext: what a run has (RUN.json), validated, with paths resolved against its file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compiler.context._load import INLINE, load_json_file, validate
from compiler.context.workspace import Workspace
from compiler.errors import ContextError


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ChatMessageIn(_Model):
    """A chat message as the run supplies it (oldest first)."""

    role: str
    content: str | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None


class ToolIn(_Model):
    """A tool definition: dotted name, description, JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolResultIn(_Model):
    """One tool call and its result."""

    call_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    content: str = ""
    is_error: bool = False


class InlineWorkspace(_Model):
    files: dict[str, str]


class Persona(_Model):
    name: str = "User"
    description: str = ""


class RunContext(_Model):
    """The run context. ``base_dir`` is where relative paths resolve (the file's folder)."""

    chat: list[ChatMessageIn] = Field(default_factory=list)
    workspace: str | InlineWorkspace | None = None
    tools: list[ToolIn] = Field(default_factory=list)
    tool_results: list[ToolResultIn] = Field(default_factory=list)
    plan: str | list[str] | None = None
    diff: str | None = None
    skills: dict[str, str] = Field(default_factory=dict)
    task: str | None = None
    persona: Persona | None = None
    character: dict[str, Any] | None = None
    world_info: list[dict[str, Any]] = Field(default_factory=list)

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", json_schema_extra=None
    )

    _base_dir: Path = Path(".")
    _file: str = INLINE

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    @property
    def file(self) -> str:
        return self._file

    def open_workspace(self) -> Workspace:
        """The workspace this run names (an empty inline one when none is given)."""
        if self.workspace is None:
            return Workspace(files={})
        if isinstance(self.workspace, InlineWorkspace):
            return Workspace(files=self.workspace.files)
        directory = (self._base_dir / self.workspace).resolve()
        if not directory.is_dir():
            raise ContextError(
                code="context.workspace_not_found",
                message=f"workspace directory not found: {directory}",
                file=self._file,
                path="workspace",
            )
        return Workspace(directory=directory)


def load_context(
    value: RunContext | dict[str, Any] | str | Path | None, base_dir: Path | None = None
) -> RunContext:
    """A RunContext from an object, a dict (paths relative to ``base_dir``) or a JSON file."""
    if value is None:
        return RunContext()
    if isinstance(value, RunContext):
        return value
    file = INLINE
    if isinstance(value, str | Path):
        path = Path(value)
        data = load_json_file(path)
        file, base_dir = str(path), path.resolve().parent
    else:
        data = value
    if not isinstance(data, dict):
        raise ContextError(
            code="context.invalid_context",
            message="the run context must be a JSON object",
            file=file,
        )
    ctx = validate(
        RunContext, data, code="context.invalid_context", file=file, prefix="", what="run context"
    )
    ctx._base_dir = base_dir or Path.cwd()
    ctx._file = file
    return ctx
