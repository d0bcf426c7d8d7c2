"""The agent profile schema: pydantic models, camelCase on the wire, snake_case in Python.

Internal: the API is :mod:`compiler.profile`.

An :class:`AgentProfile` is Preset + Model/API + Context Policy + Tool Policy + Plan Policy +
Output Policy (seed section 1). Every section has built-in defaults, so a profile that names
only what it changes is valid; layers are merged on their *explicitly set* fields
(``model_dump(exclude_unset=True)``), never on defaults.

:func:`validate_model` is the one place pydantic errors become :class:`ProfileError`\\ s with
a JSON path (``agent.profiles[0].tools.alow``), a stable code and a did-you-mean hint.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from compiler._base.validation import Codes, diagnostics_from, format_path
from compiler.errors import Diagnostic, ProfileError, did_you_mean
from compiler.inputs.workspace import WORKSPACE_ROOTS

__all__ = [
    "DEFAULT_PROFILE_ID",
    "MAX_PROFILE_ID_LENGTH",
    "WORKSPACE_ROOTS",
    "AgentProfile",
    "AgentSchema",
    "ContextPolicy",
    "InstructionsPolicy",
    "Layer",
    "MessageExtraTarget",
    "ModelPolicy",
    "ModelRetryPolicy",
    "OutputArtifact",
    "OutputPolicy",
    "PlanNode",
    "PlanPolicy",
    "PresetPolicy",
    "PresetRef",
    "ProfileFragment",
    "ProfileValidationError",
    "RequiredPart",
    "RunPolicy",
    "SkillPolicy",
    "SummaryPolicy",
    "SwitchPolicy",
    "ToolPolicy",
    "WorkspacePolicy",
    "check_profile_id",
    "format_path",
    "validate_model",
]

DEFAULT_PROFILE_ID = "default-writer"
MAX_PROFILE_ID_LENGTH = 128
_ID_RE = re.compile(r"[a-z0-9_-]+")

Layer = Literal["builtin", "preset", "character", "user", "run"]
"""Where a fragment comes from, lowest precedence first."""


class _Model(BaseModel):
    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )


def _partial(info: ValidationInfo) -> bool:
    """True while validating one layer's fragment: rules across fields wait for the merge."""
    return bool(isinstance(info.context, dict) and info.context.get("partial"))


# --------------------------------------------------------------------------- profile ids


def check_profile_id(value: str) -> str | None:
    """The error code for a bad profile id, or None when ``value`` is valid."""
    if not value.strip():
        return "agent.profile_id_empty"
    if len(value) > MAX_PROFILE_ID_LENGTH:
        return "agent.profile_id_too_long"
    if not _ID_RE.fullmatch(value):
        return "agent.profile_id_invalid"
    return None


_ID_MESSAGES = {
    "agent.profile_id_empty": "profile id cannot be empty",
    "agent.profile_id_too_long": f"profile id is longer than {MAX_PROFILE_ID_LENGTH} characters",
    "agent.profile_id_invalid": (
        "profile id '{value}' may only use lowercase ASCII letters, digits, '-' and '_'"
    ),
}


def _profile_id(value: str) -> str:
    code = check_profile_id(value)
    if code:
        raise PydanticCustomError(code, _ID_MESSAGES[code], {"value": value})
    return value


ProfileId = Annotated[
    str,
    BeforeValidator(lambda v: _profile_id(v) if isinstance(v, str) else v),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": "^[a-z0-9_-]+$",
            "minLength": 1,
            "maxLength": MAX_PROFILE_ID_LENGTH,
        }
    ),
]

NonNegative = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(gt=0)]


# --------------------------------------------------------------------------- sections


class PresetRef(_Model):
    """A reference to a stored chat-completion preset."""

    api_id: str = "openai"
    name: str = Field(min_length=1)


