"""RunContext: what a run has (RUN.json), validated, with paths resolved against its file.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
    field_validator,
)
from pydantic.alias_generators import to_camel

from compiler.errors import ContextError, is_too_deep, too_deep
from compiler.inputs.chat import ChatMessage, ChatMetadata, ChatVariable, SendDate, read_chat_file
from compiler.inputs.chat_log import ChatLog
from compiler.inputs.lazy_chat import ChatMemo, LazyChat, PlainChat, plain_chat, plain_snapshot
from compiler.inputs.lorebooks import (
    BookMemo,
    BookSource,
    Lorebooks,
    load_books,
    sorted_entries,
)
from compiler.inputs.read import (
    INLINE,
    Parsed,
    decode_text,
    load_json_file,
    plain_messages,
    read_bytes,
    real_dir,
    report,
    resolve,
    sanitize,
    surrogate_warning,
    validate,
)
from compiler.inputs.sandbox import admit
from compiler.inputs.tool_schemas import CHECKED, SchemaMemo, plainly_valid
from compiler.inputs.workspace import Workspace
from compiler.inputs.world_inline import WorldInfoIn

if TYPE_CHECKING:  # cards and lorebook files are read only when a run gives them
    from compiler.inputs.card_memo import CardMemo
    from compiler.inputs.cards import CharacterCard
    from compiler.inputs.lorebook import WorldEntry

SKILL_NAME_RE = re.compile(r"[a-z0-9_-]{1,128}")
MAX_SKILL_BYTES = 1024 * 1024
"""The largest ``SKILL.md`` read (``context.file_too_large`` above it)."""


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ChatMessageIn(_Model):
    """A chat message as the run supplies it (oldest first)."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    #: a tool message whose result is a failure (sent as the provider's error flag)
    is_error: bool = False
    #: when it was sent (SillyTavern's ``send_date``), for ``{{idle_duration}}``
    send_date: SendDate | None = None


