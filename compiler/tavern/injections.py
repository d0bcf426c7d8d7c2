"""In-chat injections: preset entries with ``injection_position`` 1 and SillyTavern's in-chat
extension prompts (the Author's Note, the Character's Note, world info at depth, the
persona at depth), placed inside the history.

Internal: the API is :mod:`compiler.tavern`.

Follows SillyTavern's ``populationInjectionPrompts`` (public/scripts/openai.js, chat
completion) and ``getExtensionPrompt`` (public/script.js):

- only enabled entries with ``injection_position`` 1 and non-empty ``content`` take part;
  an entry with an ``injection_trigger`` list only fires for those generation types;
- depth ``d`` means "``d`` original messages follow it": depth 0 goes after the newest
  message, depth 1 just before it, a depth past the start goes to the top of the history;
  injected messages never count towards another entry's depth;
- an entry or an extension prompt (:class:`ExtensionPrompt`) only takes part at a whole
  depth from 0 to 1000 (SillyTavern's ``MAX_INJECTION_DEPTH``: it injects depths 0-1000
  only) and with a known role;
- at one depth, entries are grouped by ``injection_order`` (default 100), higher order
  first; inside a group, one message per role in the order system, user, assistant. Its
  text is the group's entries of that role joined by ``\\n``, then (in the order-100 group
  only) the extension prompts of that depth and role sorted by key (``2_floating_prompt``,
  ``DEPTH_PROMPT``, ``PERSONA_DESCRIPTION``, ``customDepthWI-d-r``), each trimmed, joined
  by ``\\n``; the two parts are trimmed and joined by ``\\n``; a blank result is dropped;
- SillyTavern builds that list newest-first and reverses the chat afterwards, so in the
  final (oldest-first) history the messages of one depth appear in reverse: the
  highest-order system message ends up last, nearest the end ("most important go lower").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from compiler._base.frame import PromptRole
from compiler._records import record
from compiler.tavern.preset import PresetPrompt

T = TypeVar("T")
ROLE_ORDER: tuple[PromptRole, ...] = ("system", "user", "assistant")
#: SillyTavern's MAX_INJECTION_DEPTH: deeper in-chat prompts are never injected
MAX_INJECTION_DEPTH = 1000
#: the injection order SillyTavern's extension prompts join
EXTENSION_ORDER = 100


@record(frozen=True)
class ExtensionPrompt:
    """One of SillyTavern's in-chat extension prompts (``setExtensionPrompt`` with position
    IN_CHAT): ``key`` orders the prompts of one depth and role, ``content`` is filled;
    ``category`` is its budget category in the ledger (see :func:`message_category`)."""

    key: str
    role: PromptRole
    depth: int
    content: str
    category: str = "injection"


Source = PresetPrompt | ExtensionPrompt

#: the budget category of a preset's own in-chat entries (``injection_position`` 1)
INJECTION = "injection"


def category_of(source: Source) -> str:
    """The budget category of one part of an injected message."""
    return source.category if isinstance(source, ExtensionPrompt) else INJECTION


def message_category(
    text: str, sources: Sequence[Source]
) -> tuple[str, list[tuple[str, int, int]]]:
    """The budget category of an injected message made of ``sources`` (see
    :func:`injection_messages`), and the parts of ``text`` in other categories as
    (category, start, end): a message joins the entries and extension prompts of one depth
    and role, say the Character's Note and world info at depth 4. The first part's category
    is the message's (and takes its joins); a part not found in ``text`` stays in it."""
    extensions = [s for s in sources if isinstance(s, ExtensionPrompt)]
    extensions.sort(key=lambda e: e.key)  # as the text joins them
    ordered: list[Source] = [s for s in sources if isinstance(s, PresetPrompt)]
    ordered += extensions
    main = category_of(ordered[0]) if ordered else INJECTION
    spans: list[tuple[str, int, int]] = []
    at = 0
    for source in ordered:
        part = source.content.strip()
        start = text.find(part, at) if part else -1
        if start < 0:
            continue
        at = start + len(part)
        if category_of(source) != main:
            spans.append((category_of(source), start, at))
    return main, spans


def _fires(prompt: PresetPrompt, generation_type: str) -> bool:
    return (
        prompt.enabled
        and prompt.in_chat
        and bool(prompt.content)
        and (not prompt.injection_trigger or generation_type in prompt.injection_trigger)
    )


def _joint(members: Sequence[PresetPrompt], extensions: Sequence[ExtensionPrompt]) -> str:
    """One message's text as SillyTavern joins it: the entries, then the extension prompts."""
    entries = "\n".join(p.content for p in members)
    extra = "\n".join(e.content.strip() for e in sorted(extensions, key=lambda e: e.key))
    return "\n".join(part.strip() for part in (entries, extra) if part)


