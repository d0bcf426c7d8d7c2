"""Tool parameters for Gemini: JSON Schema lowered to the API's Schema subset, and checked.

Internal: the API is :mod:`compiler.providers` (the ``gemini`` dialect).

Gemini's function declarations take an OpenAPI-3.0-like ``Schema`` (the ``Schema`` of the
Gemini API reference and ``google.genai.types.Schema``), not JSON Schema. What is kept:
:data:`KEYWORDS`. The SDK's Schema also has ``additionalProperties``, ``ref`` and ``defs``,
but the SDK itself refuses ``additionalProperties`` outside Vertex AI ("only supported in
Gemini Enterprise Agent Platform mode") and the API answers "Unknown name" for it, so the
lowering (:func:`gemini_parameters`) rewrites a schema as follows; every loss is recorded
in ``notes`` (the dialect reports them as ``lower.unsupported``):

- ``type`` becomes the API's enum name (``"string"`` -> ``"STRING"``, as the SDK sends it);
  ``"null"`` (alone or in a type list) becomes ``nullable: true``; a list of several types
  becomes ``anyOf`` (noted).
- local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) is inlined (a recursive or unknown
  reference is dropped, noted); ``$defs``/``definitions`` then go.
- ``oneOf`` becomes ``anyOf`` (noted: "exactly one" is lost); an ``allOf`` of one schema is
  merged in, a longer one dropped (noted); a string ``const`` becomes a one-value ``enum``.
- ``enum`` only stays on strings (the API: "only allowed for STRING type"); other enums are
  dropped and their values written into the description (noted). ``format`` only stays
  where the API takes it (string: enum, date-time; number: float, double; integer: int32,
  int64), ``properties``/``required`` only on objects (``required`` names that are not
  properties go), ``items`` only on arrays (each noted).
- every other keyword is dropped (noted); annotations that constrain nothing -- ``$schema``,
  ``$id``, ``$comment`` and ``additionalProperties: false`` (Gemini only calls with the
  declared properties) -- are dropped silently, so the built-in tools lower without
  warnings.
- the parameters of a function without properties are omitted (the API answers
  "properties: should be non-empty for OBJECT type" to an empty object).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NoReturn

from compiler.errors import LoweringError
from compiler.providers.tool_params import GEMINI_KEYS

#: The Schema keywords of the Gemini API (its reference; all of them in google.genai.types).
KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
#: the parameter names Gemini takes (google.genai.types.FunctionDeclaration.parameters)
PARAMETER_NAME = GEMINI_KEYS
TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"})
#: the formats the API takes, by type
FORMATS = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"float", "double"}),
    "INTEGER": frozenset({"int32", "int64"}),
}
#: keywords dropped without a note: they constrain nothing Gemini does not already do
SILENT = frozenset({"$schema", "$id", "$comment", "$defs", "definitions"})
#: handled by :meth:`_Lowering.node` itself (never copied as they are)
HANDLED = frozenset({"type", "$ref", "oneOf", "allOf", "const", "enum", "format"})


def gemini_parameters(parameters: Any, notes: list[str]) -> dict[str, Any] | None:
    """The function declaration's ``parameters`` for a JSON Schema (None: omit them, the
    function takes no arguments); what could not be kept is appended to ``notes``."""
    if not isinstance(parameters, dict):
        return None
    lowering = _Lowering(parameters, notes)
    out = lowering.node(parameters, "")
    if out.get("type") not in (None, "OBJECT") or not out.get("properties"):
        if out.get("type") not in (None, "OBJECT"):
            notes.append("parameters that are not an object (omitted)")
        return None
    out["type"] = "OBJECT"
    return out


class _Lowering:
    """One schema's lowering: its definitions for ``$ref`` and the notes it adds to."""

    def __init__(self, root: dict[str, Any], notes: list[str]) -> None:
        defs = root.get("$defs")
        legacy = root.get("definitions")
        self.defs: dict[str, Any] = {
            **(legacy if isinstance(legacy, dict) else {}),
            **(defs if isinstance(defs, dict) else {}),
        }
        self.notes = notes
        self.resolving: list[str] = []

    def note(self, what: str, path: str) -> None:
        self.notes.append(f"{what} at {path or '/'}")

    def node(self, schema: Any, path: str) -> dict[str, Any]:
        """The Gemini Schema for one JSON Schema node."""
        if not isinstance(schema, dict):
            if schema is not True:
                self.note(f"schema {schema!r}", path)
            return {}
        if "$ref" in schema:
            schema = self.resolve(schema, path)
        schema = self.merge_all_of(schema, path)
        out: dict[str, Any] = {}
        self.type_of(schema, out, path)
        kind = out.get("type")
        if kind is None and isinstance(schema.get("properties"), dict):
            kind = out["type"] = "OBJECT"
        elif kind is None and "items" in schema:
            kind = out["type"] = "ARRAY"
        for key, value in schema.items():
            if key in HANDLED or value is None:
                continue
            if key == "additionalProperties":
                if value is not False:
                    self.note("additionalProperties", path)
            elif key in SILENT:
                pass
            elif key not in KEYWORDS:
                self.note(key, path)
            elif key == "properties":
                self.properties(value, kind, out, path)
            elif key == "items":
                if kind == "ARRAY":
                    out["items"] = self.node(value, f"{path}/items")
                else:
                    self.note("items (not an array)", path)
            elif key == "anyOf":
                out["anyOf"] = [self.node(s, f"{path}/anyOf") for s in _list(value)]
            else:
                out[key] = value
        if "oneOf" in schema:
            self.note("oneOf (as anyOf)", path)
            one = [self.node(s, f"{path}/oneOf") for s in _list(schema["oneOf"])]
            out["anyOf"] = [*out.get("anyOf", []), *one]
        self.enum(schema, out, path)
        self.format(schema, out, path)
        self.required(out, path)
        return out

    def resolve(self, schema: dict[str, Any], path: str) -> dict[str, Any]:
        """``schema`` with its local ``$ref`` inlined (its own keywords win)."""
        ref = schema["$ref"]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        name = ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""
        local = isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/"))
        if not local or name not in self.defs or name in self.resolving:
            self.note(f"$ref {ref!r}", path)
            return rest
        self.resolving.append(name)
        try:
            target = self.node(self.defs[name], f"{path}/$ref")
        finally:
            self.resolving.pop()
        return {**target, **rest, "type": rest.get("type", target.get("type"))}

    def merge_all_of(self, schema: dict[str, Any], path: str) -> dict[str, Any]:
        parts = schema.get("allOf")
        if parts is None:
            return schema
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        if isinstance(parts, list) and len(parts) == 1:
            inner = self.node(parts[0], f"{path}/allOf")
            return {**inner, **rest, "type": rest.get("type", inner.get("type"))}
        self.note("allOf", path)
        return rest

    def type_of(self, schema: dict[str, Any], out: dict[str, Any], path: str) -> None:
        raw = schema.get("type")
        if raw is None:
            return
        names = [str(t).upper() for t in (raw if isinstance(raw, list) else [raw])]
        if "NULL" in names:
            out["nullable"] = True
            names = [n for n in names if n != "NULL"]
        unknown = [n for n in names if n not in TYPES]
        if unknown:
            self.note(f"type {unknown}", path)
            names = [n for n in names if n in TYPES]
        if len(names) == 1:
            out["type"] = names[0]
        elif names:
            self.note(f"type list {names} (as anyOf)", path)
            out["anyOf"] = [{"type": n} for n in names]

    def properties(self, value: Any, kind: Any, out: dict[str, Any], path: str) -> None:
        if kind != "OBJECT":
            self.note("properties (not an object)", path)
            return
        if isinstance(value, dict) and value:
            out["properties"] = {
                str(k): self.node(v, f"{path}/properties/{k}") for k, v in value.items()
            }

    def enum(self, schema: dict[str, Any], out: dict[str, Any], path: str) -> None:
        values = [schema["const"]] if "const" in schema else _list(schema.get("enum"))
        if not values:
            return
        if None in values:
            out["nullable"] = True
            values = [v for v in values if v is not None]
        strings = all(isinstance(v, str) for v in values)
        if strings and out.get("type", "STRING") == "STRING" and values:
            out["type"], out["enum"] = "STRING", values
            return
        self.note("enum (not of strings; values in the description)", path)
        allowed = "Allowed values: " + ", ".join(_json(v) for v in values) + "."
        description = out.get("description")
        out["description"] = f"{description} {allowed}" if description else allowed

    def format(self, schema: dict[str, Any], out: dict[str, Any], path: str) -> None:
        fmt = schema.get("format")
        if fmt is None:
            return
        if fmt in FORMATS.get(str(out.get("type")), ()):
            out["format"] = fmt
        else:
            self.note(f"format {fmt!r}", path)

    def required(self, out: dict[str, Any], path: str) -> None:
        if "required" not in out:
            return
        given = _list(out.pop("required"))
        names = [n for n in given if n in out.get("properties", {})]
        if out.get("type") != "OBJECT":
            self.note("required (not an object)", path)
            return
        if len(names) != len(given):
            self.note(
                f"required names that are not properties {sorted(set(given) - set(names))}", path
            )
        if names:
            out["required"] = names


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- the full JSON Schema (parametersJsonSchema) -------------------------------------------
_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?(?![\d.])")
#: the first Gemini version that takes ``parametersJsonSchema`` (Google's docs: Gemini 2.5
#: and later take JSON Schema)
JSON_SCHEMA_FROM = (2, 5)