class ToolIn(_Model):
    """A tool definition: dotted name, description, JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    @field_validator("parameters")
    @classmethod
    def _json_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        """``parameters`` must be a valid JSON Schema (draft 2020-12, what providers take);
        a schema the compiling session already found valid is not checked again."""
        if plainly_valid(value):  # the usual shape: no metaschema walk (~0.4 ms) needed
            return value
        memo = CHECKED.get()
        key = memo.key(value) if memo is not None else None
        if memo is not None and key is not None and key in memo:
            return value
        import jsonschema  # imported on first use: most compiles define no tools

        try:
            jsonschema.Draft202012Validator.check_schema(value)
        except jsonschema.SchemaError as exc:
            where = "" if not exc.path else f" at {exc.json_path.replace('$', 'parameters', 1)}"
            raise ValueError(f"not a valid JSON Schema{where}: {exc.message}") from None
        if memo is not None and key is not None:
            memo.add(key)
        return value


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
    """The user's persona; ``position``, ``depth`` and ``role`` are SillyTavern's
    ``persona_description_position`` / ``_depth`` / ``_role``."""

    name: str = "User"
    description: str = ""
    #: 0 in the prompt (the personaDescription marker; 1, deprecated, is the same), 2 above
    #: the Author's Note, 3 below it, 4 in chat at ``depth`` with ``role``, 9 nowhere
    position: Literal[0, 1, 2, 3, 4, 9] = 0
    depth: int = Field(default=2, ge=0)
    #: 0 system, 1 user, 2 assistant
    role: Literal[0, 1, 2] = 0


class NoteSettings(BaseModel):
    """SillyTavern's global Author's Note settings (``extension_settings.note``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    #: the world info scan reads the Author's Note and the Character's Note too
    allow_wi_scan: bool = Field(default=False, alias="allowWIScan")


class WorldInfoSettings(BaseModel):
    """SillyTavern's global world info settings, by SillyTavern's own names, defaulting to its
    shipped ``settings.json`` (scan depth 2, whole words and recursion on, case-insensitive,
    names scanned, budget 25 %); all are applied (:mod:`compiler.st.world.scan`)."""

    model_config = ConfigDict(extra="forbid")

    world_info_depth: int = Field(default=2, ge=0, le=1000)
    world_info_case_sensitive: bool = False
    world_info_match_whole_words: bool = True
    world_info_recursive: bool = True
    world_info_include_names: bool = True
    #: percent of the context
    world_info_budget: int = Field(default=25, ge=1, le=100)
    #: tokens; 0: no cap
    world_info_budget_cap: int = Field(default=0, ge=0)
    world_info_min_activations: int = Field(default=0, ge=0)
    #: the deepest a min-activations scan goes; 0: the chat's length
    world_info_min_activations_depth_max: int = Field(default=0, ge=0)
    world_info_use_group_scoring: bool = False
    #: warn (world.budget_reached) when the budget stops the scan
    world_info_overflow_alert: bool = False
    #: scan passes in all, the first included; 0: unlimited
    world_info_max_recursion_steps: int = Field(default=0, ge=0)
    #: evenly 0, character_first 1, global_first 2
    world_info_character_strategy: Literal[0, 1, 2] = 1


class RunContext(_Model):
    """The run context. ``base_dir`` is where relative paths resolve (the file's folder)."""

    #: a caller's plain chat is kept as a :class:`LazyChat` (validated as it is read)
    chat: Sequence[ChatMessageIn] | str = []
    workspace: str | InlineWorkspace | None = None
    tools: list[ToolIn] = []
    tool_results: list[ToolResultIn] = []
    plan: str | list[str] | None = None
    diff: str | None = None
    skills: dict[str, str] | str = Field(default_factory=dict)
    #: precomputed summaries by component kind ("ChatHistory", "ToolResults") or id
    summaries: dict[str, str] = Field(default_factory=dict)
    task: str | None = None
    persona: Persona | None = None
    character: dict[str, Any] | str | None = None
    world_info: WorldInfoIn = []
    #: SillyTavern's chat metadata (its names): the Author's Note; a chat file's header
    #: ``chat_metadata`` is read too, these keys win
    chat_metadata: ChatMetadata = Field(default_factory=ChatMetadata)
    #: SillyTavern's Author's Note settings (``allowWIScan``)
    note_settings: NoteSettings = Field(default_factory=NoteSettings)
    #: SillyTavern's global world info settings (its names; its shipped defaults)
    world_info_settings: WorldInfoSettings = Field(default_factory=WorldInfoSettings)
    #: more lorebooks: global, the character's, the chat's, the persona's
    #: (:mod:`compiler.inputs.lorebooks`)
    lorebooks: Lorebooks = Field(default_factory=Lorebooks)
    #: scan the card's embedded character_book as the character's lorebook
    use_character_book: bool = True
    #: SillyTavern's ``chat_metadata.timedWorldInfo`` (sticky / cooldown state) of the chat
    #: (None: the one in ``chatMetadata`` or the chat file's header, if any)
    timed_world_info: dict[str, Any] | None = None
    #: admit workspace files with more than one hard link (off: they can reach outside)
    allow_workspace_hardlinks: bool = False
    #: the clock of SillyTavern's {{time}}, {{date}}, ... (ISO 8601; default: the current time)
    now: datetime | None = None
    #: the seed of {{random}}, {{pick}}, {{roll}} (default: derived from the chat, see
    #: :attr:`macro_seed`)
    seed: int | None = None
    #: SillyTavern's chat variables ({{getvar}}; over ``chatMetadata.variables``, name by
    #: name: :attr:`chat_variables`) and global variables ({{getglobalvar}})
    variables: dict[str, ChatVariable] = Field(default_factory=dict)
    global_variables: dict[str, ChatVariable] = Field(default_factory=dict)
    #: the greeting an empty chat starts with: 0 the card's first_mes, N its Nth alternate
    #: greeting (SillyTavern's swipes)
    greeting: int = Field(default=0, ge=0)
    #: SillyTavern's global regex scripts (its ``extension_settings.regex``), run before the
    #: card's (:mod:`compiler.st.regex_run`)
    regex_scripts: list[dict[str, Any]] = []
    #: run the card's own regex scripts: SillyTavern runs them once the user allowed them
    #: for the card (``character_allowed_regex``); off, they are reported and not applied
    allow_card_regex: bool = False

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", json_schema_extra=None
    )

    @field_serializer("chat", mode="wrap")
    def _chat_out(self, value: Any, handler: SerializerFunctionWrapHandler) -> Any:
        """A lazily validated chat is dumped as the list it stands for."""
        return handler(list(value) if isinstance(value, LazyChat) else value)

    @field_validator("now")
    @classmethod
    def _now_in_range(cls, value: datetime | None) -> datetime | None:
        """The clock macros move ``now`` by up to a day (local time, ``{{time_UTC+14}}``):
        the calendar's first and last years are refused, not overflowed mid-compile."""
        if value is not None and not 2 <= value.year <= 9998:
            raise ValueError(f"must be a time from year 2 to 9998, not year {value.year}")
        return value

    _base_dir: Path = Path(".")
    _file: str = INLINE
    _card: CharacterCard | None = None
    _character_path: Path | None = None
    _card_json: Parsed | None = None
    _card_text: str | None = None
    _user_lines: int | None = None
    _user_lines_at: list[int] | None = None
    _books: list[BookSource] | None = None
    _book_memo: BookMemo | None = None

    @property
    def messages(self) -> Sequence[ChatMessageIn]:
        """The chat as messages (a chat file is read when the context is loaded)."""
        return [] if isinstance(self.chat, str) else self.chat

    @property
    def user_messages(self) -> int:
        """How many user messages the chat has: a chat file's ``is_user`` lines, hidden ones
        too (SillyTavern counts them for the Author's Note's interval), else the chat's."""
        lines, at, n = self._user_lines, self._user_lines_at or [], len(self.messages)
        if lines is not None:  # a .jsonl file's; a prefix of its chat (a replayed turn)
            return (at[n - 1] if n else 0) if n < len(at) else lines  # counts up to its end
        chat = self.messages
        if isinstance(chat, LazyChat):  # the checked roles: nothing validated
            return chat.roles().count("user")
        return sum(1 for m in chat if m.role == "user")

    @property
    def chat_variables(self) -> dict[str, ChatVariable]:
        """The chat's variables ``{{getvar}}`` reads: ``chat_metadata.variables`` (the chat
        file's header's under the run's ``chatMetadata``'s), the run's ``variables`` over them."""
        return {**self.chat_metadata.variables, **self.variables}

    @property
    def macro_seed(self) -> int:
        """:attr:`seed`, else one derived from the chat as SillyTavern's chat id is: the card's
        name and the first message, so it stays the same as the chat grows."""
        if self.seed is not None:
            return self.seed
        card = self.card
        first = self.messages[0].content or "" if self.messages else ""
        key = json.dumps([card.name if card else "", first]).encode("utf-8", "surrogatepass")
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")

    @property
    def card(self) -> CharacterCard | None:
        """The character as a parsed card (None without one, or for an inline dict that is
        not a valid card)."""
        return self._card

    def load_inputs(self, cards: CardMemo | None = None, books: BookMemo | None = None) -> None:
        """Read the inputs given as paths (relative to :attr:`base_dir`), in place: ``chat``
        (a .jsonl or .json file) becomes messages (a header's ``chat_metadata`` under the
        run's), ``character`` (JSON/PNG/CHARX card) its flat fields and :attr:`card`, the
        lorebooks their entries (:func:`compiler.inputs.lorebooks.load_books`)."""
        if isinstance(self.chat, str):
            read = read_chat_file(resolve(self.chat, self._base_dir))
            self.chat = [_message_in(m) for m in read.messages]
            self._user_lines, self._user_lines_at = read.user_lines, read.user_lines_at
            if read.metadata is not None:  # the run's keys (and variables) win over the file's
                given = self.chat_metadata.model_dump(exclude_unset=True)
                merged = {**read.metadata.model_dump(), **given}
                merged["variables"] = {**read.metadata.variables, **self.chat_metadata.variables}
                self.chat_metadata = ChatMetadata.model_validate(merged)
        if self.timed_world_info is None:  # else SillyTavern's own place: the chat metadata
            kept = (self.chat_metadata.model_extra or {}).get("timedWorldInfo")
            self.timed_world_info = kept if isinstance(kept, dict) else None
        if self.character is not None:
            self._read_card(cards)
        self._book_memo = books
        self._books = self._load_books(books)

    def _read_card(self, cards: CardMemo | None) -> None:
        """The character (a path or an inline card) read as :attr:`card`."""
        from compiler.inputs.cards import parse_card, read_card, read_card_json

        if isinstance(self.character, str):
            self._character_path = resolve(self.character, self._base_dir)
            raw, label = read_card_json(self._character_path)  # read once, parsed once
            card = parse_card(raw, file=label)
            self._card = card
            self._card_json = Parsed(raw, str(self._character_path))
            try:
                self.character = card.model_dump(
                    mode="json", exclude={"character_book", "extra", "origin"}
                )
            except (ValueError, RecursionError) as exc:
                if not is_too_deep(exc):
                    raise
                raise too_deep(f"the card {label}") from None
        elif isinstance(self.character, dict) and cards is not None:  # a session's last
            where = {"origin": self._file, "json_path": "character"}
            self._card, self._card_text = cards.read(self.character, **where)
        elif isinstance(self.character, dict):  # a broken inline card is an error too
            self._card = read_card(self.character, origin=self._file, json_path="character")

    def sorted_world_entries(self, books: Sequence[BookSource], strategy: int) -> list[WorldEntry]:
        """The entries of ``books`` in SillyTavern's candidate order (a session's memo's)."""
        memo = self._book_memo
        sort = sorted_entries if memo is None else memo.sorted_entries
        return sort(books, strategy)

    def _load_books(self, memo: BookMemo | None = None) -> list[BookSource]:
        card = self._card
        book = card.character_book if card is not None and self.use_character_book else None
        embedded = None
        if card is not None and book is not None:
            where = str(self._character_path) if self._character_path else self._file
            embedded = (book.name or f"{card.name}'s Lorebook", book, where)
        return load_books(
            base_dir=self._base_dir,
            origin=self._file,
            world_info=self.world_info if isinstance(self.world_info, str) else None,
            lorebooks=self.lorebooks,
            character_book=embedded,
            memo=memo,
        )

    @property
    def lorebooks_loaded(self) -> list[BookSource]:
        """The run's lorebooks, each once, in ownership order (read on first use)."""
        if self._books is None:
            self._books = self._load_books()
        return self._books

    @property
    def character_path(self) -> Path | None:
        """The card file, when the character was given as a path."""
        return self._character_path

    def skill_text(self, name: str) -> str:
        """A skill's text: from the inline map, or ``<skills dir>/<name>/SKILL.md``."""
        if not SKILL_NAME_RE.fullmatch(name):
            raise ContextError(
                code="context.invalid_skill_name",
                message=f"skill name {name!r} must be lowercase letters, digits, '-' or '_' "
                "(at most 128)",
            )
        if isinstance(self.skills, dict):
            if name in self.skills:
                return self.skills[name]
        else:
            admit(resolve(self.skills, self._base_dir))  # confined: before it is looked at
            root = real_dir(resolve(self.skills, self._base_dir))
            if root is None:
                raise ContextError(
                    code="context.skill_not_found",
                    message=f"the skills directory {self.skills[:200]!r} does not exist",
                    file=self._file,
                    path="skills",
                )
            path = root / name / "SKILL.md"
            try:
                real = Path(os.path.realpath(path))
            except (OSError, RuntimeError):
                real = path
            if os.path.lexists(path) and not real.is_relative_to(root):
                raise ContextError(
                    code="context.invalid_skill",
                    message=f"skill '{name}' links outside the skills directory",
                    file=str(path),
                )
            try:
                data = read_bytes(real, limit=MAX_SKILL_BYTES, what="skill")
            except ContextError as exc:
                if exc.code != "context.file_not_found":
                    raise
            else:
                return decode_text(data, str(path), code="context.invalid_skill")
        raise ContextError(
            code="context.skill_not_found",
            message=f"skill '{name}' is not in the run context",
            file=self._file,
            path="skills",
        )

    @property
    def card_text(self) -> str | None:
        """An inline card's JSON text, when a session's read made it (None: not made)."""
        return self._card_text

    def character_source(self) -> Parsed | None:
        """The character card's JSON as read (from its file, or inline), for profile layers:
        the card file is not read again."""
        if self._card_json is not None:
            return self._card_json
        if isinstance(self.character, dict):
            return Parsed(self.character, f"{self._file}#character")
        return None

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    @property
    def file(self) -> str:
        return self._file

    def open_workspace(self, visible: Callable[[str], bool] | None = None) -> Workspace:
        """The workspace this run names (an empty inline one when none is given), seen
        through ``visible`` (a predicate over workspace paths; see :class:`Workspace`)."""
        if self.workspace is None:
            return Workspace(files={}, visible=visible)
        if isinstance(self.workspace, InlineWorkspace):
            return Workspace(files=self.workspace.files, visible=visible)
        admit(self._base_dir / self.workspace)  # confined (apc serve): before it is looked at
        directory = real_dir(self._base_dir / self.workspace)
        if directory is None:
            raise ContextError(
                code="context.workspace_not_found",
                message=f"workspace directory not found: {self.workspace[:200]!r}",
                file=self._file,
                path="workspace",
            )
        admit(directory)  # as resolved: a link swapped in since the check is refused
        return Workspace(
            directory=directory,
            visible=visible,
            allow_hardlinks=self.allow_workspace_hardlinks,
        )


