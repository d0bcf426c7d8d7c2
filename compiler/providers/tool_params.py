"""Tool parameter schemas a provider refuses as written, rewritten reversibly, and the table
that maps the model's call arguments back.

Internal: the dialects in :mod:`compiler.providers` call it; the table is public as
:attr:`compiler._driver.api.CompileResult.tool_arguments` (and ``argumentNames`` in ``apc compile
--emit tools`` and ``apc serve``'s answer).

Two rewrites, each reported as ``lower.tool_schema_rewritten`` (an error when strict):

- **wrap**: parameters whose top is not an object (``{"type": "string"}``: OpenAI answers
  "parameters must be an object", Anthropic refuses a non-object ``input_schema``) are sent
  as ``{"type": "object", "properties": {"value": <schema>}, "required": ["value"]}``;
  the model's ``{"value": x}`` means the argument ``x``. Every dialect wraps.
- **rename**: property keys outside the provider's rule (:data:`ANTHROPIC_KEYS`
  ``[a-zA-Z0-9_.-]{1,64}``; :data:`GEMINI_KEYS`, a letter or ``_`` then
  ``[a-zA-Z0-9_]``, at most 64) get a name that fits: every other character becomes ``_``
  (Gemini: a leading ``_`` when the first is not a letter or ``_``), cut to 64; a name
  already taken at that place (by a key that fits, kept as it is, or an earlier rename, in
  the schema's order) gets ``_2``, ``_3``... Deterministic (the same schema, the same
  names) and collision-free. Nested properties are renamed too (under ``properties``,
  ``items``, ``anyOf``/``oneOf``/``allOf`` branches, which share one set of names per place,
  and ``$defs``/``definitions``), ``required`` and ``propertyOrdering`` follow, and a
  renamed property without a ``title`` gets its original key as ``title`` (the model still
  reads the name it had). OpenAI takes any key: nothing is renamed there.

The table (:class:`ToolArguments`): ``names`` maps each sent argument path to its original
path, as JSON Pointers (RFC 6901) into the arguments, ``*`` standing for every item of an
array (no sent key is ``*``): ``{"/filter_bundleId_": "/filter[bundleId]"}``. For a wrapped
schema ``"/value"`` maps to ``""``, the whole argument. :func:`restore_arguments` applies
it; :func:`sent_arguments` is the way back (a history tool call written with the original
keys is sent under the names the model was offered). A reference (``$ref``) into a renamed
definition is followed once per path: a recursive definition's deeper levels are not in the
table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from typing import Any

from compiler._base.frame import ToolSpec
from compiler._records import record
from compiler.errors import Diagnostic, LoweringError
from compiler.providers.dialect import LoweringOptions
from compiler.providers.schema import object_parameters

#: Anthropic's rule for input_schema property keys (its 400 quotes it)
ANTHROPIC_KEYS = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
#: Gemini's rule for parameter names (google.genai.types.FunctionDeclaration.parameters)
GEMINI_KEYS = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}")
#: the property a non-object schema is wrapped under
WRAP_KEY = "value"
MAX_KEY = 64
_BRANCHES = ("anyOf", "oneOf", "allOf")


@record(frozen=True)
class ToolArguments:
    """How a tool's call arguments, in the names sent, map back to its own (see the module
    docstring): ``names`` sent pointer -> original pointer; ``wrapped``: the schema was not
    an object and the argument is the value under ``"value"``."""

    names: Mapping[str, str] = field(default_factory=dict)
    wrapped: bool = False

    def __bool__(self) -> bool:
        return self.wrapped or bool(self.names)

    def as_json(self) -> dict[str, str]:
        """The ``argumentNames`` JSON form: ``names`` (with ``"/value": ""`` when wrapped)."""
        return dict(self.names)

    def restore(self, arguments: Any) -> Any:
        """:func:`restore_arguments` with this table."""
        return restore_arguments(arguments, self)

    def sent(self, arguments: Any) -> Any:
        """:func:`sent_arguments` with this table."""
        return sent_arguments(arguments, self)


NO_CHANGE = ToolArguments()


def is_object_schema(schema: Any) -> bool:
    """Whether ``schema`` describes an object (``type`` object, or no ``type`` at all: the
    lowering makes such a schema an object)."""
    return isinstance(schema, dict) and schema.get("type", "object") == "object"


def wrapped(schema: dict[str, Any]) -> dict[str, Any]:
    """A non-object ``schema`` as the one required property ``value`` of an object."""
    return {"type": "object", "properties": {WRAP_KEY: schema}, "required": [WRAP_KEY]}


# -- renaming -----------------------------------------------------------------------------
def key_fixer(rule: re.Pattern[str]) -> Callable[[str], str]:
    """The rename of one key under ``rule`` (before collisions are settled)."""
    gemini = rule is GEMINI_KEYS
    allowed = re.compile(r"[^a-zA-Z0-9_]" if gemini else r"[^a-zA-Z0-9_.-]")

    def fix(key: str) -> str:
        name = allowed.sub("_", key)
        if gemini and not re.match(r"[a-zA-Z_]", name):
            name = "_" + name
        return name[:MAX_KEY] or "_"

    return fix


def renamed(schema: dict[str, Any], rule: re.Pattern[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """``schema`` with every property key ``rule`` refuses renamed, and the map of sent
    pointer -> original pointer (empty: nothing renamed, ``schema`` itself returned)."""
    if not any(not rule.fullmatch(k) for k in _all_keys(schema, 0)):
        return schema, {}
    renamer = _Renamer(schema, rule)
    out = renamer.place(schema, "", "")
    for defs in ("$defs", "definitions"):
        if isinstance(out.get(defs), dict):
            out[defs] = {k: renamer.place(v, None, None) for k, v in out[defs].items()}
    return out, renamer.names


def _all_keys(schema: Any, depth: int) -> Iterator[str]:
    """Every property key anywhere in ``schema``."""
    if depth > 64:
        return
    if isinstance(schema, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            yield from props
        for value in schema.values():
            yield from _all_keys(value, depth + 1)
    elif isinstance(schema, list):
        for value in schema:
            yield from _all_keys(value, depth + 1)


class _Renamer:
    """One schema's renaming: the names it made (sent pointer -> original pointer)."""

    def __init__(self, root: dict[str, Any], rule: re.Pattern[str]) -> None:
        self.rule, self.fix = rule, key_fixer(rule)
        defs = {**_dict(root.get("definitions")), **_dict(root.get("$defs"))}
        self.defs: dict[str, Any] = defs
        self.names: dict[str, str] = {}
        self.following: list[str] = []
        #: every key at each place (original pointer), all branches together: the places
        #: ``anyOf`` branches give one argument (their items, their properties' schemas)
        #: share one set of names, or a sent name would map back to two keys
        self.keys_at: dict[str, list[str]] = {}
        self.names_of: dict[str, dict[str, str]] = {}
        self.collect(root, "")

    def collect(self, schema: Any, original: str, depth: int = 0) -> None:
        """Record the keys at ``original`` and below (as :meth:`place` walks them)."""
        if not isinstance(schema, dict) or depth > 64:
            return
        for node in _branches(schema):
            props = _dict(node.get("properties"))
            self.keys_at.setdefault(original, []).extend(props)
            for key, sub in props.items():
                self.collect(sub, f"{original}/{_escape(str(key))}", depth + 1)
            if "items" in node:
                self.collect(node["items"], f"{original}/*", depth + 1)

    def names_at(self, nodes: list[dict[str, Any]], original: str | None) -> dict[str, str]:
        """original -> sent for every key of the ``nodes`` that share one place (at the
        pointer ``original``: every key found there, the same names each time)."""
        shared = original is not None and not self.following and original in self.keys_at
        if shared and original in self.names_of:
            return self.names_of[str(original)]
        found = self.keys_at[str(original)] if shared else []
        keys = list(
            dict.fromkeys([*found, *(k for n in nodes for k in _dict(n.get("properties")))])
        )
        taken = {k for k in keys if self.rule.fullmatch(k)}
        out: dict[str, str] = {}
        for key in keys:
            if key in taken:
                continue
            base, name, n = self.fix(key), self.fix(key), 1
            while name in taken:
                n += 1
                name = f"{base[: MAX_KEY - len(str(n)) - 1]}_{n}"
            taken.add(name)
            out[key] = name
        if shared:
            self.names_of[str(original)] = out
        return out

    def place(self, schema: Any, sent: str | None, original: str | None) -> Any:
        """``schema`` (one place of the arguments) renamed; ``sent``/``original``: its
        pointers (None: a definition, recorded where it is referenced)."""
        if not isinstance(schema, dict):
            return schema
        nodes = list(_branches(schema))
        names = self.names_at(nodes, original)
        self.follow_refs(nodes, names, sent, original)
        return self.node(schema, names, sent, original)

    def node(
        self, schema: dict[str, Any], names: dict[str, str], sent: str | None, orig: str | None
    ) -> dict[str, Any]:
        out = dict(schema)
        props = schema.get("properties")
        if isinstance(props, dict):
            new: dict[str, Any] = {}
            for key, sub in props.items():
                name: str = names.get(str(key), str(key))
                s = None if sent is None else f"{sent}/{_escape(name)}"
                o = None if orig is None else f"{orig}/{_escape(key)}"
                if s is not None and o is not None and name != key:
                    self.names[s] = o
                sub = self.place(sub, s, o)
                if name != key and isinstance(sub, dict) and "title" not in sub:
                    sub = {"title": key, **sub}
                new[name] = sub
            out["properties"] = new
        for listed in ("required", "propertyOrdering"):
            if isinstance(schema.get(listed), list):
                out[listed] = [names.get(k, k) if isinstance(k, str) else k for k in schema[listed]]
        if "items" in schema:
            s = None if sent is None else f"{sent}/*"
            o = None if orig is None else f"{orig}/*"
            out["items"] = self.place(schema["items"], s, o)
        for branch in _BRANCHES:
            if isinstance(schema.get(branch), list):
                out[branch] = [
                    self.node(b, names, sent, orig) if isinstance(b, dict) else b
                    for b in schema[branch]
                ]
        return out

    def follow_refs(
        self, nodes: list[dict[str, Any]], names: dict[str, str], sent: str | None, orig: str | None
    ) -> None:
        """Record the names a referenced definition makes at this place (once per path)."""
        if sent is None or orig is None:
            return
        for node in nodes:
            ref = node.get("$ref")
            target = ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""
            if target not in self.defs or target in self.following:
                continue
            self.following.append(target)
            try:
                self.place(self.defs[target], sent, orig)
            finally:
                self.following.pop()


