"""SillyTavern chat-completion presets: ``prompts[]``, ``prompt_order[]`` and the rest.

Internal: the API is :mod:`compiler.tavern`.

Reading keeps SillyTavern's own snake_case keys. Every prompt remembers its index in
``prompts[]`` (``source_index``) so a diagnostic can point at ``FILE#prompts[3].content``.
Unknown keys of a prompt go to its ``extra``; unknown top-level keys (``temperature``,
``openai_max_context``, ...) to the preset's ``extra``; ``extensions`` and a top-level
``agent`` are kept raw for the profile readers. The generation settings among them
(``openai_max_context``, ``openai_max_tokens``, ``temperature``, ...) are also read, typed,
into ``settings`` (:class:`PresetSettings`): a wrong type is ``context.invalid_preset`` at
its JSON path.

:func:`ordered_prompts` follows SillyTavern's prompt manager: the ``prompt_order`` list of
character 100001 (the global strategy), else 100000 (the legacy default list), else
SillyTavern's default order (:data:`DEFAULT_ORDER`, ``enhanceDefinitions`` disabled); an
entry that default order does not name (a custom or Agent entry, which SillyTavern would not
send) is kept right after the named entry it follows in ``prompts[]``, a deliberate
difference; entries the order disables are left out; identifiers the order names but
``prompts[]`` lacks are skipped, as SillyTavern skips them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from compiler._base.frame import PromptRole
from compiler._base.kinds import MAX_SEED, MAX_TOKENS
from compiler.errors import ContextError, TemplateError
from compiler.inputs.read import (
    INLINE,
    Parsed,
    PathLike,
    expect_object,
    join_path,
    load_json_file,
    type_name,
    validate,
)
from compiler.syntax.parser import MAX_TEMPLATE_CHARS, too_large

_CODE = "context.invalid_preset"


MARKERS: frozenset[str] = frozenset(
    {
        "chatHistory",
        "worldInfoBefore",
        "worldInfoAfter",
        "charDescription",
        "charPersonality",
        "scenario",
        "dialogueExamples",
        "personaDescription",
    }
)
"""SillyTavern's placeholder entries, filled from the run context."""

AGENT_MARKERS: frozenset[str] = frozenset({"agentSystemPrompt", "agentTask", "agentResults"})
"""TauriTavern's Agent-only placeholder entries."""

DEFAULT_PROMPTS: frozenset[str] = frozenset({"main", "nsfw", "jailbreak", "enhanceDefinitions"})
"""SillyTavern's built-in entries that carry their own text."""

GLOBAL_CHARACTER_ID = 100001
LEGACY_CHARACTER_ID = 100000

PromptKind = Literal["marker", "agent_marker", "default", "custom"]