def load_context(
    value: RunContext | dict[str, Any] | str | Path | None,
    base_dir: Path | None = None,
    *,
    from_json: bool = False,
) -> RunContext:
    """A RunContext from an object, a dict (paths relative to ``base_dir``) or a JSON file.
    ``from_json``: the dict came from :func:`compiler.inputs.read.parse_json`, which
    already repaired and refused what :func:`sanitize` would (a server's request body)."""
    return read_context(value, base_dir, from_json=from_json)


def read_context(
    value: RunContext | dict[str, Any] | str | Path | None,
    base_dir: Path | None = None,
    *,
    from_json: bool = False,
    memo: ChatMemo | None = None,
    schemas: SchemaMemo | None = None,
    cards: CardMemo | None = None,
    books: BookMemo | None = None,
) -> RunContext:
    """:func:`load_context` with what a session kept from its last turn: ``memo``, its last
    checked chat (a dict's chat checks only what is new); ``schemas``, the tool schemas it
    already found valid; ``cards``, the inline card it read last; ``books``, the inline
    lorebooks it read last."""
    if value is None:
        return RunContext()
    if isinstance(value, RunContext):
        return value
    file, plain = INLINE, None
    if isinstance(value, str | Path):
        path = Path(value)
        data = load_json_file(path, what="run context")
        file, base_dir = str(path), path.resolve().parent
    elif from_json:
        data = value
    else:  # a caller's objects: lone surrogates can only come in this way, or from JSON
        data, repaired, plain = _sanitized(value, memo)
        if repaired:
            report(surrogate_warning(repaired, file))
    if not isinstance(data, dict):
        raise ContextError(
            code="context.invalid_context",
            message="the run context must be a JSON object",
            file=file,
        )
    token = CHECKED.set(schemas)
    try:
        ctx = _validated(data, file, plain)
    finally:
        CHECKED.reset(token)
    ctx._base_dir = base_dir or Path.cwd()
    ctx._file = file
    ctx.load_inputs(cards, books)
    return ctx