def _preset_ref(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class PresetPolicy(_Model):
    """Which preset assembles the prompt: the current prompt snapshot, a stored one, or none."""

    mode: Literal["currentPromptSnapshot", "ref", "none"] = "currentPromptSnapshot"
    ref: Annotated[PresetRef | None, BeforeValidator(_preset_ref)] = None
    required: bool = False

    @model_validator(mode="after")
    def _ref_required(self, info: ValidationInfo) -> PresetPolicy:
        if not _partial(info) and self.mode == "ref" and self.ref is None:
            raise PydanticCustomError(
                "agent.profile_preset_ref_required", "preset.ref is required when mode is 'ref'"
            )
        return self


class ModelPolicy(_Model):
    """The model binding: ``{mode, connectionRef, modelId}`` or the preset schema's
    ``{source, model}``. The two forms do not mix in one object."""

    mode: Literal["currentPromptSnapshot", "connectionRef"] | None = None
    connection_ref: str | None = None
    model_id: str | None = None
    source: str | None = None
    model: str | None = None

    @model_validator(mode="after")
    def _one_form(self, info: ValidationInfo) -> ModelPolicy:
        binding = self.mode is not None or self.connection_ref or self.model_id
        direct = self.source is not None or self.model is not None
        if binding and direct:
            raise PydanticCustomError(
                "profile.invalid_value",
                "model uses either {mode, connectionRef, modelId} or {source, model}, not both",
            )
        if _partial(info):
            return self
        if self.mode == "connectionRef":
            if not (self.connection_ref or "").strip():
                raise PydanticCustomError(
                    "agent.profile_model_connection_ref_required",
                    "model.connectionRef is required when model.mode is 'connectionRef'",
                )
            if not (self.model_id or "").strip():
                raise PydanticCustomError(
                    "agent.profile_model_id_required",
                    "model.modelId is required when model.mode is 'connectionRef'",
                )
        elif self.connection_ref or self.model_id:
            raise PydanticCustomError(
                "agent.profile_model_current_snapshot_extra_fields",
                "connectionRef and modelId are only valid when model.mode is 'connectionRef'",
            )
        return self

    @property
    def form(self) -> Literal["binding", "direct"]:
        """``direct`` for ``{source, model}``, else ``binding``."""
        return "direct" if self.source is not None or self.model is not None else "binding"


class ModelRetryPolicy(_Model):
    """How often a failed model call is retried."""

    max_retries: NonNegative = 3
    interval_ms: NonNegative = 3000

    @model_validator(mode="after")
    def _interval(self, info: ValidationInfo) -> ModelRetryPolicy:
        if not _partial(info) and self.max_retries > 0 and self.interval_ms == 0:
            raise PydanticCustomError(
                "agent.profile_model_retry_invalid",
                "run.modelRetry.intervalMs must be > 0 when retries are enabled",
            )
        return self


class RunPolicy(_Model):
    """How a run is presented and retried."""

    presentation: Literal["foreground", "background"] = "foreground"
    model_retry: ModelRetryPolicy = Field(default_factory=ModelRetryPolicy)


class InstructionsPolicy(_Model):
    """The agent system prompt: null uses the built-in default, a non-empty string replaces it."""

    agent_system_prompt: str | None = None

    @field_validator("agent_system_prompt")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise PydanticCustomError(
                "agent.profile_system_prompt_empty",
                "instructions.agentSystemPrompt cannot be empty; use null for the default",
            )
        return value


RequiredPart = Literal["character", "persona", "newestTurn", "task"]
"""What a compile may not leave out for the budget (``context.required``)."""

#: ``context.required`` by default: every part a reader would miss.
DEFAULT_REQUIRED: tuple[RequiredPart, ...] = ("character", "persona", "newestTurn", "task")


class ContextPolicy(_Model):
    """Token budgets, what the budget may never cut, and the visible resources (globs over
    dotted resource ids)."""

    total_context_budget: NonNegative | None = None
    history_budget_tokens: NonNegative | None = None
    workspace_file_budget_tokens: NonNegative | None = None
    tool_result_budget_tokens: NonNegative | None = None
    skill_budget_tokens: NonNegative | None = None
    world_info_budget_tokens: NonNegative | None = None
    summary_budget_tokens: NonNegative | None = None
    #: the newest messages a profile that grants only ``chat.history.tail`` shows (default 20)
    history_tail_messages: Positive | None = None
    #: what the budget may never cut: the card's text (``character``), the persona
    #: (``persona``) and the run's task (``task``) in agent mode, and the chat's newest turn
    #: (``newestTurn``: the newest user message and what follows it) in every mode; a part
    #: left out of the list is cut like any other (a warning says so when it goes)
    required: list[RequiredPart] = Field(default_factory=lambda: list(DEFAULT_REQUIRED))
    include: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=lambda: ["*"])
    exclude: list[Annotated[str, Field(min_length=1)]] = []


_TOOL_PATTERN_RE = re.compile(r"[a-z0-9_.*?-]+")


def _tool_pattern(value: Any) -> Any:
    if isinstance(value, str) and not _TOOL_PATTERN_RE.fullmatch(value):
        raise PydanticCustomError(
            "profile.invalid_value",
            "tool pattern '{value}' may only use lowercase letters, digits, '.', '_', '-', "
            "'*' and '?'",
            {"value": value},
        )
    return value


