"""``apc schema NAME``: JSON Schema (draft 2020-12) of an input format, for editors.

Internal: the interface is the ``apc`` command line.

The schemas are the entries of :data:`SCHEMAS`; register another with
``SCHEMAS["context"] = build_context_schema`` before the parser is built.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compiler.cli.commands._common import dumps
from compiler.profile import AgentProfile, AgentSchema, TavernProfiles

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def with_draft(schema: dict[str, Any], title: str) -> dict[str, Any]:
    """``schema`` with ``$schema`` first and a title."""
    return {"$schema": DRAFT, **schema, "title": title}


class _Open(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class _Tauritavern(_Open):
    agent_profiles: TavernProfiles = Field(default_factory=lambda: TavernProfiles(version=1))


class _Extensions(_Open):
    tauritavern: _Tauritavern = Field(default_factory=_Tauritavern)


class PresetDocument(_Open):
    """A preset JSON: any SillyTavern preset keys, plus the agent schema in either form."""

    agent: AgentSchema = Field(default_factory=AgentSchema)
    extensions: _Extensions = Field(default_factory=_Extensions)


def profile_schema() -> dict[str, Any]:
    """The schema of one agent profile (a registry file, a preset's ``profiles[]`` item)."""
    return with_draft(AgentProfile.model_json_schema(by_alias=True), "Agent profile")


def preset_schema() -> dict[str, Any]:
    """The schema of a preset JSON's agent parts (``agent`` and the TauriTavern extension)."""
    return with_draft(PresetDocument.model_json_schema(by_alias=True), "Preset agent schema")


def context_schema() -> dict[str, Any]:
    """The schema of a run context (RUN.json)."""
    from compiler import RunContext

    return with_draft(RunContext.model_json_schema(by_alias=True), "Run context")


SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "profile": profile_schema,
    "preset": preset_schema,
    "context": context_schema,
}


def register(sub: Any) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of an input format")
    p.add_argument("name", choices=sorted(SCHEMAS), help="which schema")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(dumps(SCHEMAS[args.name]()))
    return 0
