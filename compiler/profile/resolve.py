"""Layered profile resolution: built-in < preset < character < user < run (seed 1.2 and 6).

Internal: the API is :mod:`compiler.profile`.

Rules, applied to each layer's *explicitly set* fields:

- objects merge key by key, and a later layer's scalar (or ``null``) wins;
- lists are replaced by a later layer (``tools.allow``, ``context.include``, artifacts, ...),
  except ``tools.deny``, ``tools.requireApproval``, ``context.exclude`` and ``skills.deny``,
  which accumulate across layers, so no later layer can lift a deny;
- the user layer's ``tools.allow`` (when it sets one) is also a ceiling: no tool outside it
  is visible, whatever ``tools.mode`` or a later (run) layer's allow says
  (:attr:`ResolvedToolPolicy.user_allow`);
- ``model`` is a choice between two forms (``{mode, connectionRef, modelId}`` or
  ``{source, model}``): a layer that switches the form or the mode replaces it whole.

Before merging, a tool name written as its provider alias (``workspace_write_file``) in
``tools.allow``, ``deny``, ``requireApproval``, ``maxCallsPerTool`` or ``toolDescriptions`` is
rewritten to the dotted name, with a warning (``agent.profile_tool_alias``).

Every leaf of the merged profile records the layer and file that set it (its provenance).
Rules that relate fields run once, on the merged profile (:mod:`compiler.profile.checks`);
their diagnostics point at the file (and the JSON path inside it) of the layer that set the
offending field.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from compiler._records import record
from compiler.errors import Diagnostic
from compiler.profile.checks import check_merged
from compiler.profile.defaults import DEFAULT_AGENT_SYSTEM_PROMPT, DEFAULT_WRITER
from compiler.profile.models import (
    DEFAULT_PROFILE_ID,
    AgentProfile,
    Layer,
    ProfileValidationError,
    ToolPolicy,
    _Model,
    format_path,
    validate_model,
)
from compiler.profile.tool_catalogue import (
    canonical_tool_name,
    tool_matches,
    unmatched_allow_pattern,
    visible_tools,
)

__all__ = [
    "ACCUMULATING_LISTS",
    "Fragment",
    "ProvenanceEntry",
    "ResolvedAgentProfile",
    "ResolvedToolPolicy",
    "copy_profile",
    "fragment_from_model",
    "merge_layers",
]

_M = TypeVar("_M", bound=BaseModel)

ACCUMULATING_LISTS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("tools", "deny"),
        ("tools", "requireApproval"),
        ("context", "exclude"),
        ("skills", "deny"),
    }
)
"""Lists that accumulate across layers; every other list is replaced by a later layer."""


@record(frozen=True)
class Fragment:
    """One layer's contribution: its explicitly set fields (camelCase JSON) and origin.

    ``path`` is where the fragment sits inside ``file`` (``agent.profiles[0]``), so that a
    diagnostic can point into the file; ``layer`` lets validation apply per-layer limits.
    """

    layer: Layer
    data: dict[str, Any]
    file: str | None = None
    path: str = ""


def fragment_from_model(
    model: BaseModel, layer: Layer, *, file: str | None = None, path: str = ""
) -> Fragment:
    """A fragment of what ``model`` set explicitly (defaults are not part of a layer)."""
    return Fragment(
        layer=layer,
        data=model.model_dump(mode="json", by_alias=True, exclude_unset=True),
        file=file,
        path=path,
    )


class ProvenanceEntry(_Model):
    """Which layer, and which file, set a field (immutable: a copy of a profile shares it)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    layer: Layer
    file: str | None = None


class ResolvedToolPolicy(ToolPolicy):
    """The merged tool policy plus its concrete outcome.

    ``visible`` and ``approval_required`` are computed by
    :func:`compiler.profile.tool_catalogue.visible_tools`: over the known tools for a profile alone,
    over the known plus the run's own tools for a profile bound to a run
    (:meth:`ResolvedAgentProfile.with_run_tools`, which a compile does). ``user_allow`` is the
    user layer's own allow list (None when it sets none): nothing outside it is visible,
    whatever ``mode`` or a later layer says.
    """

    visible: list[str] = Field(default=[])
    approval_required: list[str] = Field(default=[])
    user_allow: list[str] | None = None


