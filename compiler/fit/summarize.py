"""Summaries: a Summarizer protocol, a deterministic extractive summarizer, a cache.

Internal: the API is :mod:`compiler.fit`.

Order of preference for a component's summary (:class:`SummaryChain`):

1. a precomputed summary: ``component.metadata["summary"]`` (the assembler puts one there
   from the workspace's ``summaries/`` root or the run context), or one passed to
   ``compile(summaries={component id or kind: text})``;
2. the user-supplied callable (for an LLM), when one is configured;
3. :class:`ExtractiveSummarizer`: no network, deterministic, and cheap on long inputs (it
   reads a sample of at most ``picks`` messages or sentences, never the whole of a long cut
   history: sentences evenly spaced; messages on a grid that stays put as the cut moves).

Whatever a summarizer returns is fitted to the target by whole sentences
(:func:`~compiler.fit.truncate.fit_sentences`): never a fragment cut mid-word, never a
``[... N tokens cut ...]`` marker. No summarizer is asked for fewer than
:data:`MIN_SUMMARY_TOKENS` tokens (about one sentence of 20 words): below that, there is no
summary and the room goes to what it would have stood for. The caller's callable is asked
at most once per compile for one piece of content (the chat history: once; a tool result:
once): a fit that runs again (the allocator's exact-count loop, a history walk giving the
room a short summary left back to messages) reuses its answer, fitted to the new target.

Caches never key on object identity, and none is process-wide: summaries live in a
:class:`SummaryCache` the caller owns (a :class:`compiler.Session` holds one; or
``compile(summary_cache=...)``), else in a fresh one per compile. The extractive summarizer's
results are keyed by encoding, sample hash and target; a caller's callable's by content hash,
target and the callable's own ``cache_key`` attribute when it has one (give each summarizer
sharing a cache a distinct ``cache_key``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Protocol

from compiler._base.frame import Message
from compiler._base.tokens import TokenCounter
from compiler._records import record
from compiler.fit.truncate import fit_sentences, snap_back


@record(frozen=True)
class SummaryRequest:
    """What to summarize: a text, or the chat messages cut from a history, into a target."""

    component_id: str
    kind: str
    target_tokens: int
    text: str | None = None
    messages: Sequence[Message] = field(default_factory=tuple)


class Summarizer(Protocol):
    """Anything that turns a :class:`SummaryRequest` into text (None: cannot)."""

    def __call__(self, request: SummaryRequest) -> str | None: ...


_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")


#: The least a summarizer is asked for: about one sentence (20 words of English prose take
#: 25-30 tokens); a smaller room holds no useful summary and goes to what it would replace.
MIN_SUMMARY_TOKENS = 32


_SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s")


def _first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of ``text`` (up to the first end of a sentence followed by space),
    its whitespace runs made single spaces, at most ``limit`` characters (cut between
    words). Only the sentence is read: a long message is never normalized whole."""
    end = _SENTENCE_BREAK.search(text)
    head = " ".join((text if end is None else text[: end.start()]).split())
    if len(head) <= limit:
        return head
    return head[: snap_back(head, limit - 1)].rstrip() + "…"


