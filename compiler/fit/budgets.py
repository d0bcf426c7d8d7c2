"""Budgets: the categories of the profile's context policy, model windows, the total budget.

Internal: the API is :mod:`compiler.fit`.

Budgets compose: a component fits its own ``budget=N`` cap, its category's budget (shared
by every component of that category) and the total. A chat history's messages are in
``history``, except the text a SillyTavern preset places among them (:data:`IN_CHAT`): each
such message counts in its own category, so ``historyBudgetTokens`` covers the chat's own
messages and ``worldInfoBudgetTokens`` world info in chat and in blocks alike.
``totalContextBudget`` is ``--budget`` when given, else the smaller of the profile's
``totalContextBudget`` and the model's window minus the tokens reserved for the response
(``--reserve``, else ``--max-output-tokens``). The windows are the provider dialects'
(:meth:`compiler.providers.Dialect.window`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compiler._base.frame import CATEGORY, Component, ComponentKind, Message
from compiler._base.tokens import TokenCounter
from compiler._records import record
from compiler.errors import Diagnostic
from compiler.providers.dialect import Dialect

#: component kind -> budget category (the profile's ``<category>BudgetTokens``).
CATEGORY_OF: dict[ComponentKind, str] = {
    ComponentKind.CHAT_HISTORY: "history",
    ComponentKind.WORKSPACE_FILE: "workspaceFile",
    ComponentKind.WORKSPACE_TREE: "workspaceFile",
    ComponentKind.TOOL_RESULTS: "toolResult",
    ComponentKind.SKILL: "skill",
    ComponentKind.WORLD_INFO: "worldInfo",
}

#: The categories of text a SillyTavern preset places inside the chat history (a message's
#: ``category``, set by :mod:`compiler.tavern`): world info at depth (``worldInfo``, the world
#: info blocks' category), the Author's Note, the Character's Note (the card's depth prompt),
#: the persona at depth, and the preset's own in-chat entries (``injection_position`` 1).
#: Their tokens count in their category, not in ``history``.
IN_CHAT = ("worldInfo", "authorsNote", "charactersNote", "persona", "injection")

#: every category, in the order the ledger lists them ("summary": what summaries use).
CATEGORIES = (
    "history",
    "workspaceFile",
    "toolResult",
    "skill",
    "worldInfo",
    "authorsNote",
    "charactersNote",
    "persona",
    "injection",
    "summary",
)


def category_of(comp: Component) -> str | None:
    """A component's budget category: its metadata's :data:`~compiler._base.frame.CATEGORY` (the
    Author's Note beside ``main``), else its kind's; None: in no category."""
    named = comp.metadata.get(CATEGORY)
    return named if isinstance(named, str) and named in CATEGORIES else CATEGORY_OF.get(comp.kind)


def message_shares(message: Message, cost: int, counter: TokenCounter) -> dict[str, int] | None:
    """The text of a message placed inside a chat history, by category (None: a chat
    message, all ``history``): the parts in other categories (its ``spans``) are counted,
    the message's own category takes the rest of its text. What the message costs beyond
    its text (``cost`` less the shares: its framing) is the chat's, ``history``: a category
    counts the text its budget admitted (the world-info scan counts entries' text)."""
    main = message.get("category")
    if main is None:
        return None
    text = message.get("content") or ""
    shares = {main: min(cost, counter.count(text))}
    for name, start, end in message.get("spans", ()):
        part = min(shares[main], counter.count(text[start:end]))
        shares[main] -= part
        shares[name] = shares.get(name, 0) + part
    return shares


def messages_shares(
    messages: Iterable[Message], dialect: Dialect, counter: TokenCounter
) -> dict[str, int]:
    """The tokens of the messages placed inside a chat history (:func:`message_shares`), by
    category; the chat's own messages are left out."""
    out: dict[str, int] = {}
    for m in messages:
        if "category" in m:
            shares = message_shares(m, dialect.message_tokens(m, counter), counter) or {}
            for name, n in shares.items():
                out[name] = out.get(name, 0) + n
    return out


@record(frozen=True)
class CategoryBudgets:
    """The category budgets of a resolved profile (None: no such budget)."""

    history: int | None = None
    workspace_file: int | None = None
    tool_result: int | None = None
    skill: int | None = None
    world_info: int | None = None
    summary: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        """Every category's budget (None: none; the categories of text placed in chat but
        world info have no profile budget)."""
        budgets: dict[str, int | None] = dict.fromkeys(CATEGORIES)
        budgets.update(
            history=self.history,
            workspaceFile=self.workspace_file,
            toolResult=self.tool_result,
            skill=self.skill,
            worldInfo=self.world_info,
            summary=self.summary,
        )
        return budgets

    @classmethod
    def from_policy(cls, context: Any) -> CategoryBudgets:
        """From a profile's ``ContextPolicy`` (``resolved.context``)."""
        return cls(
            history=context.history_budget_tokens,
            workspace_file=context.workspace_file_budget_tokens,
            tool_result=context.tool_result_budget_tokens,
            skill=context.skill_budget_tokens,
            world_info=context.world_info_budget_tokens,
            summary=context.summary_budget_tokens,
        )


@record(frozen=True)
class TotalBudget:
    """Where the total budget came from: the value and its parts."""

    total: int | None
    window: int | None
    reserve: int
    source: str  # "--budget", "profile", "window", "preset", "none"
    profile_total: int | None = None  # the profile's totalContextBudget, for the record


def total_budget(
    *,
    budget: int | None,
    profile_total: int | None,
    window: int | None,
    reserve: int | None = None,
    max_output_tokens: int | None = None,
) -> TotalBudget:
    """The request's total token budget (see the module docstring); ``window`` is the
    model's context window as its provider's dialect knows it (None: unknown)."""
    held = reserve if reserve is not None else (max_output_tokens or 0)
    if budget is not None:
        return TotalBudget(budget, window, held, "--budget", profile_total)
    from_window = None if window is None else max(0, window - held)
    if profile_total is not None and (from_window is None or profile_total <= from_window):
        return TotalBudget(profile_total, window, held, "profile", profile_total)
    if from_window is not None:
        return TotalBudget(from_window, window, held, "window", profile_total)
    return TotalBudget(None, window, held, "none", profile_total)


def budget_warnings(total: TotalBudget, model: str) -> list[Diagnostic]:
    """``context.budget_over_window`` when an explicit budget (plus the tokens reserved for
    the response) is over the model's window: the provider would refuse such a request."""
    if total.source != "--budget" or total.total is None or total.window is None:
        return []
    if total.total + total.reserve <= total.window:
        return []
    reserved = f" plus the {total.reserve:,} reserved for the response" if total.reserve else ""
    return [
        Diagnostic(
            code="context.budget_over_window",
            severity="warning",
            message=f"the budget of {total.total:,} tokens{reserved} is over the "
            f"{total.window:,}-token window of {model}",
            hint=f"a request to {model} can use at most {max(0, total.window - total.reserve):,} "
            "tokens; lower the budget, or leave it out to use the window minus the reserve",
        )
    ]
