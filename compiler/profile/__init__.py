"""Agent profiles: the schema, layered resolution, the built-in default-writer, the registry.

The entry point is :func:`resolve_profile` (or :func:`resolve_from_args` for a command that
called :func:`add_profile_arguments`). It returns one complete, checked
:class:`ResolvedAgentProfile`.

Which profile is resolved: ``profile_id`` (``--profile``; blank means ``default-writer``),
else the ``id`` of the run fragment, else that of the user fragment, else the character
card's ``defaultProfile``, else the preset's, else ``default-writer``. ``--profile`` and a
fragment's ``id`` must agree. The chosen id must be defined by the preset, the character,
the user's registry, a fragment that names it, or be ``default-writer``; otherwise
``agent.profile_not_found``.

Layers for that id, lowest precedence first: built-in default-writer, the preset's profile
with that id, the character's, the registry file ``<data-root>/.../profiles/<id>.json``, the
user fragment (``--user``), the run fragment (``--run``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from compiler._records import record
from compiler.errors import Diagnostic, ProfileError, did_you_mean
from compiler.inputs.read import Parsed
from compiler.profile.defaults import DEFAULT_AGENT_SYSTEM_PROMPT, DEFAULT_WRITER, default_writer
from compiler.profile.embedded import (
    EmbeddedSchema,
    TavernProfiles,
    load_json,
    schema_from_card,
    schema_from_preset,
)
from compiler.profile.models import (
    DEFAULT_PROFILE_ID,
    AgentProfile,
    AgentSchema,
    ContextPolicy,
    InstructionsPolicy,
    Layer,
    MessageExtraTarget,
    ModelPolicy,
    ModelRetryPolicy,
    OutputArtifact,
    OutputPolicy,
    PlanNode,
    PlanPolicy,
    PresetPolicy,
    PresetRef,
    ProfileFragment,
    ProfileValidationError,
    RunPolicy,
    SkillPolicy,
    SummaryPolicy,
    SwitchPolicy,
    ToolPolicy,
    WorkspacePolicy,
    validate_model,
)
from compiler.profile.platform import PlatformPolicy, reallow_warnings
from compiler.profile.registry import (
    PROFILES_DIR,
    ProfileRegistry,
    normalize_profile_id,
    write_resolved_profile,
)
from compiler.profile.resolve import (
    Fragment,
    ProvenanceEntry,
    ResolvedAgentProfile,
    ResolvedToolPolicy,
    fragment_from_model,
    merge_layers,
)

__all__ = [
    "DEFAULT_AGENT_SYSTEM_PROMPT",
    "DEFAULT_PROFILE_ID",
    "DEFAULT_WRITER",
    "PROFILES_DIR",
    "AgentProfile",
    "AgentSchema",
    "ContextPolicy",
    "Fragment",
    "InstructionsPolicy",
    "MessageExtraTarget",
    "ModelPolicy",
    "ModelRetryPolicy",
    "OutputArtifact",
    "OutputPolicy",
    "PlanNode",
    "PlanPolicy",
    "PlatformPolicy",
    "PresetPolicy",
    "PresetRef",
    "ProfileFragment",
    "ProfileLayers",
    "ProfileRegistry",
    "ProfileValidationError",
    "ProvenanceEntry",
    "ResolvedAgentProfile",
    "ResolvedToolPolicy",
    "RunPolicy",
    "SkillPolicy",
    "SummaryPolicy",
    "SwitchPolicy",
    "TavernProfiles",
    "ToolPolicy",
    "WorkspacePolicy",
    "add_profile_arguments",
    "default_writer",
    "layers_from_args",
    "resolve_from_args",
    "resolve_profile",
    "write_resolved_profile",
]

Source = str | Path | dict[str, Any] | Parsed | None
"""A layer: a path, parsed JSON, or parsed JSON with its file (:class:`Parsed`)."""


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the profile layer options (``--profile``, ``--preset``, ... ``--run-dir``)."""
    group = parser.add_argument_group("agent profile")
    group.add_argument("--profile", metavar="ID", help="profile id (blank: default-writer)")
    group.add_argument("--preset", metavar="FILE", help="preset JSON with an agent schema")
    group.add_argument(
        "--character", metavar="FILE", help="character card (JSON or PNG) with an agent schema"
    )
    group.add_argument("--user", metavar="FILE", help="user profile override fragment (JSON)")
    group.add_argument("--run", metavar="FILE", help="per-run override fragment (JSON)")
    group.add_argument(
        "--data-root", metavar="DIR", help="data root holding _tauritavern/agent-profiles/"
    )
    group.add_argument(
        "--run-dir", metavar="DIR", help="write input/resolved_profile.json into this run dir"
    )
    group.add_argument(
        "--platform",
        metavar="FILE",
        help='platform policy JSON, e.g. {"disabledProviders": ["openrouter"]}',
    )


