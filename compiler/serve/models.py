"""The service's request and response bodies (FastAPI derives the OpenAPI document from them).

Internal: the interface is the HTTP API of ``apc serve`` (docs: "apc serve").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from compiler._base.journal import Event
from compiler.fit.ledger import BudgetLedger
from compiler.providers import DEFAULT_PROVIDER
from compiler.providers.dialect import MAX_TOP_K
from compiler.syntax.parser import MAX_TEMPLATE_CHARS

MAX_NAME_CHARS = 200
MAX_PATH_CHARS = 4096
MAX_STOPS = 16


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

    id: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    preset: JSONObject | None = None
    character: JSONObject | None = None
    user: JSONObject | None = None
    run: JSONObject | None = None


class OptionsIn(_In):
    """The options ``apc compile`` takes (``--provider``, ``--model``, ``--budget``, ...)."""

    provider: str = Field(default=DEFAULT_PROVIDER, max_length=MAX_NAME_CHARS)
    model: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    encoding: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    budget: int | None = Field(default=None, ge=0, le=2**53)
    max_output_tokens: int | None = Field(default=None, ge=1, le=2**53)
    reserve: int | None = Field(default=None, ge=0, le=2**53)
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = Field(default=None, ge=0, le=MAX_TOP_K)
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = Field(default=None, ge=-(2**63), le=2**64 - 1)
    stop: list[Annotated[str, Field(max_length=1000)]] = Field(
        default_factory=list, max_length=MAX_STOPS
    )
    #: true (a step of 32 messages) or the step: history cut points move in steps
    cache_stable: bool | Annotated[int, Field(ge=1, le=2**31)] = False
    mode: Literal["agent", "legacy"] | None = None
    strict: bool = False
    profile: ProfileIn | None = None


class SourceIn(_In):
    """What to compile: exactly one of ``template`` (text), ``preset`` (a SillyTavern preset's
    JSON) or ``source`` (a path under one of the server's roots; ``.json``: a preset)."""

    template: str | None = Field(default=None, max_length=MAX_TEMPLATE_CHARS)
    preset: JSONObject | None = None
    source: str | None = Field(default=None, min_length=1, max_length=MAX_PATH_CHARS)
    #: what diagnostics call an inline source (default ``<template>`` / ``<preset>``)
    name: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)
    #: the run context: inline (RUN.json's schema, ``GET /v1/schema/context``; its paths
    #: resolve under the first root) or a RUN.json path under a root (paths beside it)
    context: JSONObject | Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)] | None = (
        None
    )
    options: OptionsIn = Field(default_factory=OptionsIn)
    #: who is calling: sessions (and their caches) are never shared between callers
    caller: str = Field(default="", max_length=MAX_NAME_CHARS)

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