def _message_in(m: ChatMessage) -> ChatMessageIn:
    calls = (
        [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
        if m.tool_calls
        else None
    )
    return ChatMessageIn(
        role=m.role,
        content=m.content,
        name=m.name,
        tool_calls=calls,
        tool_call_id=m.tool_call_id,
        send_date=m.send_date,
    )


def _validated(data: dict[str, Any], file: str, plain: bool | None) -> RunContext:
    """``data`` validated as a RunContext, its chat kept as a :class:`LazyChat` when it is
    ``plain`` (None: when :func:`plain_chat` accepts it): then validating it could not fail,
    so the rest is validated without it; an error is reported from the whole, as before.
    ``data`` is the loader's own (parsed or copied): its chat is not copied again."""
    chat = data.get("chat")
    if plain is None:
        plain = type(chat) is list and plain_chat(chat, copy=False) is not None
    whole = functools.partial(
        validate, RunContext, code="context.invalid_context", file=file, prefix=""
    )
    if not plain or not isinstance(chat, list | PlainChat | LazyChat):
        return whole(data, what="run context")
    try:
        ctx = whole({**data, "chat": []}, what="run context")
    except ContextError:  # the error is elsewhere: reported from the whole, as before
        return whole({**data, "chat": list(chat)}, what="run context")
    validate_one = ChatMessageIn.model_validate
    ctx.chat = (
        chat.remade(validate_one) if isinstance(chat, LazyChat) else LazyChat(chat, validate_one)
    )
    return ctx


def _sanitized(value: dict[str, Any], memo: ChatMemo | None = None) -> tuple[Any, int, bool]:
    """:func:`sanitize` of a caller's run context, and whether its chat is plain: checked
    by :func:`plain_chat` and kept as a :class:`PlainChat` (its texts: a snapshot, nothing
    copied per message) or, in a session, as the memo's copies; else checked and copied by
    the cheaper :func:`plain_messages` when every message is flat text, else walked with
    the rest."""
    chat = value.get("chat") if isinstance(value, dict) else None
    if isinstance(chat, ChatLog):
        logged = memo.logged(chat) if memo is not None else None
        if logged is not None:  # the log's own messages: nothing changes them
            rest, repaired = sanitize({k: v for k, v in value.items() if k != "chat"})
            return {**rest, "chat": logged}, repaired, True
        items, n, _ = chat._snapshot()
        chat = items[:n]  # checked (and copied) below as a list is
        value = {**value, "chat": chat}
    check = plain_snapshot if memo is None else memo.plain
    messages: Sequence[Any] | None = check(chat) if type(chat) is list else None
    plain = messages is not None
    if messages is None and isinstance(chat, list):
        messages = plain_messages(chat)
    if messages is None:
        return (*sanitize(value), False)
    rest, repaired = sanitize({k: v for k, v in value.items() if k != "chat"})
    return {**rest, "chat": messages}, repaired, plain