@record(frozen=True)
class ProfileLayers:
    """The profile layers a caller names (see :func:`resolve_profile`). ``compile()`` takes
    them and adds the preset and the card it has already read, unless ``preset`` /
    ``character`` name others, so that no input is read twice."""

    profile_id: str | None = None
    preset: Source = None
    character: Source = None
    user: Source | BaseModel = None
    run: Source | BaseModel = None
    data_root: str | Path | None = None
    platform: PlatformPolicy | None = None

    def resolve(self) -> ResolvedAgentProfile:
        """:func:`resolve_profile` of these layers."""
        return resolve_profile(
            profile_id=self.profile_id,
            preset=self.preset,
            character=self.character,
            user=self.user,
            run=self.run,
            data_root=self.data_root,
            platform=self.platform,
        )


def layers_from_args(args: argparse.Namespace) -> ProfileLayers:
    """The layers named by the options :func:`add_profile_arguments` added."""
    platform = getattr(args, "platform", None)
    return ProfileLayers(
        profile_id=getattr(args, "profile", None),
        preset=getattr(args, "preset", None),
        character=getattr(args, "character", None),
        user=getattr(args, "user", None),
        run=getattr(args, "run", None),
        data_root=Path(args.data_root) if getattr(args, "data_root", None) else None,
        platform=PlatformPolicy.from_json(load_json(platform), str(platform)) if platform else None,
    )


def resolve_from_args(args: argparse.Namespace) -> ResolvedAgentProfile:
    """Resolve from the options :func:`add_profile_arguments` added; write ``--run-dir``."""
    resolved = layers_from_args(args).resolve()
    if getattr(args, "run_dir", None):
        write_resolved_profile(args.run_dir, resolved)
    return resolved


def _preset_schema(preset: Source, platform: PlatformPolicy | None) -> EmbeddedSchema | None:
    if preset is None:
        return None
    if isinstance(preset, Parsed):
        return schema_from_preset(preset.data, preset.file, platform)
    if isinstance(preset, dict):
        return schema_from_preset(preset, "<preset>", platform)
    return schema_from_preset(load_json(preset), str(preset), platform)


def _character_schema(character: Source, platform: PlatformPolicy | None) -> EmbeddedSchema | None:
    if character is None:
        return None
    if isinstance(character, Parsed):
        return schema_from_card(character.data, character.file, platform)
    if isinstance(character, dict):
        return schema_from_card(character, "<character>", platform)
    # the one card reader (JSON, PNG, .charx), with the same errors through every path
    from compiler.inputs.cards import read_card_json

    card, _ = read_card_json(character)
    return schema_from_card(card, str(character), platform)


def _fragment(source: Source | BaseModel, layer: Layer) -> tuple[Fragment, str | None] | None:
    """The layer fragment and its explicit ``id`` (if any)."""
    if source is None:
        return None
    if isinstance(source, BaseModel):
        frag = fragment_from_model(source, layer, file=f"<{layer}>")
    elif isinstance(source, Parsed):
        model = validate_model(ProfileFragment, source.data, file=source.file, partial=True)
        frag = fragment_from_model(model, layer, file=source.file)
    else:
        file = f"<{layer}>" if isinstance(source, dict) else str(source)
        data = source if isinstance(source, dict) else load_json(source)
        model = validate_model(ProfileFragment, data, file=file, partial=True)
        frag = fragment_from_model(model, layer, file=file)
    fid = frag.data.get("id")
    return frag, fid if isinstance(fid, str) else None