ToolPattern = Annotated[str, BeforeValidator(_tool_pattern)]


class ToolPolicy(_Model):
    """Which tools the agent sees, which need approval, and the call budgets (seed 6)."""

    allow: list[ToolPattern] = []
    deny: list[ToolPattern] = []
    require_approval: list[ToolPattern] = []
    mode: Literal["conservative", "permissive"] = "conservative"
    max_rounds: Positive = 80
    max_calls_per_run: Positive = 80
    max_calls_per_tool: dict[str, Positive] = Field(default_factory=dict)
    tool_descriptions: dict[str, Annotated[str, Field(min_length=1)]] = Field(default_factory=dict)


class SkillPolicy(_Model):
    """Which skills are visible and how much of them the agent may read."""

    visible: list[str] = Field(default_factory=lambda: ["*"])
    deny: list[str] = []
    max_read_chars_per_call: Positive = 20000
    max_read_chars_per_run: Positive = 80000


class WorkspacePolicy(_Model):
    """Workspace roots the agent can see and write."""

    visible_roots: list[str] = Field(default_factory=lambda: list(WORKSPACE_ROOTS))
    writable_roots: list[str] = Field(default_factory=lambda: list(WORKSPACE_ROOTS))


def _plan_mode(value: Any) -> Any:
    if isinstance(value, str) and value not in ("none", "free", "strict", "hybrid"):
        raise PydanticCustomError(
            "agent.plan_mode_unsupported",
            "plan mode '{value}' is not one of none, free, strict, hybrid",
            {"value": value},
        )
    return value


class PlanNode(_Model):
    """One plan node (seed 9)."""

    id: str = Field(min_length=1)
    title: str | None = None
    locked: bool = False
    profile_id: ProfileId | None = None
    allowed_tools: list[ToolPattern] | None = None
    visible_files: list[str] | None = None
    max_rounds: Positive | None = None
    context_budget: NonNegative | None = None
    expected_artifacts: list[str] = []
    approval_required: bool = False


class PlanPolicy(_Model):
    """Plan mode and its nodes (seed 8)."""

    mode: Annotated[Literal["none", "free", "strict", "hybrid"], BeforeValidator(_plan_mode)] = (
        "none"
    )
    beta: bool = True
    nodes: list[PlanNode] = []

    @model_validator(mode="after")
    def _nodes(self, info: ValidationInfo) -> PlanPolicy:
        if not _partial(info) and self.mode in ("strict", "hybrid") and not self.nodes:
            raise PydanticCustomError(
                "agent.plan_nodes_required", "plan mode '{mode}' needs nodes", {"mode": self.mode}
            )
        if not _partial(info) and self.mode == "none" and self.nodes:
            raise PydanticCustomError(
                "agent.plan_nodes_unsupported", "plan.nodes must be empty when plan.mode is 'none'"
            )
        seen: set[str] = set()
        for node in self.nodes:
            if node.id in seen:
                raise PydanticCustomError(
                    "agent.plan_node_duplicate_id",
                    "plan node id '{id}' is used twice",
                    {"id": node.id},
                )
            seen.add(node.id)
        return self


class MessageExtraTarget(_Model):
    """An artifact shown beside the message body, under ``key``."""

    message_extra: str = Field(min_length=1)


_TARGET_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"enum": ["messageBody", "message_body"]},
        {
            "type": "object",
            "properties": {"messageExtra": {"type": "string", "minLength": 1}},
            "required": ["messageExtra"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"message_extra": {"type": "string", "minLength": 1}},
            "required": ["message_extra"],
            "additionalProperties": False,
        },
    ]
}


def _target(value: Any) -> Any:
    if isinstance(value, MessageExtraTarget):
        return value
    if value in ("messageBody", "message_body"):
        return "messageBody"
    if isinstance(value, dict) and len(value) == 1:
        ((key, extra),) = value.items()
        if key in ("message_extra", "messageExtra") and isinstance(extra, str) and extra:
            return MessageExtraTarget(message_extra=extra)
        if key not in ("message_extra", "messageExtra"):
            raise PydanticCustomError(
                "profile.unknown_field",
                "unknown target key '{key}'",
                {"key": key, "hint": did_you_mean(str(key), ["messageExtra", "message_extra"])},
            )
    raise PydanticCustomError(
        "profile.invalid_value",
        "target must be 'messageBody', 'message_body' or an object with 'message_extra', "
        "got '{value}'",
        {"value": value},
    )