def _diagnostic_from_json(value: Any) -> Any:
    if isinstance(value, dict):
        return Diagnostic(
            code=value["code"],
            message=value["message"],
            severity=value.get("severity", "warning"),
            hint=value.get("hint"),
            path=value.get("path"),
            file=value.get("file"),
        )
    return value


class ResolvedAgentProfile(AgentProfile):
    """The one complete, checked profile a run consumes (``input/resolved_profile.json``)."""

    tools: ResolvedToolPolicy = Field(default_factory=ResolvedToolPolicy)
    enabled: bool = True
    provenance: dict[str, ProvenanceEntry] = Field(default_factory=dict)
    warnings: list[Diagnostic] = Field(default=[])

    @field_validator("warnings", mode="before")
    @classmethod
    def _warnings_from_json(cls, value: Any) -> Any:
        return [_diagnostic_from_json(v) for v in value] if isinstance(value, list) else value

    @field_serializer("warnings")
    def _warnings_to_json(self, value: list[Diagnostic]) -> list[dict[str, Any]]:
        return [d.to_json() for d in value]

    def effective_system_prompt(self) -> str:
        """The agent system prompt: the profile's own, or the built-in default when null."""
        return self.instructions.agent_system_prompt or DEFAULT_AGENT_SYSTEM_PROMPT

    def to_json(self) -> dict[str, Any]:
        """The camelCase JSON form."""
        return self.model_dump(mode="json", by_alias=True)

    def with_run_tools(self, run_tools: Iterable[str]) -> ResolvedAgentProfile:
        """This profile bound to a run: ``tools.visible`` and ``tools.approvalRequired``
        recomputed over the known tools plus the run's own ``run_tools`` (by
        :func:`~compiler.profile.tool_catalogue.visible_tools`, from the policy, never from the
        lists already here). An "allow pattern matches no known tool" warning is dropped when the
        pattern matches one of the run's tools."""
        names = list(dict.fromkeys(run_tools))
        result = visible_tools(self.tools, names)
        tools = self.tools.model_copy(
            update={
                "visible": list(result.visible),
                "approval_required": list(result.approval_required),
            }
        )
        warnings = [
            w
            for w in self.warnings
            if (pattern := unmatched_allow_pattern(w)) is None
            or not any(tool_matches(pattern, name) for name in names)
        ]
        return self.model_copy(update={"tools": tools, "warnings": warnings})


_SHARED: frozenset[type] = frozenset(
    {str, int, float, bool, type(None), Diagnostic, ProvenanceEntry}
)
"""Immutable values a copy of a profile shares with the original."""