def _grid(n: int, k: int) -> list[int]:
    """At most ``k`` indices of ``range(n)``: every ``step``-th from 0, ``step`` the least
    power of two that is few enough. While ``n`` grows the indices stay (new ones join at
    the end), and when the step doubles, half of them stay: a history cut that moves a
    little from turn to turn samples the same messages, so its summary stays the same."""
    step = 1
    while -(-n // step) > k:
        step *= 2
    return list(range(0, n, step))


def _spread(n: int, k: int) -> list[int]:
    """``k`` evenly spaced indices of ``range(n)``, first and last included."""
    if n <= k:
        return list(range(n))
    if k == 1:
        return [n - 1]
    return sorted({round(j * (n - 1) / (k - 1)) for j in range(k)})


class ExtractiveSummarizer:
    """Deterministic extractive summaries, no network: a sample of first sentences in order.

    History: one line per sampled message (``- name: first sentence``); text: the first
    sentence of each sampled paragraph-or-sentence. Lines are added in order while they fit.
    ``sentences``: a memo of first sentences by text (a :class:`SummaryCache`'s), shared
    turn after turn.
    """

    name = "extractive"

    def __init__(
        self,
        counter: TokenCounter,
        picks: int = 48,
        sentences: FirstSentences | None = None,
        samples: TextSamples | None = None,
    ) -> None:
        self.counter = counter
        self.picks = picks
        self.first = sentences.first if sentences is not None else _first_sentence
        self.samples = samples

    def lines(self, request: SummaryRequest) -> list[str]:
        first = self.first
        if not request.messages and self.samples is not None:  # a text seen before
            text = request.text or ""
            return self.samples.get(text, self.picks, lambda: self._text_lines(text))
        if request.messages:
            msgs = request.messages
            out = []
            for i in _grid(len(msgs), self.picks):
                m = msgs[i]
                content = m.get("content") or ""
                if not content.strip():
                    continue
                who = m.get("name") or m["role"]
                out.append(f"- {who}: {first(content)}")
            return out
        return self._text_lines(request.text or "")

    def _text_lines(self, text: str) -> list[str]:
        """The first sentence of each sampled paragraph-or-sentence of ``text``."""
        pieces = [p for p in _SENTENCE.split(text) if p.strip()]
        return [self.first(pieces[i]) for i in _spread(len(pieces), self.picks)]

    def __call__(self, request: SummaryRequest) -> str | None:
        """Whole lines, in order, while they fit (never a line cut short)."""
        return self.within(self.lines(request), request.target_tokens)

    def within(self, lines: list[str], target: int) -> str | None:
        """The first ``lines`` that fit ``target`` tokens (one more each for its newline).
        Not ``line + "\n"`` counted exactly: that leaves no room for what a dialect adds to
        the summary message beyond its empty frame (Gemini's system-note tag), and the
        summary would then not fit at all."""
        kept: list[str] = []
        used = 0
        for line in lines:
            cost = self.counter.count(line) + 1
            if used + cost > target:
                break
            kept.append(line)
            used += cost
        return "\n".join(kept) or None

    def key(self, request: SummaryRequest, lines: list[str] | None = None) -> str:
        """What this summarizer's output depends on: the sample only (``lines``: the
        request's, already made)."""
        sample = self.lines(request) if lines is None else lines
        # each line with its length before it: no two samples join to the same text
        blob = "".join([f"{len(request.messages)};", *[f"{len(x)}:{x}" for x in sample]])
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class FirstSentences:
    """A bounded memo of :func:`_first_sentence` by text (texts up to :attr:`LONGEST`
    characters; it starts over after :attr:`ENTRIES`): the sampled messages of a moving cut
    are mostly the ones sampled last turn."""

    ENTRIES = 4096
    LONGEST = 2048

    def __init__(self) -> None:
        self._memo: dict[str, str] = {}

    def first(self, text: str) -> str:
        if len(text) > self.LONGEST:
            return _first_sentence(text)
        memo = self._memo
        found = memo.get(text)
        if found is None:
            found = _first_sentence(text)
            if len(memo) >= self.ENTRIES:
                memo.clear()
            memo[text] = found
        return found


class TextSamples:
    """A bounded memo of the extractive summarizer's sample of a text (its lines), by text:
    a tool result or a file summarized turn after turn is split into sentences once. At
    most :attr:`ENTRIES` texts and :attr:`CHARS` characters of them (then it starts over);
    a text longer than :attr:`LONGEST` is split every time."""

    ENTRIES = 1024
    CHARS = 16 * 1024 * 1024
    LONGEST = 1024 * 1024

    def __init__(self) -> None:
        self._memo: dict[tuple[int, str], list[str]] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, text: str, picks: int, make: Callable[[], list[str]]) -> list[str]:
        found = self._memo.get((picks, text))
        if found is not None:
            return list(found)
        lines = make()
        if len(text) <= self.LONGEST:
            with self._lock:
                if len(self._memo) >= self.ENTRIES or self._chars + len(text) > self.CHARS:
                    self._memo.clear()
                    self._chars = 0
                if (picks, text) not in self._memo:
                    self._memo[(picks, text)] = lines
                    self._chars += len(text)
        return list(lines)


