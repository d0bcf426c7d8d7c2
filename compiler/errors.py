"""Errors a user can cause, and the diagnostics that describe them.

Every error a user can cause is an :class:`APCError` with a stable dotted ``code``
(``template.unknown_macro``, ``workspace.path_denied``, ...). The CLI turns them into
``FILE:LINE:COL: error[CODE]: MESSAGE`` lines; a Python traceback shown to a user is a bug.

Exception tree::

    APCError                      one error, one code
    ├── TemplateError             one or more template diagnostics (syntax and semantics)
    ├── StrictError               strict mode: the warnings of a compile, as errors
    ├── ProfileError              agent profile validation and resolution (agent.profile_*)
    ├── ContextError              a broken run-context input (context.*)
    ├── PolicyError               a policy rejection (policy.*, tool.*, workspace.*, agent.*)
    ├── BudgetError               the frame cannot fit (context.budget_exceeded)
    ├── TokenizerError            unknown model or encoding, rank file problems (tokenizer.*)
    ├── LoweringError             the frame cannot be expressed for a provider (lower.*)
    └── InternalError             the compiler broke one of its own promises (internal.*): a bug

:data:`CODES` registers every code with the one class that carries it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterable, Iterator
from dataclasses import field
from typing import Any, Literal

from compiler._records import record

__all__ = [
    "CODES",
    "APCError",
    "BudgetError",
    "ContextError",
    "Diagnostic",
    "InternalError",
    "LoweringError",
    "PolicyError",
    "ProfileError",
    "Severity",
    "Span",
    "StrictError",
    "TemplateError",
    "TokenizerError",
    "deep_inputs_coded",
    "did_you_mean",
]

Severity = Literal["error", "warning"]


@record(frozen=True, slots=True)
class Span:
    """A half-open range of source text: offsets into the text, and 1-based line/column.

    Columns count Unicode code points. ``file`` is what the user should read in a diagnostic:
    a path, or ``preset.json#prompts[3].content``.
    """

    start: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int
    file: str = "<string>"


@record(frozen=True, slots=True)
class Diagnostic:
    """One finding about an input: what, where, and how to fix it."""

    code: str
    message: str
    severity: Severity = "error"
    span: Span | None = None
    hint: str | None = None
    path: str | None = None  # a JSON path inside a structured input, e.g. profiles[0].tools.alow
    file: str | None = None  # the input file when there is no span
    source_line: str | None = None  # the line the span points into, for rendering
    # or, instead: the text the span's offsets index (shared, not copied); the renderer
    # shows a bounded excerpt of the span's line from it
    source: str | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The same fields the text form shows, for editors and CI: the one JSON shape of a
        diagnostic (``apc ... --format json``, ``apc serve``'s answers)."""
        out: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": self.span.file if self.span else self.file,
            "line": self.span.line if self.span else None,
            "column": self.span.column if self.span else None,
            "endLine": self.span.end_line if self.span else None,
            "endColumn": self.span.end_column if self.span else None,
            "path": self.path,
            "hint": self.hint,
        }
        return out


@record
class APCError(Exception):
    """The one base error: a stable ``code``, a message, and where it happened."""

    code: str
    message: str
    hint: str | None = None
    path: str | None = None
    file: str | None = None
    span: Span | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        where = self.file or (self.span.file if self.span else None)
        prefix = f"{where}: " if where else ""
        at = f" (at {self.path})" if self.path else ""
        return f"{prefix}error[{self.code}]: {self.message}{at}"

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """This error as diagnostics (one, except for :class:`TemplateError`)."""
        return [
            Diagnostic(
                code=self.code,
                message=self.message,
                span=self.span,
                hint=self.hint,
                path=self.path,
                file=self.file,
            )
        ]


class TemplateError(APCError):
    """A template has one or more errors; all of them are in :attr:`diagnostics`."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        errors = [d for d in diagnostics if d.severity == "error"]
        first = errors[0] if errors else diagnostics[0]
        super().__init__(code=first.code, message=first.message, hint=first.hint, span=first.span)
        self._diagnostics = list(diagnostics)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)


def omitted_json(message: str, count: int, file: str | None = None) -> dict[str, Any]:
    """In place of ``count`` diagnostics left out of a list: an entry shaped like
    :meth:`Diagnostic.to_json`'s, severity ``note``, code ``diagnostics.omitted``."""
    entry = Diagnostic(code="diagnostics.omitted", message=message, file=file).to_json()
    return {**entry, "severity": "note", "omitted": count}


