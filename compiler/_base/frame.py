"""ContextFrame: the typed components a run's prompt is made of (not a provider payload).

Internal: the public names are :class:`compiler.ContextFrame`, :class:`compiler.Component` and
:class:`compiler.ComponentKind`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field, computed_field
from pydantic.alias_generators import to_camel
from typing_extensions import TypedDict

# re-exported: every stage has always imported these from here
from compiler._base.kinds import ComponentKind as ComponentKind
from compiler._base.kinds import PromptRole as PromptRole
from compiler._base.kinds import Role as Role
from compiler._base.kinds import Strategy as Strategy

#: Kinds that expand to whole messages at their position instead of inline text.
MESSAGE_KINDS = frozenset({ComponentKind.CHAT_HISTORY, ComponentKind.TOOL_RESULTS})


#: Inline metadata key: the ``name`` of the message a group's first component starts
#: (SillyTavern's ``example_user`` / ``example_assistant``).
MESSAGE_NAME = "messageName"
#: ContextFrame metadata: merge consecutive unnamed system messages when laid out
#: (SillyTavern's ``squash_system_messages``)
SQUASH_SYSTEM = "squashSystem"
#: Component metadata: the component's message is never squashed (``new_chat_prompt``)
NO_SQUASH = "noSquash"
#: ContextFrame metadata: the budget counts the messages as they are before
#: :data:`SQUASH_SYSTEM` merges them, as SillyTavern counts each prompt (with its message
#: framing) before ``squashSystemMessages`` (a legacy preset's); the request is still squashed
COUNT_UNSQUASHED = "countUnsquashed"
#: Component metadata: the component fills the room left after history as SillyTavern fills
#: it with dialogue examples: the value is its block (an int); each block is kept up to its
#: first message that does not fit, and later blocks are still tried (OA
#: ``populateDialogueExamples``). ``FILL_HEAD`` marks a block's ``[Example Chat]`` header,
#: kept only with the block's first message.
FILL_BLOCK = "fillBlock"
FILL_HEAD = "fillHead"
#: ContextFrame metadata: a roleplay prompt (a SillyTavern preset): the fit stage cuts text
#: between words with a bare ``…``, never a ``[... N tokens cut ...]`` marker
ROLEPLAY = "roleplay"
#: Inline metadata: the text is whole pieces (a world-info block's entries) that the fit may
#: keep a leading part of instead of dropping the text whole: ``{"items": [...], "head": str,
#: "tail": str}``, the text being ``head + "\n".join(items) + tail``
PIECES = "pieces"
#: ChatHistory metadata: ``False`` lets the fit cut the newest turn (the newest user message
#: and what follows it) like any other message; absent or ``True``, it is required
NEWEST_TURN = "newestTurn"
#: Component metadata: the component's budget category, where it is not its kind's
#: (:data:`compiler.fit.budgets.CATEGORY_OF`): the Author's Note beside ``main`` is ``authorsNote``
CATEGORY = "category"
#: ContextFrame metadata: messages keep the whitespace at their edges, as SillyTavern sends
#: a legacy preset's entries (only whitespace-only messages vanish)
AS_WRITTEN = "asWritten"
#: ContextFrame metadata: a SillyTavern preset's Claude settings, for the Anthropic dialect
#: to send the request as SillyTavern's ``convertClaudeMessages`` converts it (absent: a
#: template's frame). A dict: ``useSysPrompt`` (bool, the preset's ``claude_use_sysprompt``),
#: ``opening`` (its ``human_sysprompt_message``, macros filled), ``prefill`` (its
#: ``assistant_prefill``, macros filled), ``user`` and ``char`` (the persona's and the card's
#: names, written before dialogue examples)
CLAUDE = "claude"
#: ContextFrame metadata: a SillyTavern preset's settings for Gemini, to lower the frame as
#: SillyTavern 1.12.6 sends Google (:mod:`compiler.providers.gemini_tavern`):
#: ``{"systemInstruction": use_makersuite_sysprompt, "user": the persona's name, "char": the
#: card's name, "stop": SillyTavern's own stop strings for Google}``
TAVERN_GEMINI = "tavernGemini"


class ThinkingBlock(TypedDict):
    """An Anthropic thinking block as the model returned it (sent back unchanged)."""

    thinking: str
    signature: str


class ToolCall(TypedDict):
    """A call an assistant message made: ``arguments`` is a JSON object. A provider's
    signature rides with it, sent back as received: Gemini's ``thoughtSignature``, and the
    Anthropic ``thinking`` block (its text and ``signature``) that preceded the call."""

    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: NotRequired[str]
    thinking: NotRequired[ThinkingBlock]


class Message(TypedDict):
    """One chat message inside a ChatHistory or ToolResults component."""

    role: Role
    content: str | None
    name: NotRequired[str]
    toolCalls: NotRequired[list[ToolCall]]
    toolCallId: NotRequired[str]
    #: a tool result that reports a failure (the run's ``isError``): sent as Anthropic's
    #: ``is_error`` and Gemini's ``response.error``; its text is the error's
    isError: NotRequired[bool]
    origin: NotRequired[str]  # "injection" (preset text) or "unmaterialized"; never lowered
    at: NotRequired[str]  # where an unmaterialized macro is (its entry); never lowered
    #: the budget category of text placed inside a chat history (``worldInfo``,
    #: ``authorsNote``, ...; see :data:`compiler.fit.budgets.IN_CHAT`); a message without
    #: one is the chat's own (``history``). Never lowered
    category: NotRequired[str]
    #: parts of such a message's content in another category than ``category``:
    #: (category, start, end) character offsets. Never lowered
    spans: NotRequired[list[tuple[str, int, int]]]


class ToolSpec(TypedDict):
    """A tool the model may call: dotted internal name, provider-facing alias, schema."""

    name: str
    alias: str
    description: str
    parameters: dict[str, Any]
    requireApproval: bool


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Component(_Model):
    """One typed piece of the prompt, with where it came from and how it may be cut."""

    id: str
    kind: ComponentKind
    source: str
    resource: str | None = None
    token_budget: int | None = None
    priority: int = 0
    required: bool = False
    strategy: Strategy | None = None
    role: Role = "system"
    group: int = 0  # inline components of one group and role share a message
    inline_content: str | None = None
    messages: Sequence[Message] | None = None
    tools: list[ToolSpec] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def content_hash(self) -> str:
        """sha256 over the content (text, messages or tools), stable across runs."""
        payload: Any = self.inline_content
        if self.messages is not None:
            payload = self.messages
        elif self.tools is not None:
            payload = self.tools
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ContextFrame(_Model):
    """The assembled components in prompt order, before fitting or after."""

    components: list[Component]
    metadata: dict[str, Any] = Field(default_factory=dict)