def json_schema_model(model: str) -> bool:
    """Whether ``model`` (``gemini-2.5-flash``, ``models/gemini-3-pro-preview``) takes
    ``parametersJsonSchema``: a Gemini version of 2.5 or later; a name with no version
    (an alias, another model) gets the Schema subset, which every model takes."""
    found = _VERSION.match(model.split("/")[-1])
    if found is None:
        return False
    return (int(found.group(1)), int(found.group(2) or 0)) >= JSON_SCHEMA_FROM


def check_json_parameters(name: str, declaration: dict[str, Any]) -> None:
    """Raise ``lower.invalid_tool_schema`` when a declaration's ``parametersJsonSchema`` is
    one Gemini refuses: both parameter fields, a top that is not an object, a parameter
    name outside ``[a-zA-Z_][a-zA-Z0-9_]{0,63}``."""
    schema = declaration["parametersJsonSchema"]
    if "parameters" in declaration:
        _bad(name, "", "parameters and parametersJsonSchema are mutually exclusive")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        _bad(name, "", "parametersJsonSchema must describe an object")
    for path, node in _nodes(schema, ""):
        for key in (node.get("properties") or {}) if isinstance(node, dict) else ():
            if not PARAMETER_NAME.fullmatch(str(key)):
                _bad(name, path, f"parameter name {key!r} must match {PARAMETER_NAME.pattern}")


