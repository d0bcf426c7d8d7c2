"""World info for one run: the run's lorebooks scanned against its chat with its settings.

Internal: the assemble stage calls :func:`scan_run` once per compile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from compiler._records import record
from compiler.errors import Diagnostic
from compiler.inputs.lazy_chat import LazyChat
from compiler.inputs.lorebook import WorldEntry
from compiler.inputs.run import ChatMessageIn, RunContext
from compiler.st.macros import MacroEnv, substitute
from compiler.st.world.place import world_position
from compiler.st.world.scan import Character, ScanSettings, scan, world_budget
from compiler.st.world.trace import ScanTrace

ChatText = str | tuple[str | None, str]
"""A scanned message: its text, or ``(name, text)`` (scanned as ``Name: text``)."""
ScanPrompt = tuple[str, str]
"""An in-chat prompt the scan reads besides the chat: (what it is, such as ``persona`` or
``authors_note``; its text)."""


@record
class WorldRun:
    """The activated entries (as dicts, in prompt order) and the timed-effects state after
    the scan (SillyTavern's ``chat_metadata.timedWorldInfo``; None when the run gave none
    and no entry has a timed effect)."""

    entries: list[dict[str, Any]]
    state: dict[str, Any] | None = None
    warnings: list[Diagnostic] = field(default_factory=list)
    #: what the scan decided for each entry (None: no scan, the run gave its entries)
    trace: ScanTrace | None = None
    #: the scan's world info budget in tokens (None: none)
    budget: int | None = None
    #: the activated entries as the compile placed them (after the regex scripts)
    shown: list[dict[str, Any]] = field(default_factory=list)


def _texts(chat: Sequence[ChatText], names: bool) -> Sequence[str]:
    """The scanned text of each message, made as the scan reads it (it reads the newest
    :data:`~compiler.st.world.activation.MAX_SCAN_DEPTH` at most)."""
    return LazyChat(
        chat, lambda m: m if isinstance(m, str) else f"{m[0]}: {m[1]}" if names and m[0] else m[1]
    )


def _entry_out(e: WorldEntry) -> dict[str, Any]:
    return {
        "uid": e.uid,
        "world": e.world,
        "comment": e.comment,
        "content": e.content,
        "position": e.position,
        "order": e.order,
        "depth": e.depth,
        "role": e.role or "system",
    }


def scan_settings(ctx: RunContext, max_context: int | None, cap: int | None = None) -> ScanSettings:
    """The scan settings from the run's ``worldInfoSettings``; the budget is a percentage
    of ``max_context`` (the compile's prompt budget), capped, and within ``cap`` (the
    profile's ``worldInfoBudgetTokens``, so the fit stage need not drop the block whole)."""
    wi = ctx.world_info_settings
    budget = world_budget(wi.world_info_budget, wi.world_info_budget_cap, max_context)
    if cap is not None:
        budget = cap if budget is None else min(budget, cap)
    return ScanSettings(
        depth=wi.world_info_depth,
        case_sensitive=wi.world_info_case_sensitive,
        match_whole_words=wi.world_info_match_whole_words,
        recursive=wi.world_info_recursive,
        max_recursion_steps=wi.world_info_max_recursion_steps,
        min_activations=wi.world_info_min_activations,
        min_activations_depth_max=wi.world_info_min_activations_depth_max,
        use_group_scoring=wi.world_info_use_group_scoring,
        budget=budget,
    )


def _character(ctx: RunContext) -> Character | None:
    card = ctx.card
    if card is None:
        return None
    path = ctx.character_path
    name = path.stem if path is not None else card.name
    return Character(name=name, tags=tuple(str(t) for t in card.tags))


def scan_run(
    ctx: RunContext,
    chat: Sequence[ChatText],
    *,
    rewrite_key: Callable[[str], str] | None = None,
    fill: Callable[[str], str] | None = None,
    count: Callable[[str], int] | None = None,
    max_context: int | None = None,
    cap: int | None = None,
    injected: Sequence[ScanPrompt] = (),
) -> WorldRun:
    """The world info of the run: the entries it gives (already activated), or those its
    lorebooks activate against ``chat`` (oldest first; the messages the profile shows) and
    the ``injected`` in-chat prompts SillyTavern scans too. ``rewrite_key``/``fill`` fill
    SillyTavern macros in keys/content, ``count`` counts tokens for the world info budget
    (no budget without it)."""
    given = ctx.timed_world_info
    if isinstance(ctx.world_info, list) and ctx.world_info:
        return WorldRun(list(ctx.world_info), given)
    books = ctx.lorebooks_loaded
    if not books:
        return WorldRun([], given)
    wi = ctx.world_info_settings
    settings = scan_settings(ctx, max_context, cap)
    if count is None:
        settings = dataclasses.replace(settings, budget=None)
    result = scan(
        ctx.sorted_world_entries(books, wi.world_info_character_strategy),
        _texts(chat, wi.world_info_include_names),
        settings,
        state=given,
        seed=ctx.macro_seed,
        count=count,
        fill=fill,
        rewrite_key=rewrite_key,
        character=_character(ctx),
        injected=[text for _, text in injected],
        injected_names=[name for name, _ in injected],
    )
    files = {b.name: b.file for b in books}
    warnings = [dataclasses.replace(w, file=_file_of(w, files)) for w in result.warnings]
    if result.budget_reached and wi.world_info_overflow_alert:
        warnings.append(_budget_warning(len(result.entries), settings.budget))
    state = result.state if given is not None or any(result.state.values()) else None
    entries = [_entry_out(e) for e in result.entries]
    return WorldRun(entries, state, warnings, result.trace, settings.budget)


def activated_world(
    ctx: RunContext,
    visible_chat: Sequence[ChatText],
    warnings: list[Diagnostic],
    rewrite_key: Callable[[str], str] | None = None,
) -> list[dict[str, Any]]:
    """The world info entries: as the run gives them (already activated), or those the
    run's lorebooks activate against ``visible_chat`` (oldest first), the messages the
    profile shows (a hidden message never activates an entry), with no budget. A
    message given as ``(name, text)`` is scanned as ``Name: text`` when
    ``world_info_include_names`` is on. Skipped regex keys are reported in ``warnings``;
    ``rewrite_key`` fills macros in keys before matching."""
    run = scan_run(ctx, visible_chat, rewrite_key=rewrite_key)
    warnings += run.warnings
    return run.entries


def scan_chat(
    ctx: RunContext,
    chat: Sequence[ChatMessageIn],
    values: dict[str, str],
    env: MacroEnv,
    count: Callable[[str], int] | None = None,
    max_context: int | None = None,
    cap: int | None = None,
    injected: Sequence[ScanPrompt] = (),
) -> WorldRun:
    """:func:`scan_run` over chat messages: each scanned as ``Name: text`` with its name,
    else the persona's (``values["user"]``) or the card's (``values["char"]``); keys,
    content and the ``injected`` prompts get SillyTavern's macros from ``values`` and
    ``env`` (getExtensionPromptByName fills them)."""
    speakers = {"user": values.get("user"), "assistant": values.get("char")}
    texts = LazyChat(chat, lambda m: (m.name or speakers.get(m.role), m.content or ""))
    return scan_run(
        ctx,
        texts,
        rewrite_key=lambda key: substitute(key, values, budget=env.budget),
        fill=lambda text: substitute(text, values, env),
        count=count,
        max_context=max_context,
        cap=cap,
        injected=[(name, substitute(text, values, env)) for name, text in injected],
    )


def world_pieces(entries: Sequence[dict[str, Any]], position: object = None) -> list[str]:
    """The activated entries' contents at ``position`` (a name; None: all), in prompt order
    (``<<agent.world.activated position=...>>`` joins them with ``\n``)."""
    return [
        str(e["content"])
        for e in entries
        if e.get("content") and (position is None or world_position(e) == position)
    ]


def _file_of(warning: Diagnostic, files: dict[str, str]) -> str | None:
    """The lorebook a scan warning is about (its message names the entry's world)."""
    for name, file in files.items():
        if f"in lorebook {name!r}" in warning.message:
            return file
    return next(iter(files.values()), None) if len(files) == 1 else warning.file


def _budget_warning(kept: int, budget: int | None) -> Diagnostic:
    return Diagnostic(
        code="world.budget_reached",
        severity="warning",
        message=f"the world info budget of {budget} tokens was reached after {kept} "
        "entries: the scan stopped there",
        hint="raise world_info_budget / world_info_budget_cap, or lower entries' order",
    )