def _digest(value: object) -> str:
    blob = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def content_key(request: SummaryRequest) -> str:
    """The hash of everything a request holds (what a user callable may read)."""
    return _digest([request.kind, request.text, list(request.messages)])


class SummaryCache:
    """A bounded LRU of summaries by (summarizer, content hash, target tokens)."""

    def __init__(self, max_entries: int = 4096) -> None:
        self._data: OrderedDict[tuple[str, str, int], str | None] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()
        #: first sentences of the messages the extractive summarizer sampled
        self.sentences = FirstSentences()
        #: the extractive summarizer's samples of texts (tool results, files)
        self.samples = TextSamples()
        self.hits = 0
        self.misses = 0

    def get_or_make(self, key: tuple[str, str, int], make: Callable[[], str | None]) -> str | None:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
        value = make()
        with self._lock:
            self.misses += 1
            self._data[key] = value
            if len(self._data) > self._max:
                self._data.popitem(last=False)
        return value


@record
class SummaryChain:
    """Precomputed, then the user's callable, then extractive; cached; fitted to the target
    by whole sentences. One chain serves one compile."""

    counter: TokenCounter
    user: Summarizer | None = None
    #: every summary of this chain (the caller's cache, or one for this chain alone)
    cache: SummaryCache = field(default_factory=SummaryCache)
    #: the callable's answers in this compile, by what was summarized (see :meth:`_ask`)
    answers: dict[str, str | None] = field(default_factory=dict)

    def summarize(
        self, request: SummaryRequest, precomputed: str | None = None
    ) -> tuple[str, str] | None:
        """(text, which summarizer) within ``request.target_tokens``, or None. A summarizer
        is never asked for fewer than :data:`MIN_SUMMARY_TOKENS`; a precomputed summary, or
        an answer the callable gave earlier in this compile, is fitted to any target. The
        extractive summary of messages is whole lines whose own counts fit: its caller (the
        history) counts the message it makes exactly and fits it by whole lines."""
        target = request.target_tokens
        if target <= 0:
            return None
        if precomputed and precomputed.strip():
            text = fit_sentences(precomputed, target, self.counter)
            return (text, "precomputed") if text else None
        if self.user is not None:
            out = self._ask(self.user, request)
            text = fit_sentences(out, target, self.counter) if out else ""
            if text:
                return text, "callable"
        if target < MIN_SUMMARY_TOKENS:
            return None
        enc = self.counter.encoding_name
        extractive = ExtractiveSummarizer(
            self.counter, sentences=self.cache.sentences, samples=self.cache.samples
        )
        lines = extractive.lines(request)
        key = (f"extractive:{enc}", extractive.key(request, lines), target)
        if self.counter.local:
            out = self.cache.get_or_make(key, lambda: extractive.within(lines, target))
        else:  # counted by the caller's count function: not what the key (tiktoken) says
            out = extractive.within(lines, target)
        if out and request.messages:
            # whole lines whose counts fit the target; the history counts the message it
            # makes of them exactly, and fits it by whole lines (not counted twice here)
            return out, "extractive"
        text = fit_sentences(out, target, self.counter) if out else ""
        return (text, "extractive") if text else None

    def _ask(self, user: Summarizer, request: SummaryRequest) -> str | None:
        """The callable's answer, asked once per compile (and never for fewer than
        :data:`MIN_SUMMARY_TOKENS`): for a history, once per component (the cut moves a
        little between fits; the first answer stands for it); for a text, once per content.
        Across compiles, :attr:`cache` answers the same request."""
        memo = request.component_id if request.messages else content_key(request)
        if memo in self.answers:
            return self.answers[memo]
        if request.target_tokens < MIN_SUMMARY_TOKENS:
            return None
        tag = getattr(user, "cache_key", None)
        name = tag if isinstance(tag, str) else ""
        enc = self.counter.encoding_name
        key = (f"user:{name}:{enc}", content_key(request), request.target_tokens)
        if not isinstance(request.messages, list | tuple):  # as a list, as it always came
            request = dataclasses.replace(request, messages=list(request.messages))
        out = self.cache.get_or_make(key, lambda: user(request))
        self.answers[memo] = out
        return out
