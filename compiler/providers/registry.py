"""The providers by name: the built-in dialects, and those installed packages add.

Internal: the API is :mod:`compiler.providers`.

A built-in provider is a module under ``compiler.providers`` that defines ``DIALECT``
(:data:`PROVIDERS`). A third-party provider is an entry point of the group
:data:`ENTRY_POINT_GROUP` in an installed distribution, named as ``--provider`` names it,
that loads a :class:`~compiler.providers.dialect.Dialect` instance or a Dialect class (made
with no arguments)::

    [project.entry-points."agent_prompt_compiler.providers"]
    mistral = "apc_mistral:MistralDialect"

Nothing is imported until a provider is asked for: :func:`provider_names` reads this table
and the installed metadata, :func:`get_dialect` imports the one dialect it names. A built-in
name always means the built-in dialect (an entry point of that name is ignored).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import threading
from typing import TYPE_CHECKING

from compiler.errors import LoweringError, did_you_mean

if TYPE_CHECKING:
    from compiler.providers.dialect import Dialect

__all__ = [
    "DEFAULT_PROVIDER",
    "ENTRY_POINT_GROUP",
    "PROVIDERS",
    "get_dialect",
    "plugins",
    "preset_model_key",
    "provider_help",
    "provider_names",
]

#: The entry-point group a package registers its dialects in.
ENTRY_POINT_GROUP = "agent_prompt_compiler.providers"

#: The provider a compile lowers to when none is named.
DEFAULT_PROVIDER = "openai"

#: built-in provider name -> module under compiler.providers that defines ``DIALECT``.
PROVIDERS: dict[str, str] = {
    "openai": "openai_chat",
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "openai-compatible": "openai_compatible",
    "gemini": "gemini",
    "anthropic": "anthropic",
}

#: what a built-in provider's name in ``apc compile --help`` is followed by
NOTES: dict[str, str] = {
    "openai": "Chat Completions; also openai-chat",
    "openai-compatible": "OpenRouter, vLLM, llama.cpp, ...: --model free-form",
}

_LOADED: dict[tuple[str, str], Dialect] = {}  # (name, entry point value) -> its dialect
_LOCK = threading.Lock()


def plugins() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed entry points of :data:`ENTRY_POINT_GROUP` by name (the first of a name
    wins; a built-in name is not a plugin's). Reads metadata only: nothing is imported."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name not in PROVIDERS:
            found.setdefault(entry.name, entry)
    return found


def provider_names() -> tuple[str, ...]:
    """Every provider name: the built-in ones in table order, then the plugins' sorted."""
    return (*PROVIDERS, *sorted(plugins()))


def provider_help() -> str:
    """The providers as ``--provider``'s help lists them: the built-in ones with what they
    are (a second name of one dialect only in the first's note), then the installed ones."""
    first = {module: name for name, module in reversed(PROVIDERS.items())}
    shown = [n for n in provider_names() if n not in PROVIDERS or first[PROVIDERS[n]] == n]
    return ", ".join(f"{n} ({NOTES[n]})" if n in NOTES else n for n in shown)


def get_dialect(provider: str) -> Dialect:
    """The dialect of a provider name, or ``lower.unknown_provider`` with a did-you-mean."""
    module = PROVIDERS.get(provider)
    if module is not None:
        dialect: Dialect = importlib.import_module(f"compiler.providers.{module}").DIALECT
        return dialect
    entry = plugins().get(provider)
    if entry is None:
        names = provider_names()
        raise LoweringError(
            code="lower.unknown_provider",
            message=f"unknown provider '{provider}'",
            hint=did_you_mean(provider, names) or f"known: {', '.join(names)}",
        )
    return _load(entry)


def _load(entry: importlib.metadata.EntryPoint) -> Dialect:
    """The dialect a plugin's entry point loads (once), or ``lower.invalid_provider``."""
    from compiler.providers.dialect import Dialect

    key = (entry.name, entry.value)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        where = f"provider '{entry.name}' (entry point {entry.value})"
        hint = f"its {ENTRY_POINT_GROUP} entry point must name a Dialect subclass or instance"
        try:
            found = entry.load()
            dialect = found() if isinstance(found, type) and issubclass(found, Dialect) else found
        except Exception as exc:  # a broken plugin is the plugin's error, reported coded
            raise LoweringError(
                code="lower.invalid_provider",
                message=f"{where} does not load: {type(exc).__name__}: {exc}",
                hint=hint,
            ) from exc
        if not isinstance(dialect, Dialect):
            raise LoweringError(
                code="lower.invalid_provider",
                message=f"{where} loads {type(dialect).__name__}, not a Dialect",
                hint=hint,
            )
        _LOADED[key] = dialect
        return dialect


def preset_model_key(provider: str) -> str | None:
    """The SillyTavern preset key holding ``provider``'s model (its dialect's
    ``preset_model_key``); None for a provider without one, or an unknown provider (the
    compile reports that itself)."""
    try:
        return get_dialect(provider).preset_model_key
    except LoweringError:
        return None