def copy_profile(profile: ResolvedAgentProfile) -> ResolvedAgentProfile:
    """A deep copy of ``profile`` (what one changes, the other never sees), made by walking
    the models, lists and dicts a profile holds and sharing its immutable leaves: an order of
    magnitude cheaper than ``model_copy(deep=True)``, for a session handing out the profile it
    keeps turn after turn."""
    return _copied_model(profile)


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind in _SHARED:
        return value
    if kind is list:
        return [v if type(v) in _SHARED else _copied(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _SHARED else _copied(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        return _copied_model(value)
    return copy.deepcopy(value)


def _copied_model(model: _M) -> _M:
    """A copy of ``model`` as pydantic's own ``__copy__`` makes one (a new instance with its
    field values, extra values, fields-set and private values), its values copied too."""
    cls = type(model)
    new = cls.__new__(cls)
    fields = {k: v if type(v) in _SHARED else _copied(v) for k, v in model.__dict__.items()}
    extra, private = model.__pydantic_extra__, getattr(model, "__pydantic_private__", None)
    object.__setattr__(new, "__dict__", fields)
    object.__setattr__(new, "__pydantic_extra__", None if extra is None else _copied(extra))
    object.__setattr__(new, "__pydantic_fields_set__", set(model.__pydantic_fields_set__))
    object.__setattr__(new, "__pydantic_private__", None if private is None else _copied(private))
    return new


# --------------------------------------------------------------------------- merging


_PATH_TOKEN = re.compile(r'\.?[^.\[]+|\[\d+\]|\["[^"]*"\]')


@record(frozen=True)
class _Source:
    layer: Layer
    file: str | None
    path: str  # the fragment's path inside its file


class _Merger:
    """Merges fragments into one JSON object and records the source of every leaf."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.sources: dict[str, _Source] = {}

    @classmethod
    def over_builtin(cls) -> _Merger:
        """A merger holding the built-in defaults (their merge is made once and copied)."""
        data, sources = _builtin_merge()
        merger = cls()
        merger.data, merger.sources = _json_copy(data), dict(sources)
        return merger

    def add(self, fragment: Fragment) -> None:
        src = _Source(fragment.layer, fragment.file, fragment.path)
        self._merge(self.data, fragment.data, (), src)

    def set(self, key: str, value: Any, src: _Source) -> None:
        self.data[key] = value
        self._record((key,), value, src)

    def _merge(
        self, base: dict[str, Any], over: dict[str, Any], path: tuple[str, ...], src: _Source
    ) -> None:
        for key, value in over.items():
            here = (*path, key)
            current = base.get(key)
            if here in ACCUMULATING_LISTS and isinstance(current, list):
                start = len(current)
                added = [v for v in value if v not in current]
                base[key] = current + added
                name = format_path(here)
                self.sources[name] = src
                for offset in range(len(added)):
                    self.sources[f"{name}[{start + offset}]"] = src
            elif (
                isinstance(value, dict)
                and isinstance(current, dict)
                and not (here == ("model",) and _model_switches(current, value))
            ):
                self._merge(current, value, here, src)
            else:
                self._forget(here, current)
                base[key] = _json_copy(value)
                self._record(here, value, src)

    def _forget(self, path: tuple[str, ...], current: Any) -> None:
        """Drop the sources of ``path`` and below (its value ``current`` is replaced)."""
        name = format_path(path)
        if not (isinstance(current, dict | list) and current):
            # nothing below a scalar or an empty value was recorded (replacing one by a
            # non-empty value forgot what was below it)
            self.sources.pop(name, None)
            return
        for key in [k for k in self.sources if k == name or k.startswith((name + ".", name + "["))]:
            del self.sources[key]

    def _record(self, path: tuple[str, ...], value: Any, src: _Source) -> None:
        if path in ACCUMULATING_LISTS and isinstance(value, list):
            name = format_path(path)
            for index in range(len(value)):
                self.sources[f"{name}[{index}]"] = src
        if isinstance(value, dict) and value:
            for key, item in value.items():
                self._record((*path, key), item, src)
        else:
            self.sources[format_path(path)] = src

    def set_source(self, path: str, src: _Source) -> None:
        """Record ``src`` as the source of the leaf at ``path``."""
        self.sources[path] = src

    def source_of(self, path: str) -> _Source | None:
        """The source of ``path``: itself, its nearest recorded ancestor, or a descendant."""
        tokens = _PATH_TOKEN.findall(path)
        while tokens:
            probe = "".join(tokens).lstrip(".")
            if probe in self.sources:
                return self.sources[probe]
            tokens.pop()
        below = [s for k, s in self.sources.items() if k.startswith((path + ".", path + "["))]
        return below[-1] if below else None


@functools.cache
def _builtin_merge() -> tuple[dict[str, Any], dict[str, _Source]]:
    """The built-in defaults merged into an empty merger: a constant, made once (a merger
    starts from a copy, :meth:`_Merger.over_builtin`)."""
    merger = _Merger()
    merger.add(_builtin_fragment())
    return merger.data, merger.sources


def _json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists and immutable scalars); anything else is
    copied by :func:`copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {k: _json_copy(v) for k, v in value.items()}
    if kind is list:
        return [_json_copy(v) for v in value]
    if kind in _SHARED:
        return value
    return copy.deepcopy(value)


def _model_switches(current: dict[str, Any], new: dict[str, Any]) -> bool:
    def form(d: dict[str, Any]) -> str:
        direct = d.get("source") is not None or d.get("model") is not None
        return "direct" if direct else "binding"

    if form(current) != form(new):
        return True
    return new.get("mode") is not None and new["mode"] != current.get("mode")


@functools.cache
def _builtin_fragment() -> Fragment:
    """The built-in default-writer as a fragment: a constant, made once (merging reads a
    fragment's data and never changes it)."""
    full = AgentProfile.model_validate(DEFAULT_WRITER)
    return Fragment(layer="builtin", data=full.model_dump(mode="json", by_alias=True))


@functools.cache
def _builtin_profile() -> ResolvedAgentProfile:
    """The built-in default-writer resolved with no other layer: a constant, made once and
    never handed out (:func:`merge_layers` gives a copy)."""
    return _merged([], profile_id=DEFAULT_PROFILE_ID, id_source=None, enabled=None)


def merge_layers(
    fragments: list[Fragment],
    *,
    profile_id: str,
    id_source: Fragment | None = None,
    enabled: list[tuple[bool, Fragment]] | None = None,
) -> ResolvedAgentProfile:
    """Merge ``fragments`` (lowest precedence first) over the built-in defaults and validate.

    ``id_source`` is the fragment that selected ``profile_id`` (for provenance); ``enabled``
    lists the agent schemas' explicit ``enabled`` flags, lowest precedence first. Raises
    :class:`ProfileValidationError` with every error found in the merged profile.
    """
    if not fragments and not enabled and id_source is None and profile_id == DEFAULT_PROFILE_ID:
        return copy_profile(_builtin_profile())  # no layer but the built-in: a constant
    return _merged(fragments, profile_id=profile_id, id_source=id_source, enabled=enabled)


def _merged(
    fragments: list[Fragment],
    *,
    profile_id: str,
    id_source: Fragment | None,
    enabled: list[tuple[bool, Fragment]] | None,
) -> ResolvedAgentProfile:
    merger = _Merger.over_builtin()
    builtin = _builtin_fragment()
    alias_warnings: list[Diagnostic] = []
    user_allow: tuple[list[str], _Source] | None = None
    for fragment in fragments:
        data, found = _canonical_tool_names(fragment)
        alias_warnings += found
        data = {k: v for k, v in data.items() if k != "id"}
        merger.add(replace(fragment, data=data))
        allow = data.get("tools", {}).get("allow")
        if fragment.layer == "user" and isinstance(allow, list):
            user_allow = (list(allow), _Source(fragment.layer, fragment.file, fragment.path))
    chosen = id_source or builtin
    merger.set("id", profile_id, _Source(chosen.layer, chosen.file, chosen.path))

    def locate(diag: Diagnostic) -> Diagnostic:
        src = merger.source_of(diag.path or "")
        if src is None:
            return diag
        path = diag.path or ""
        full = f"{src.path}.{path}" if src.path and path else src.path or path
        return replace(diag, file=src.file, path=full or None)

    try:
        profile = validate_model(AgentProfile, merger.data)
    except ProfileValidationError as exc:
        raise ProfileValidationError([locate(d) for d in exc.diagnostics]) from None

    errors, warnings, tools = check_merged(profile, user_allow[0] if user_allow else None)
    if errors:
        raise ProfileValidationError([locate(d) for d in errors])

    flag, flag_src = True, _Source("builtin", None, "")
    for value, fragment in enabled or []:
        flag, flag_src = value, _Source(fragment.layer, fragment.file, fragment.path)
    merger.set("enabled", flag, flag_src)

    allowed = user_allow[0] if user_allow else None
    if user_allow is not None:
        merger.set_source("tools.userAllow", user_allow[1])
    data = profile.model_dump(mode="json", by_alias=True)
    data["tools"].update(visible=[], approvalRequired=[], userAllow=allowed)
    data["enabled"] = flag
    _fill_defaults(merger, data, ())
    resolved = _resolved(profile, tools.visible, tools.approval_required, allowed, flag)
    resolved.provenance = {
        key: ProvenanceEntry.model_construct(layer=src.layer, file=src.file)
        for key, src in sorted(merger.sources.items())
    }
    resolved.warnings = [*alias_warnings, *(locate(w) for w in warnings)]
    return resolved


def _resolved(
    profile: AgentProfile,
    visible: Iterable[str],
    approval: Iterable[str],
    user_allow: list[str] | None,
    enabled: bool,
) -> ResolvedAgentProfile:
    """The checked, merged ``profile`` as a resolved one, with its computed tool outcome:
    made from the validated values (every field set, as a validation of the profile's full
    dump sets them), not validated a second time."""
    policy = profile.tools
    tools = ResolvedToolPolicy.model_construct(
        None,
        **policy.__dict__,
        visible=list(visible),
        approval_required=list(approval),
        user_allow=None if user_allow is None else list(user_allow),
    )
    values = {**profile.__dict__, "tools": tools, "enabled": enabled}
    resolved = ResolvedAgentProfile.model_construct(None, **values)
    _every_field_set(resolved)
    return resolved


def _every_field_set(value: Any) -> None:
    """Mark every field of ``value``'s models as set, as validating a full dump does."""
    if isinstance(value, BaseModel):
        object.__setattr__(value, "__pydantic_fields_set__", set(type(value).model_fields))
        for item in value.__dict__.values():
            _every_field_set(item)
    elif isinstance(value, list):
        for item in value:
            _every_field_set(item)
    elif isinstance(value, dict):
        for item in value.values():
            _every_field_set(item)


_TOOL_LISTS = ("allow", "deny", "requireApproval")
_TOOL_MAPS = ("maxCallsPerTool", "toolDescriptions")


def _canonical_tool_names(fragment: Fragment) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The fragment's data with every provider alias of a known tool in its tool lists and
    tool-keyed maps written as the dotted name, and a warning for each one.

    The one place a profile's tool names are normalised; matching compares provider names
    anyway (:func:`~compiler.profile.tool_catalogue.tool_matches`), so this makes the
    resolved profile say what it means and lets ``maxCallsPerTool`` / ``toolDescriptions``
    keys (exact names) reach their tool. Two keys for one tool in one map: the smaller
    budget, the dotted name's description.
    """
    tools = fragment.data.get("tools")
    if not isinstance(tools, dict):
        return fragment.data, []
    base = f"{fragment.path}.tools" if fragment.path else "tools"
    warnings: list[Diagnostic] = []

    def note(alias: str, name: str, at: str) -> None:
        warnings.append(
            Diagnostic(
                code="agent.profile_tool_alias",
                message=f"'{alias}' is the provider alias of '{name}' and is read as '{name}'",
                severity="warning",
                hint=f"write the dotted name '{name}'",
                path=at,
                file=fragment.file,
            )
        )

    out = dict(tools)
    for key in _TOOL_LISTS:
        entries = tools.get(key)
        if isinstance(entries, list):
            out[key] = []
            for index, entry in enumerate(entries):
                name = canonical_tool_name(entry)
                if name != entry:
                    note(entry, name, f"{base}.{key}[{index}]")
                out[key].append(name)
    for key in _TOOL_MAPS:
        entries = tools.get(key)
        if isinstance(entries, dict):
            mapped: dict[str, Any] = {}
            for entry, value in entries.items():
                name = canonical_tool_name(entry)
                if name != entry:
                    note(entry, name, format_path((key, entry), base))
                if name not in mapped or (key == "toolDescriptions" and name == entry):
                    mapped[name] = value
                elif key == "maxCallsPerTool":
                    mapped[name] = min(mapped[name], value)
            out[key] = mapped
    return {**fragment.data, "tools": out}, warnings


def _fill_defaults(
    merger: _Merger, value: Any, path: tuple[str, ...], name: str = "", parent: str = ""
) -> None:
    """Give a leaf no layer set (a default inside a replaced object) its object's source
    (``name``: ``path`` formatted, ``parent``: its parent's)."""
    if path in (("tools", "visible"), ("tools", "approvalRequired")):
        return
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _fill_defaults(merger, item, (*path, key), format_path((key,), name), name)
        return
    if name in merger.sources:
        return
    src = merger.source_of(name) or merger.source_of(parent)
    merger.sources[name] = src or _Source("builtin", None, "")