def _branches(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``schema`` and its ``anyOf``/``oneOf``/``allOf`` branches (one place's nodes)."""
    yield schema
    for branch in _BRANCHES:
        for sub in schema.get(branch) or []:
            if isinstance(sub, dict):
                yield from _branches(sub)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


# -- the table, applied -------------------------------------------------------------------
def restore_arguments(arguments: Any, table: ToolArguments) -> Any:
    """The model's ``arguments`` (in the names sent) under the tool's own names; for a
    wrapped schema, the value under ``"value"``."""
    if not table:
        return arguments
    back = {s: _unescape(o.rsplit("/", 1)[-1]) for s, o in table.names.items() if o}
    if not table.wrapped:
        return _renamed_value(arguments, "", back)
    if not isinstance(arguments, dict):
        return arguments
    inner = f"/{WRAP_KEY}"
    back = {s.removeprefix(inner): o for s, o in back.items() if s != inner}
    return _renamed_value(arguments.get(WRAP_KEY), "", back)


def sent_arguments(arguments: Any, table: ToolArguments) -> Any:
    """The way back: ``arguments`` in the tool's own names, under the names sent (for a
    wrapped schema, the argument under ``"value"``)."""
    if not table:
        return arguments
    forward = {o: _unescape(s.rsplit("/", 1)[-1]) for s, o in table.names.items() if o}
    out = _renamed_value(arguments, "", forward)
    return {WRAP_KEY: out} if table.wrapped else out


def _renamed_value(value: Any, pointer: str, names: dict[str, str]) -> Any:
    """``value`` with each key whose pointer (from the root, in the names ``value`` has)
    ``names`` lists renamed to what it says."""
    if not names:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            here = f"{pointer}/{_escape(str(key))}"
            new_key: str = names.get(here, str(key))
            out[new_key] = _renamed_value(sub, here, names)
        return out
    if isinstance(value, list):
        return [_renamed_value(v, f"{pointer}/*", names) for v in value]
    return value


# -- a tool as sent ---------------------------------------------------------------------------
def sent_parameters(
    parameters: Any, rule: re.Pattern[str] | None
) -> tuple[dict[str, Any], ToolArguments]:
    """``parameters`` (an object at the top already, or not an object at all) as a
    provider whose property keys follow ``rule`` (None: any key) takes them, and the table
    back: wrapped when not an object, keys renamed."""
    params: dict[str, Any] = parameters if isinstance(parameters, dict) else {}
    wrap = not is_object_schema(params)
    if wrap:
        params = wrapped(params)
    names: dict[str, str] = {}
    if rule is not None:
        params, names = renamed(params, rule)
    if wrap:
        inner = f"/{WRAP_KEY}"
        names = {inner: "", **{s: o.removeprefix(inner) for s, o in names.items()}}
    return params, ToolArguments(names, wrap) if (wrap or names) else NO_CHANGE


def sent_tool(tool: ToolSpec, rule: re.Pattern[str] | None) -> tuple[ToolSpec, ToolArguments]:
    """``tool`` as the dialect sends it (see :func:`sent_parameters`; a combinator at the
    top merged first, :func:`compiler.providers.schema.object_parameters`) and its table."""
    given = tool["parameters"] if isinstance(tool["parameters"], dict) else {}
    params, _ = object_parameters(given)
    params, table = sent_parameters(params, rule)
    return ({**tool, "parameters": params} if params is not given else tool), table


def rewrites(tool: str, table: ToolArguments) -> str:
    """What :func:`sent_parameters` changed of ``tool``, in words."""
    wrap = 'parameters that are not an object, wrapped as {"value": ...}'
    parts = [wrap] if table.wrapped else []
    renamed_keys = [f"{o or '/'} as {s}" for s, o in table.names.items() if o]
    if renamed_keys:
        parts.append("property keys renamed: " + ", ".join(renamed_keys))
    return f"{tool}: {'; '.join(parts)}"


def report_rewrites(
    dialect: str,
    changed: list[str],
    options: LoweringOptions,
    report: list[Diagnostic] | None,
) -> None:
    """``lower.tool_schema_rewritten``: a warning naming each rewrite, an error when strict."""
    if not changed:
        return
    message = f"{dialect} refuses tool parameters as written ({' | '.join(changed)})"
    hint = (
        "map the model's call arguments back with the compile result's tool_arguments "
        "(argumentNames), or give parameters that are an object with keys the provider takes"
    )
    if options.strict:
        raise LoweringError(code="lower.tool_schema_rewritten", message=message, hint=hint)
    if report is not None:
        report.append(
            Diagnostic(
                code="lower.tool_schema_rewritten", message=message, severity="warning", hint=hint
            )
        )