def promoted(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The one strict rule: every warning is an error (``strict``, ``--strict``)."""
    return [dataclasses.replace(d, severity="error") for d in diagnostics]


class StrictError(APCError):
    """``strict``: a compile had warnings; each is in :attr:`diagnostics`, now an error."""

    def __init__(self, warnings: list[Diagnostic]) -> None:
        errors = promoted(warnings)
        first = errors[0]
        super().__init__(
            code=first.code,
            message=first.message,
            hint=first.hint,
            path=first.path,
            file=first.file,
            span=first.span,
        )
        self._diagnostics = errors

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)


class ProfileError(APCError):
    """An agent profile is invalid or cannot be resolved."""


class ContextError(APCError):
    """A run-context input is missing, malformed or inconsistent."""


class PolicyError(APCError):
    """A policy rejected an action: a hidden resource, a denied tool or path."""


class BudgetError(APCError):
    """The frame cannot fit the token budget under its strategies."""


class TokenizerError(APCError):
    """The tokenizer cannot be set up for a model or encoding."""


class LoweringError(APCError):
    """The fitted frame cannot be expressed as a valid request for the provider."""


def is_too_deep(exc: BaseException) -> bool:
    """Whether ``exc`` is Python or pydantic giving up on nesting (pydantic raises a plain
    ``ValueError`` for its serializer's depth limit)."""
    if isinstance(exc, RecursionError):
        return True
    return isinstance(exc, ValueError) and "serialization depth" in str(exc)


@contextlib.contextmanager
def deep_inputs_coded() -> Iterator[None]:
    """Within: input nested deeper than Python or pydantic can walk, found past the
    readers, is ``context.too_deep``, never a RecursionError."""
    try:
        yield
    except (RecursionError, ValueError) as exc:
        if not is_too_deep(exc):
            raise
        raise too_deep() from None


def too_deep(what: str = "an input") -> ContextError:
    """``context.too_deep``: nesting deeper than the parser or serializer can take, found
    past the readers (which refuse what the JSON parser cannot nest)."""
    return ContextError(
        code="context.too_deep",
        message=f"{what} is nested too deeply to process",
        hint="flatten the JSON input (tool-call arguments, card extensions, profile layers)",
    )


class InternalError(APCError):
    """An invariant of the compiler itself failed (``internal.*``): a bug to report, never
    the input's fault; nothing is written."""


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """A ``did you mean 'x'?`` hint for the closest choice, or None."""
    return _closest(word, tuple(sorted(choices)))


@functools.lru_cache(maxsize=1024)
def _closest(word: str, choices: tuple[str, ...]) -> str | None:
    """Cached: a file repeating one misspelling asks difflib once, not once per repeat."""
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def _registry() -> dict[str, type[APCError] | None]:
    """Every code, with the one error class that carries it (None: a warning only)."""
    by_class: dict[type[APCError] | None, str] = {
        TemplateError: """template.syntax template.unterminated_macro template.unterminated_string
            template.unknown_macro template.unknown_argument template.bad_argument
            template.missing_argument template.duplicate_argument template.too_large
            template.macro_budget""",
        ContextError: """context.file_not_found context.file_unreadable context.file_too_large
            context.invalid_json context.invalid_context context.unknown_field
            context.invalid_card context.card_too_large context.invalid_chat
            context.invalid_world context.invalid_preset context.preset_too_large
            context.invalid_skill
            context.invalid_skill_name context.skill_not_found context.workspace_not_found
            context.too_deep agent.plan_action_invalid template.unreadable workspace.file_not_found
            workspace.file_unreadable workspace.file_too_large agent.plan_node_unknown
            context.lorebook_is_card context.too_many_lorebooks
            bench.no_turns bench.too_many_turns""",
        ProfileError: """profile.unknown_field profile.missing_field profile.invalid_value
            agent.creator_limit agent.plan_mode_unsupported agent.plan_node_duplicate_id
            agent.plan_nodes_required agent.plan_nodes_unsupported
            agent.profile_artifact_duplicate_id agent.profile_artifact_duplicate_path
            agent.profile_artifact_root_not_writable agent.profile_budget_exceeds_total
            agent.profile_duplicate_id agent.profile_id_empty agent.profile_id_invalid
            agent.profile_id_mismatch agent.profile_id_too_long
            agent.profile_message_body_duplicate agent.profile_message_body_required
            agent.profile_model_connection_ref_required
            agent.profile_model_current_snapshot_extra_fields agent.profile_model_id_required
            agent.profile_model_retry_invalid agent.profile_not_found
            agent.profile_output_writer_required agent.profile_preset_ref_required
            agent.profile_schema_unsupported agent.profile_system_prompt_empty
            agent.profile_task_return_runtime_only agent.profile_tools_empty
            agent.profile_unknown_tool agent.profile_workspace_root_unknown
            agent.profile_writable_root_not_visible workspace.path_invalid
            agent.plan_node_tool_not_allowed agent.plan_node_file_not_visible
            agent.plan_node_profile_not_found agent.plan_node_profile_invalid
            agent.plan_node_artifact_not_writable agent.plan_node_limit_exceeds_profile
            agent.plan_hybrid_order""",
        PolicyError: """policy.resource_hidden workspace.path_denied tool.policy_denied
            agent.tool_budget_exhausted agent.prompt_marker_unmaterialized
            agent.policy_violation""",
        BudgetError: "context.budget_exceeded context.budget_infeasible",
        TokenizerError: """tokenizer.unknown_model tokenizer.unknown_encoding
            tokenizer.rank_file_missing tokenizer.rank_file_hash tokenizer.bad_count""",
        LoweringError: """lower.unknown_provider lower.invalid_provider lower.too_many_tools
            lower.invalid_tool_name
            lower.duplicate_tool_name lower.orphan_tool_result lower.unanswered_tool_call
            lower.empty_request lower.empty_content lower.invalid_tool_call lower.invalid_role
            lower.invalid_tool_schema lower.tool_schema_rewritten lower.unsupported
            lower.missing_max_tokens
            lower.invalid_prefill lower.too_many_cache_breakpoints lower.output_clamped
            lower.unknown_output_limit lower.sampler_out_of_range lower.sampler_clamped
            lower.duplicate_tool_call_id lower.model_required lower.prefill_unsupported
            lower.missing_thought_signature""",
        InternalError: "internal.count_mismatch internal.error_pages_missing",
        APCError: """io.write_failed io.output_not_regular profile.write_failed
            bench.plot_unavailable lsp.unavailable
            serve.bad_request serve.bad_host serve.unauthorized serve.not_found
            serve.method_not_allowed
            serve.body_too_large serve.context_too_large serve.invalid_request
            serve.internal_error serve.compile_timeout serve.busy serve.unavailable
            serve.slow_request serve.too_many_connections serve.unknown_session
            serve.turn_out_of_step diagnostics.unknown_code""",
        None: """template.legacy_agent_macro template.unknown_st_macro context.lone_surrogate
            context.budget_over_window context.no_run_context context.empty_chat
            context.no_character template.unknown_prompt_id template.unknown_marker
            context.component_dropped context.no_chat_message
            agent.injection_macro agent.prompt_entry_inserted agent.task_ignored
            agent.macros_in_legacy
            world.regex_timeout world.position_unsupported
            context.note_unplaced world.author_note_absent
            world.regex_too_complex world.scan_budget world.budget_reached
            agent.profile_tool_alias
            regex.card_scripts_not_allowed regex.placement_not_applicable regex.invalid_script
            regex.invalid_pattern regex.unsupported_syntax regex.too_complex regex.timeout
            regex.output_too_large regex.too_many_scripts
            agent.profile_tool_budget_invisible agent.profile_tool_description_invisible""",
    }
    return {code: cls for cls, codes in by_class.items() for code in codes.split()}


CODES: dict[str, type[APCError] | None] = _registry()
"""The registry of codes: each belongs to one error class (None: a warning, never raised),
and each is documented on its family's page of the error index (docs/pages/reference/errors).
tests/test_error_codes.py checks that every code the package uses is here, raised with its
class, and documented."""