# -- the check --------------------------------------------------------------------------
def check_parameters(name: str, parameters: Any) -> None:
    """Raise ``lower.invalid_tool_schema`` when function ``name``'s parameters leave the
    API's Schema subset (what the API answers 400 to)."""
    if not isinstance(parameters, dict):
        _bad(name, "", "parameters must be a Schema object")
    if str(parameters.get("type", "")).upper() != "OBJECT" or not parameters.get("properties"):
        _bad(name, "", "parameters must be an OBJECT with properties (omit them otherwise)")
    for path, node in _nodes(parameters, ""):
        _check_node(name, path, node)


def _nodes(schema: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, schema
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for key, sub in props.items():
            yield from _nodes(sub, f"{path}/properties/{key}")
    if "items" in schema:
        yield from _nodes(schema["items"], f"{path}/items")
    for i, sub in enumerate(_list(schema.get("anyOf"))):
        yield from _nodes(sub, f"{path}/anyOf/{i}")


def _check_node(name: str, path: str, node: Any) -> None:
    if not isinstance(node, dict):
        _bad(name, path, "a schema must be an object")
    unknown = sorted(set(node) - KEYWORDS)
    if unknown:
        _bad(name, path, f"keywords {unknown} are not in Gemini's Schema")
    kind = str(node["type"]).upper() if "type" in node else None
    if kind is not None and kind not in TYPES:
        _bad(name, path, f"type {node['type']!r} is not one of {sorted(TYPES)}")
    if "enum" in node and (kind not in (None, "STRING") or not _strings(node["enum"])):
        _bad(name, path, "enum is only allowed for STRING type, with string values")
    if "format" in node and node["format"] not in FORMATS.get(kind or "", ()):
        _bad(name, path, f"format {node['format']!r} is not supported for type {kind}")
    if kind != "OBJECT" and ("properties" in node or "required" in node):
        _bad(name, path, "properties and required are only allowed for OBJECT type")
    if kind == "OBJECT" and "properties" in node and not node["properties"]:
        _bad(name, path, "properties should be non-empty for OBJECT type")
    missing = set(_list(node.get("required"))) - set(node.get("properties") or {})
    if missing:
        _bad(name, path, f"required names {sorted(missing)} are not properties")
    for key in node.get("properties") or {}:
        if not PARAMETER_NAME.fullmatch(str(key)):
            _bad(name, path, f"parameter name {key!r} must match {PARAMETER_NAME.pattern}")
    if "items" in node and kind != "ARRAY":
        _bad(name, path, "items is only allowed for ARRAY type")


def _strings(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(v, str) for v in values)


def _bad(name: str, path: str, why: str) -> NoReturn:
    raise LoweringError(
        code="lower.invalid_tool_schema",
        message=f"function '{name}' parameters at {path or '/'}: {why}",
    )