ArtifactTarget = Annotated[
    Literal["messageBody"] | MessageExtraTarget,
    BeforeValidator(_target),
    WithJsonSchema(_TARGET_SCHEMA),
]


class OutputArtifact(_Model):
    """One file the agent must (or may) produce, and where the runtime shows it."""

    id: str = Field(min_length=1)
    path: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    target: ArtifactTarget
    required: bool = False

    @property
    def is_message_body(self) -> bool:
        """True for the ``messageBody`` target."""
        return self.target == "messageBody"


class OutputPolicy(_Model):
    """The artifacts of a run."""

    artifacts: list[OutputArtifact] = []


class SummaryPolicy(_Model):
    """When and how much history the runtime may summarise."""

    enabled: bool = False
    trigger_tokens: NonNegative | None = None
    max_tokens: NonNegative | None = None


class SwitchPolicy(_Model):
    """Whether and to which profiles a run may switch (seed 10)."""

    enabled: bool = False
    allowed_profiles: list[ProfileId] = []
    max_switches_per_run: NonNegative = 0


class ProfileFragment(_Model):
    """A profile override (user or run layer): every field optional, ``id`` included."""

    id: ProfileId | None = None
    display_name: str | None = None
    preset: PresetPolicy = Field(default_factory=PresetPolicy)
    model: ModelPolicy = Field(default_factory=lambda: ModelPolicy(mode="currentPromptSnapshot"))
    run: RunPolicy = Field(default_factory=RunPolicy)
    instructions: InstructionsPolicy = Field(default_factory=InstructionsPolicy)
    context: ContextPolicy = Field(default_factory=ContextPolicy)
    tools: ToolPolicy = Field(default_factory=ToolPolicy)
    skills: SkillPolicy = Field(default_factory=SkillPolicy)
    workspace: WorkspacePolicy = Field(default_factory=WorkspacePolicy)
    plan: PlanPolicy = Field(default_factory=PlanPolicy)
    output: OutputPolicy = Field(default_factory=OutputPolicy)
    summary: SummaryPolicy = Field(default_factory=SummaryPolicy)
    switch: SwitchPolicy = Field(default_factory=SwitchPolicy)


class AgentProfile(ProfileFragment):
    """A complete profile definition: a preset/character/registry profile, ``id`` required."""

    id: ProfileId


class AgentSchema(_Model):
    """The preset (or character) agent schema: ``{"enabled", "defaultProfile", "profiles"}``."""

    enabled: bool = True
    default_profile: ProfileId | None = None
    profiles: list[AgentProfile] = []

    @model_validator(mode="after")
    def _unique_ids(self) -> AgentSchema:
        seen: set[str] = set()
        for profile in self.profiles:
            if profile.id in seen:
                raise PydanticCustomError(
                    "agent.profile_duplicate_id",
                    "profile id '{id}' is defined twice",
                    {"id": profile.id},
                )
            seen.add(profile.id)
        return self

    def find(self, profile_id: str) -> tuple[int, AgentProfile] | None:
        """The index and profile with ``profile_id``, if this schema defines it."""
        for index, profile in enumerate(self.profiles):
            if profile.id == profile_id:
                return index, profile
        return None


# --------------------------------------------------------------------------- errors


class ProfileValidationError(ProfileError):
    """One or more validation errors in one input; all of them are in :attr:`diagnostics`."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        first = diagnostics[0]
        super().__init__(
            code=first.code, message=first.message, hint=first.hint, path=first.path,
            file=first.file,
        )  # fmt: skip
        self._diagnostics = list(diagnostics)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)


_M = TypeVar("_M", bound=BaseModel)


def validate_model(
    model: type[_M],
    data: Any,
    *,
    path_prefix: str = "",
    file: str | None = None,
    partial: bool = False,
) -> _M:
    """Validate ``data`` as ``model``; raise :class:`ProfileValidationError` with JSON paths.

    ``partial`` validates one layer's fragment: shapes, types and single values, but not the
    rules that relate fields (``mode: ref`` needs ``ref``), which hold only after the merge.
    """
    try:
        return model.model_validate(data, context={"partial": partial})
    except ValidationError as exc:
        raise ProfileValidationError(
            diagnostics_from(exc, model, codes=_CODES, data=data, prefix=path_prefix, file=file)
        ) from None


_CODES = Codes(
    unknown="profile.unknown_field",
    missing="profile.missing_field",
    invalid="profile.invalid_value",
)
