"""The service's request and response bodies (FastAPI derives the OpenAPI document from them).

Internal: the interface is the HTTP API of ``apc serve`` (docs: "apc serve").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator
from pydantic.alias_generators import to_camel

from compiler import OPTIONS, BudgetLedger, Event, Option
from compiler.providers import DEFAULT_PROVIDER
from compiler.syntax import MAX_TEMPLATE_CHARS

NAME_CHARS = next(o.max_chars for o in OPTIONS if o.name == "provider") or 200
"""The longest name a request gives (a provider, model, caller, profile id or inline source
name): the option table's."""

MAX_PATH_CHARS = 4096


class _In(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False
    )


class _Out(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


JSONObject = dict[str, Any]


class ProfileIn(_In):
    """The agent profile: a registry id (under the server's ``--data-root``) and the layers
    inline (each the JSON its file would hold); absent layers come from the preset and the
    run's card, as for ``apc compile``."""

    id: str | None = Field(default=None, max_length=NAME_CHARS)
    preset: JSONObject | None = None
    character: JSONObject | None = None
    user: JSONObject | None = None
    run: JSONObject | None = None


def _field(option: Option) -> tuple[Any, Any]:
    """The request field of a compile option (its type, default and bounds)."""
    about = option.api_help or option.help or None
    if option.kind == "int":
        return int | None, Field(default=None, ge=option.low, le=option.high, description=about)
    if option.kind == "float":
        return float | None, Field(default=None, description=about)
    if option.kind == "bool":
        return bool, Field(default=False, description=about)
    if option.kind == "choice":
        return Literal[option.choices] | None, Field(default=None, description=about)
    if option.kind == "strings":
        text = Annotated[str, Field(max_length=option.max_chars)]
        return list[text], Field(
            default_factory=list, max_length=option.max_items, description=about
        )
    if option.kind == "step":
        step = Annotated[int, Field(ge=option.low, le=option.high)]
        return bool | step, Field(default=False, description=about)
    if option.name == "provider":
        return str, Field(default=DEFAULT_PROVIDER, max_length=option.max_chars, description=about)
    return str | None, Field(default=None, max_length=option.max_chars, description=about)


_OPTION_FIELDS: dict[str, Any] = {o.name: _field(o) for o in OPTIONS if o.serve}
OptionsIn = create_model(  # made from CompileOptions' option table, as the CLI's options are
    "OptionsIn",
    __base__=_In,
    __doc__="The options ``apc compile`` takes (``--provider``, ``--model``, ``--budget``, ...).",
    **_OPTION_FIELDS,
    profile=(ProfileIn | None, None),
)


class SourceIn(_In):
    """What to compile: exactly one of ``template`` (text), ``preset`` (a SillyTavern preset's
    JSON) or ``source`` (a path under one of the server's roots; ``.json``: a preset)."""

    template: str | None = Field(default=None, max_length=MAX_TEMPLATE_CHARS)
    preset: JSONObject | None = None
    source: str | None = Field(default=None, min_length=1, max_length=MAX_PATH_CHARS)
    #: what diagnostics call an inline source (default ``<template>`` / ``<preset>``)
    name: str | None = Field(default=None, min_length=1, max_length=NAME_CHARS)
    #: the run context: inline (RUN.json's schema, ``GET /v1/schema/context``; its paths
    #: resolve under the first root) or a RUN.json path under a root (paths beside it)
    context: JSONObject | Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)] | None = (
        None
    )
    options: OptionsIn = Field(default_factory=OptionsIn)
    #: who is calling: sessions (and their caches) are never shared between callers
    caller: str = Field(default="", max_length=NAME_CHARS)

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        given = [n for n in ("template", "preset", "source") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of template, preset or source"
                + (f" (got {', '.join(given)})" if given else "")
            )
        return self


class CompileIn(SourceIn):
    """``POST /v1/compile`` and ``POST /v1/explain``."""


class CheckIn(SourceIn):
    """``POST /v1/check``: the source's diagnostics; any budget option or a context also
    checks that what cannot be cut fits the window (as ``apc check`` does)."""


class DiagnosticOut(_Out):
    """One finding: a stable ``code`` (docs: "Error codes"), what and where (a file or inline
    source name, a line and column span, a JSON path inside a structured input), how to fix;
    the shape ``apc ... --format json`` writes. A last ``note`` counts what was left out."""

    severity: Literal["error", "warning", "note"] = "error"
    code: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    path: str | None = None
    hint: str | None = None
    #: a ``note``'s count of the diagnostics left out
    omitted: int | None = None


class ErrorOut(_Out):
    """The body of every error response."""

    diagnostics: list[DiagnosticOut]


class CompileOut(_Out):
    """The request exactly as ``apc compile`` prints it, and what the compile decided."""

    request: JSONObject
    ledger: BudgetLedger
    warnings: list[DiagnosticOut]
    events: list[Event]
    #: the world info's sticky / cooldown state after this turn (``apc compile
    #: --world-state``): pass it back as the next turn's ``timedWorldInfo``; null when the
    #: run has no timed entries
    world_info_state: JSONObject | None = None


class ExplainOut(_Out):
    """How the compile spent its budget (``apc explain --format json``)."""

    ledger: BudgetLedger
    warnings: list[DiagnosticOut]
    #: the lorebook debugger's report: every world info entry considered (null: no scan)
    world_info: JSONObject | None = None


class CheckOut(_Out):
    """``ok`` is false when a diagnostic is an error (``apc check`` exits 1)."""

    ok: bool
    diagnostics: list[DiagnosticOut]


class HealthOut(_Out):
    """The server answers; ``sessions`` is how many compile sessions it keeps."""

    status: Literal["ok"]
    sessions: int