def resolve_profile(
    *,
    profile_id: str | None = None,
    preset: Source = None,
    character: Source = None,
    user: Source | BaseModel = None,
    run: Source | BaseModel = None,
    data_root: str | Path | None = None,
    platform: PlatformPolicy | None = None,
) -> ResolvedAgentProfile:
    """Resolve one complete, checked profile from its layers (see the module docstring).

    ``preset`` is a preset JSON (path or parsed), ``character`` a card (JSON/PNG path or
    parsed JSON), ``user`` and ``run`` profile fragments (path, parsed JSON or a model).
    """
    preset_schema = _preset_schema(preset, platform)
    char_schema = _character_schema(character, platform)
    user_frag = _fragment(user, "user")
    run_frag = _fragment(run, "run")
    registry = ProfileRegistry(data_root) if data_root is not None else None

    selected, id_source, where = _select(
        profile_id, preset_schema, char_schema, user_frag, run_frag
    )

    schemas: tuple[tuple[Layer, EmbeddedSchema | None], ...] = (
        ("preset", preset_schema),
        ("character", char_schema),
    )
    fragments: list[Fragment] = []
    defined = selected == DEFAULT_PROFILE_ID
    for layer, schema in schemas:
        found = schema.find(selected) if schema else None
        if schema and found:
            path, profile = found
            fragments.append(fragment_from_model(profile, layer, file=schema.file, path=path))
            defined = True
    stored = registry.load(selected) if registry else None
    if stored is not None and registry is not None:
        fragments.append(fragment_from_model(stored, "user", file=str(registry.path_for(selected))))
        defined = True
    for pair in (user_frag, run_frag):
        if pair:
            fragments.append(pair[0])
            defined = defined or pair[1] == selected

    creator_warnings = _creator_reallow_warnings(fragments)

    if not defined:
        known = sorted(
            {DEFAULT_PROFILE_ID}
            | {p.id for s in (preset_schema, char_schema) if s for p in s.schema.profiles}
            | set(registry.ids() if registry else [])
        )
        raise ProfileError(
            code="agent.profile_not_found",
            message=f"profile '{selected}' is not defined by the preset, the character card, "
            "the profile registry or the built-ins",
            hint=did_you_mean(selected, known) or f"known profiles: {', '.join(known)}",
            path=where[1],
            file=where[0],
        )

    enabled = [
        (s.schema.enabled, Fragment(layer=layer, data={}, file=s.file, path=s.schema_path))
        for layer, s in schemas
        if s is not None and s.enabled_set
    ]
    resolved = merge_layers(fragments, profile_id=selected, id_source=id_source, enabled=enabled)
    resolved.warnings.extend(creator_warnings)
    return resolved


def _creator_reallow_warnings(fragments: list[Fragment]) -> list[Diagnostic]:
    """A warning for each exact ``tools.allow`` entry of a preset or character layer that a
    user layer denies (:func:`compiler.profile.platform.reallow_warnings`)."""
    user_deny = [
        d for f in fragments if f.layer == "user" for d in f.data.get("tools", {}).get("deny", [])
    ]
    return [
        w
        for f in fragments
        if f.layer in ("preset", "character")
        for w in reallow_warnings(
            f.data.get("tools", {}).get("allow", []),
            user_deny,
            path=f"{f.path}.tools.allow" if f.path else "tools.allow",
            file=f.file,
        )
    ]


def _select(
    explicit: str | None,
    preset: EmbeddedSchema | None,
    character: EmbeddedSchema | None,
    user: tuple[Fragment, str | None] | None,
    run: tuple[Fragment, str | None] | None,
) -> tuple[str, Fragment | None, tuple[str | None, str | None]]:
    """The selected id, the fragment that chose it, and (file, path) to blame if undefined."""
    chosen: list[tuple[str, Fragment | None, tuple[str | None, str | None]]] = []
    if explicit is not None:
        sid = normalize_profile_id(explicit)
        chosen.append((sid, Fragment(layer="run", data={}, file="--profile"), (None, None)))
    for pair in (run, user):
        if pair and pair[1] is not None:
            chosen.append((pair[1], pair[0], (pair[0].file, "id")))
    if chosen:
        first = chosen[0]
        for other in chosen[1:]:
            if other[0] != first[0]:
                raise ProfileError(
                    code="agent.profile_id_mismatch",
                    message=f"this override is for profile '{other[0]}', but profile "
                    f"'{first[0]}' was selected",
                    path="id",
                    file=other[2][0],
                )
        return first
    defaults: tuple[tuple[Layer, EmbeddedSchema | None], ...] = (
        ("character", character),
        ("preset", preset),
    )
    for layer, schema in defaults:
        if schema and schema.schema.default_profile:
            frag = Fragment(layer=layer, data={}, file=schema.file, path=schema.schema_path)
            return (
                schema.schema.default_profile,
                frag,
                (schema.file, schema.default_profile_path),
            )
    return DEFAULT_PROFILE_ID, None, (None, None)