def injection_messages(
    prompts: Sequence[PresetPrompt], extensions: Sequence[ExtensionPrompt] = ()
) -> list[tuple[PromptRole, str, list[Source]]]:
    """The messages one depth's entries and extension prompts become, in SillyTavern's
    (newest-first) build order."""
    out: list[tuple[PromptRole, str, list[Source]]] = []
    orders = {p.injection_order for p in prompts} | ({EXTENSION_ORDER} if extensions else set())
    for order in sorted(orders, reverse=True):
        group = [p for p in prompts if p.injection_order == order]
        for role in ROLE_ORDER:
            members = [p for p in group if p.role == role]
            extra = [e for e in extensions if e.role == role and order == EXTENSION_ORDER]
            text = _joint(members, extra)
            if text:
                out.append((role, text, [*members, *extra]))
    return out


def apply_injections(
    history: Sequence[T],
    injections: Iterable[PresetPrompt],
    make_message: Callable[[PromptRole, str, list[Source]], T],
    *,
    extensions: Iterable[ExtensionPrompt] = (),
    generation_type: str = "normal",
    answers_a_call: Callable[[T], bool] | None = None,
) -> list[T]:
    """``history`` (oldest first) with the in-chat injections and ``extensions`` inserted at
    their depths.

    ``make_message(role, content, sources)`` builds one injected message; the history items
    are never changed. Entries that are not in-chat injections are ignored, so a whole
    ordered prompt list can be passed. With ``answers_a_call`` (true for a tool result), an
    injection never lands between a tool call and its results, which no provider accepts:
    it moves up to just before the call.
    """
    at = _Placement(injections, extensions, generation_type)
    return at.inserted(list(history), make_message, answers_a_call)[0]


def inject_newest(
    history: Sequence[T],
    injections: Iterable[PresetPrompt],
    make_message: Callable[[PromptRole, str, list[Source]], T],
    *,
    extensions: Iterable[ExtensionPrompt] = (),
    generation_type: str = "normal",
    answers_a_call: Callable[[T], bool] | None = None,
) -> tuple[int, list[T]]:
    """:func:`apply_injections` reading only the newest messages: ``(k, tail)`` such that
    ``history[:len(history) - k] + tail`` is what it returns. The newest messages down to
    the deepest injection are read; more (up to all) only when an injection would land at
    the top of those, where the older ones decide its place."""
    at = _Placement(injections, extensions, generation_type)
    n = len(history)
    k = min(n, at.deepest + 1)
    while True:
        tail, topped = at.inserted(list(history[n - k :]), make_message, answers_a_call)
        if not topped or k == n:
            return k, tail
        k = min(n, 2 * k)


class _Placement:
    """The injections and extension prompts that take part, by depth."""

    def __init__(
        self,
        injections: Iterable[PresetPrompt],
        extensions: Iterable[ExtensionPrompt],
        generation_type: str,
    ) -> None:
        self.entries: dict[int, list[PresetPrompt]] = {}  # by depth, each in its given order
        for p in injections:
            if _fires(p, generation_type) and p.injection_depth <= MAX_INJECTION_DEPTH:
                self.entries.setdefault(p.injection_depth, []).append(p)
        self.placed: dict[int, list[ExtensionPrompt]] = {}
        for e in extensions:
            if e.content and 0 <= e.depth <= MAX_INJECTION_DEPTH:
                self.placed.setdefault(e.depth, []).append(e)
        self.deepest = max(self.entries.keys() | self.placed.keys(), default=-1)

    def inserted(
        self,
        history: list[T],
        make_message: Callable[[PromptRole, str, list[Source]], T],
        answers_a_call: Callable[[T], bool] | None,
    ) -> tuple[list[T], bool]:
        """``history`` with the messages inserted, and whether a placement reached the top
        of it (where older messages, had there been any, could decide otherwise)."""
        newest_first: list[T] = history[::-1]
        inserted = 0
        topped = False
        for depth in sorted(self.entries.keys() | self.placed.keys()):
            built = injection_messages(self.entries.get(depth, []), self.placed.get(depth, []))
            if not built:
                continue
            at = min(depth + inserted, len(newest_first))
            while answers_a_call is not None and 0 < at <= len(newest_first):
                if not answers_a_call(newest_first[at - 1]):
                    break
                at += 1  # inside a call and its results: before the call instead
            topped = topped or at >= len(newest_first)
            newest_first[at:at] = [make_message(role, text, src) for role, text, src in built]
            inserted += len(built)
        newest_first.reverse()
        return newest_first, topped