class PresetPrompt(BaseModel):
    """One ``prompts[]`` entry; ``enabled`` comes from the prompt order."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    identifier: str = Field(min_length=1)
    name: str = ""
    role: PromptRole = "system"
    content: str = ""
    system_prompt: bool = False
    marker: bool = False
    injection_position: int = Field(default=0, ge=0, le=1)
    injection_depth: int = Field(default=4, ge=0)
    injection_order: int = 100
    injection_trigger: list[str] = []
    forbid_overrides: bool = False
    enabled: bool = True
    source_index: int = 0
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def kind(self) -> PromptKind:
        """What the entry is: a marker, an Agent marker, a built-in text entry, or custom."""
        if self.identifier in AGENT_MARKERS:
            return "agent_marker"
        if self.identifier in MARKERS or self.marker:
            return "marker"
        if self.identifier in DEFAULT_PROMPTS:
            return "default"
        return "custom"

    @property
    def is_marker(self) -> bool:
        """True for placeholders (SillyTavern's and the Agent ones): content comes from data."""
        return self.kind in ("marker", "agent_marker")

    @property
    def in_chat(self) -> bool:
        """True for an in-chat injection (``injection_position`` 1)."""
        return self.injection_position == 1


class PromptOrderEntry(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow")

    identifier: str
    enabled: bool = True


class PromptOrder(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow")

    character_id: int
    order: list[PromptOrderEntry] = []


PRESET_MODEL_KEYS: tuple[str, ...] = (
    "claude_model",
    "custom_model",
    "google_model",
    "openai_model",
)
"""The preset keys naming a source's model that the built-in dialects read (SillyTavern keeps
one per source; a dialect names its own as ``preset_model_key``). Each must be a string;
any other ``*_model`` string is kept too, for a third-party dialect's key."""


#: What SillyTavern 1.12.6 sends for a sampler a preset does not set: selecting a preset
#: keeps the current value of each key it lacks, and a new user's current values are the
#: shipped ``default/content/settings.json`` (``temp_openai`` 1, ``freq_pen_openai`` 0,
#: ``pres_pen_openai`` 0, ``top_p_openai`` 1, ``openai_max_tokens`` 300); its
#: ``sendOpenAIRequest`` (public/scripts/openai.js) always sends these five.
SAMPLER_DEFAULTS: dict[str, float] = {
    "temperature": 1.0,
    "frequency_penalty": 0.0,
    "presence_penalty": 0.0,
    "top_p": 1.0,
}
DEFAULT_MAX_TOKENS = 300
#: SillyTavern 1.12.6's shipped ``human_sysprompt_message`` (openai.js
#: ``default_claude_human_sysprompt_message``): what a preset without one sends
DEFAULT_HUMAN_SYSPROMPT = (
    "Let's get started. Please generate your response based on the information and "
    "instructions provided above."
)


class PresetSettings(BaseModel):
    """A preset's own generation settings, under SillyTavern's names.

    A sampler the preset lacks (``temperature``, ``top_p``, the penalties) and
    ``openai_max_tokens`` take SillyTavern's shipped values (:data:`SAMPLER_DEFAULTS`,
    :data:`DEFAULT_MAX_TOKENS`), as SillyTavern always sends them; ``openai_max_context``
    is None when absent (the model's window applies: a deliberate difference from
    SillyTavern's shipped 4095).
    ``openai_max_context`` (``max_context``) and ``openai_max_tokens`` (``max_tokens``) make
    the default budget; ``seed`` is None for SillyTavern's -1 (any negative seed: not sent);
    ``top_k`` is the preset's (None when absent: SillyTavern's ``top_k_openai`` 0), sent only
    where the provider takes it (Anthropic, Gemini);
    ``stop`` is ``custom_stopping_strings`` (SillyTavern stores a JSON-encoded array of
    strings; an array is taken too); ``models`` maps a provider to the preset's model for it.
    ``names_behavior``: -1 no names, 0 SillyTavern's default (a one-to-one chat: no names),
    1 a ``name`` on each chat message, 2 ``Name: `` in the content. The checkboxes
    (``true`` or ``false``; absent or ``null``: SillyTavern's shipped value): Gemini's
    ``use_makersuite_sysprompt`` (on), ``squash_system_messages`` and ``wrap_in_quotes``
    (off). Claude's:
    ``claude_use_sysprompt`` (absent: off, as SillyTavern ships it), ``human_sysprompt_message``
    (absent: :data:`DEFAULT_HUMAN_SYSPROMPT`), ``assistant_prefill`` (absent: none).
    """

    model_config = ConfigDict(defer_build=True, frozen=True)

    max_context: int | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = SAMPLER_DEFAULTS["temperature"]
    top_p: float = SAMPLER_DEFAULTS["top_p"]
    frequency_penalty: float = SAMPLER_DEFAULTS["frequency_penalty"]
    presence_penalty: float = SAMPLER_DEFAULTS["presence_penalty"]
    seed: int | None = None
    top_k: int | None = None
    stop: tuple[str, ...] = ()
    models: dict[str, str] = Field(default_factory=dict)
    names_behavior: int = 0
    claude_use_sysprompt: bool = False
    use_makersuite_sysprompt: bool = True
    squash_system_messages: bool = False
    wrap_in_quotes: bool = False
    human_sysprompt_message: str = DEFAULT_HUMAN_SYSPROMPT
    assistant_prefill: str = ""

    def model_for(self, key: str | None) -> str | None:
        """The preset's model under a dialect's ``preset_model_key`` (``openai_model``,
        ``claude_model``, ...); None for no key."""
        return self.models.get(key) if key is not None else None


_NUMBERS = tuple(SAMPLER_DEFAULTS)


def _settings(obj: Mapping[str, Any], file: str, path: str) -> PresetSettings:
    """The typed generation settings of a preset object; a wrong type is a coded error."""

    def bad(key: str, expected: str) -> ContextError:
        return ContextError(
            code=_CODE,
            message=f"'{key}' must be {expected}, found {type_name(obj[key])}",
            file=file,
            path=join_path(path, key),
        )

    def integer(key: str, low: int | None, high: int | None = MAX_TOKENS) -> int | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad(key, "an integer")
        if low is not None and value < low:
            raise bad(key, f"an integer of at least {low}")
        if high is not None and value > high:
            raise bad(key, f"an integer of at most {high}")
        return value

    found: dict[str, Any] = {
        "max_context": integer("openai_max_context", 1),
        "max_tokens": integer("openai_max_tokens", 1) or DEFAULT_MAX_TOKENS,
    }
    seed = integer("seed", None, MAX_SEED)
    found["top_k"] = integer("top_k", 0, None)  # above a provider's range: clamped
    found["seed"] = seed if seed is not None and seed >= 0 else None
    for key in _NUMBERS:
        value = obj.get(key)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise bad(key, "a number")
        found[key] = SAMPLER_DEFAULTS[key] if value is None else float(value)
    raw = obj.get("custom_stopping_strings")
    if isinstance(raw, str) and raw.strip():
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):  # a 5,000-digit integer, 100,000 nested [
            raise bad("custom_stopping_strings", "a JSON-encoded array of strings") from None
    elif isinstance(raw, str):
        raw = []
    if raw is not None and (not isinstance(raw, list) or not all(isinstance(x, str) for x in raw)):
        raise bad("custom_stopping_strings", "an array of strings")
    found["stop"] = tuple(x for x in raw or () if x)
    models: dict[str, str] = {}
    for key in PRESET_MODEL_KEYS:
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise bad(key, "a string")
        if value:
            models[key] = value
    for key, value in obj.items():  # a third-party dialect's key: kept when it is a string
        if key.endswith("_model") and key not in models and isinstance(value, str) and value:
            models[key] = value
    found["models"] = models
    names = integer("names_behavior", -1)
    if names is not None and names > 2:
        raise bad("names_behavior", "-1, 0, 1 or 2")
    found["names_behavior"] = 0 if names is None else names
    found.update(_switches(obj, bad))
    found.update(_texts(obj, bad))
    return PresetSettings(**found)


#: The preset's checkboxes (SillyTavern stores each as ``true`` / ``false``)
SWITCHES = ("claude_use_sysprompt", "use_makersuite_sysprompt", "squash_system_messages",
            "wrap_in_quotes")  # fmt: skip


def _switches(obj: Mapping[str, Any], bad: Callable[[str, str], ContextError]) -> dict[str, Any]:
    """The preset's checkboxes (:data:`SWITCHES`) that it gives: ``null`` keeps the
    default, any other value but ``true`` or ``false`` is refused (``"false"`` would read
    as on)."""
    found: dict[str, Any] = {}
    for key in SWITCHES:
        value = obj.get(key)
        if value is not None and not isinstance(value, bool):
            raise bad(key, "true or false")
        if value is not None:
            found[key] = value
    return found


#: The preset's texts read where they are used (``null``: SillyTavern's shipped text)
TEXTS = ("new_chat_prompt", "new_example_chat_prompt", "send_if_empty", "wi_format",
         "personality_format", "scenario_format")  # fmt: skip


def _texts(obj: Mapping[str, Any], bad: Callable[[str, str], ContextError]) -> dict[str, Any]:
    """The preset's ``human_sysprompt_message`` and ``assistant_prefill`` that it gives; each
    of them and of :data:`TEXTS` is a string or ``null``."""
    found: dict[str, Any] = {}
    for key in ("human_sysprompt_message", "assistant_prefill", *TEXTS):
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise bad(key, "a string")
        if value is not None and key not in TEXTS:
            found[key] = value
    return found


class TavernPreset(BaseModel):
    """A chat-completion preset as read; ``source`` is the file (or ``<inline>``)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    source: str = INLINE
    prompts: list[PresetPrompt]
    prompt_order: list[PromptOrder] = []
    extensions: dict[str, Any] = Field(default_factory=dict)
    agent: Any = None
    extra: dict[str, Any] = Field(default_factory=dict)
    settings: PresetSettings = Field(default_factory=PresetSettings)
    #: what its entries parse to, (text, name) -> a template or its errors: filled by
    #: :func:`compiler.tavern.assemble.parsed_entry` as a compile reads them, so a preset
    #: held by a session (its source) parses each entry once, never again
    _parsed: dict[tuple[str, str], Any] = PrivateAttr(default_factory=dict)

    def prompt(self, identifier: str) -> PresetPrompt | None:
        """The ``prompts[]`` entry with this identifier, if any."""
        return next((p for p in self.prompts if p.identifier == identifier), None)

    def layer_source(self) -> Parsed:
        """What profile resolution reads of this preset (its agent schema), as parsed."""
        return Parsed({"agent": self.agent, "extensions": self.extensions}, self.source)

    def where(self, prompt: PresetPrompt, field: str = "content") -> str:
        """``FILE#prompts[3].content``: where a prompt's field is, for diagnostics."""
        return f"{self.source}#prompts[{prompt.source_index}].{field}"


_PROMPT_FIELDS = set(PresetPrompt.model_fields) - {"enabled", "source_index", "extra"}


def _prompt(raw: Any, index: int, file: str, prefix: str) -> PresetPrompt:
    where = join_path(prefix, "prompts", index)
    obj = expect_object(raw, code=_CODE, file=file, path=where, what="a preset prompt")
    obj = {k: v for k, v in obj.items() if v is not None}
    known = {k: v for k, v in obj.items() if k in _PROMPT_FIELDS}
    extra = {k: v for k, v in obj.items() if k not in _PROMPT_FIELDS}
    if "enabled" in extra and isinstance(extra["enabled"], bool):
        known["enabled"] = extra.pop("enabled")
    if "identifier" not in known:
        raise ContextError(
            code=_CODE,
            message="a preset prompt needs an 'identifier'",
            file=file,
            path=join_path(where, "identifier"),
        )
    known.update(source_index=index, extra=extra)
    return validate(PresetPrompt, known, code=_CODE, file=file, prefix=where, what="preset prompt")


#: The most entries of a preset's ``prompts`` (and of ``prompt_order`` and each of its
#: orders): SillyTavern's presets have tens; each entry is parsed and checked, so this bounds
#: what a preset (an inline one through ``apc serve`` too) costs before anything is read.
MAX_PROMPTS = 4096


def _count_bound(items: object, key: str, file: str, path: str) -> None:
    """``context.preset_too_large`` when ``items`` is a list of more than :data:`MAX_PROMPTS`."""
    if isinstance(items, list) and len(items) > MAX_PROMPTS:
        raise ContextError(
            code="context.preset_too_large",
            message=f"{len(items)} entries in '{key}' (at most {MAX_PROMPTS})",
            file=file,
            path=join_path(path, key),
            hint="a SillyTavern preset has tens of prompts: is this the right file?",
        )


def parse_preset(data: Any, *, file: str, path: str = "") -> TavernPreset:
    """A preset from parsed JSON; errors name ``file`` and the JSON path."""
    obj = expect_object(data, code=_CODE, file=file, path=path, what="a preset")
    raw_prompts = obj.get("prompts")
    if not isinstance(raw_prompts, list):
        found = "no 'prompts'" if raw_prompts is None else f"'prompts' is {type_name(raw_prompts)}"
        raise ContextError(
            code=_CODE,
            message=f"not a chat-completion preset: {found} (expected an array of prompts)",
            file=file,
            path=join_path(path, "prompts"),
        )
    _count_bound(raw_prompts, "prompts", file, path)
    prompts = [_prompt(raw, i, file, path) for i, raw in enumerate(raw_prompts)]
    size = sum(len(p.content or "") for p in prompts)
    if size > MAX_TEMPLATE_CHARS:  # every entry is template text: one limit for all of it
        raise TemplateError([too_large(size, file)])
    seen: dict[str, int] = {}
    for p in prompts:
        if p.identifier in seen:
            raise ContextError(
                code=_CODE,
                message=f"duplicate prompt identifier '{p.identifier}' "
                f"(first at prompts[{seen[p.identifier]}])",
                file=file,
                path=join_path(path, "prompts", p.source_index, "identifier"),
            )
        seen[p.identifier] = p.source_index
    orders: list[PromptOrder] = []
    raw_orders = obj.get("prompt_order")
    if raw_orders is not None:
        if not isinstance(raw_orders, list):
            raise ContextError(
                code=_CODE,
                message=f"'prompt_order' must be an array, found {type_name(raw_orders)}",
                file=file,
                path=join_path(path, "prompt_order"),
            )
        _count_bound(raw_orders, "prompt_order", file, path)
        for k, raw in enumerate(raw_orders):
            where = join_path(path, "prompt_order", k)
            item = expect_object(raw, code=_CODE, file=file, path=where, what="a prompt order")
            _count_bound(item.get("order"), "order", file, where)
            order = validate(
                PromptOrder, item, code=_CODE, file=file, prefix=where, what="prompt order"
            )
            listed: set[str] = set()
            for j, ident in enumerate(e.identifier for e in order.order):
                if ident in listed:
                    raise ContextError(
                        code=_CODE,
                        message=f"'{ident}' appears twice in the prompt order",
                        file=file,
                        path=join_path(where, "order", j, "identifier"),
                    )
                listed.add(ident)
            orders.append(order)
    extensions = obj.get("extensions", {})
    if extensions is None:
        extensions = {}
    expect_object(
        extensions, code=_CODE, file=file, path=join_path(path, "extensions"), what="'extensions'"
    )
    extra = {
        k: v for k, v in obj.items() if k not in ("prompts", "prompt_order", "extensions", "agent")
    }
    return TavernPreset(
        source=file,
        prompts=prompts,
        prompt_order=orders,
        extensions=extensions,
        agent=obj.get("agent"),
        extra=extra,
        settings=_settings(obj, file, path),
    )


def read_preset(
    source: PathLike | Mapping[str, Any], *, origin: str | None = None, json_path: str = ""
) -> TavernPreset:
    """Read a chat-completion preset from a JSON file or from parsed JSON."""
    if isinstance(source, Mapping):
        return parse_preset(dict(source), file=origin or INLINE, path=json_path)
    path = Path(source)
    return parse_preset(load_json_file(path), file=str(path), path=json_path)


def active_order(preset: TavernPreset) -> PromptOrder | None:
    """The prompt order SillyTavern would use: character 100001, else 100000, else none."""
    for character_id in (GLOBAL_CHARACTER_ID, LEGACY_CHARACTER_ID):
        for order in preset.prompt_order:
            if order.character_id == character_id:
                return order
    return None


#: SillyTavern's prompt order for a preset without one (PromptManager's
#: ``promptManagerDefaultPromptOrder``): identifier -> enabled.
DEFAULT_ORDER: dict[str, bool] = {
    "main": True,
    "worldInfoBefore": True,
    "personaDescription": True,
    "charDescription": True,
    "charPersonality": True,
    "scenario": True,
    "enhanceDefinitions": False,
    "nsfw": True,
    "worldInfoAfter": True,
    "dialogueExamples": True,
    "chatHistory": True,
    "jailbreak": True,
}


def _default_order(preset: TavernPreset) -> list[tuple[str, bool]]:
    """:data:`DEFAULT_ORDER`, each entry it does not name after its named predecessor in
    ``prompts[]`` (before all of them when none precedes it)."""
    after: dict[str | None, list[str]] = {}
    anchor: str | None = None
    for p in preset.prompts:
        if p.identifier in DEFAULT_ORDER:
            anchor = p.identifier
        else:
            after.setdefault(anchor, []).append(p.identifier)
    own = {p.identifier: p.enabled for p in preset.prompts}
    out = [(i, own[i]) for i in after.get(None, [])]
    for identifier, enabled in DEFAULT_ORDER.items():
        out.append((identifier, enabled))
        out.extend((i, own[i]) for i in after.get(identifier, []))
    return out


def ordered_prompts(preset: TavernPreset, *, include_disabled: bool = False) -> list[PresetPrompt]:
    """The preset's prompts in prompt order, each with ``enabled`` set from the order.

    Disabled entries are left out unless ``include_disabled``, but for ``main``: as
    SillyTavern's PromptManager (``getPromptCollection``) keeps it with empty content, so a
    card's ``system_prompt`` still replaces it (``{{original}}`` empty).
    """
    order = active_order(preset)
    entries = (
        [(e.identifier, e.enabled) for e in order.order]
        if order is not None
        else _default_order(preset)
    )
    by_id = {p.identifier: p for p in preset.prompts}
    chosen = [
        by_id[identifier].model_copy(update={"enabled": enabled})
        for identifier, enabled in entries
        if identifier in by_id
    ]
    if include_disabled:
        return chosen
    return [
        p.model_copy(update={"enabled": True, "content": ""})
        if not p.enabled and p.identifier == "main"
        else p
        for p in chosen
        if p.enabled or p.identifier == "main"
    ]
