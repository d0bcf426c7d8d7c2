"""Token counting: offline tiktoken encodings, model -> encoding, and a counting cache.

Internal: counting happens inside the fit stage.

tiktoken downloads its rank files on first use. This module never asks it to: the official
rank files come from the ``bpe-openai`` package's data (gzipped), are checked against the
sha256 that tiktoken itself expects for them (:func:`tiktoken.load.check_hash`), parsed as
:func:`tiktoken.load.load_tiktoken_bpe` parses them (which reads only a plain path or a
URL, and copies what it reads into a cache directory), and given to the public
:class:`tiktoken.Encoding` constructor with the split pattern and special tokens of
tiktoken's own ``tiktoken_ext.openai_public`` constructors (:data:`OFFLINE_ENCODINGS`; a
test fails when they drift from tiktoken's). Nothing touches the network and nothing in
tiktoken is patched (the loading and its on-disk cache of the parse:
:mod:`compiler._base.ranks`). Encodings load lazily, once per process; building o200k_base's
encoder takes more than a tenth of a second, so a counter counts ASCII text without it
(:mod:`compiler._base.ascii_bpe`, the same counts) until it has counted
:data:`ASCII_CHARS` characters of it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping

import tiktoken
import tiktoken.model

from compiler._base.ascii_bpe import AsciiCounter
from compiler._base.ranks import load_ascii_ranks, load_ranks
from compiler._records import record
from compiler.errors import TokenizerError, did_you_mean


@record(frozen=True)
class OfflineEncoding:
    """What tiktoken's constructor of an encoding holds, with its rank file made local."""

    rank_file: str  # in bpe-openai's data directory, gzipped
    expected_hash: str  # the sha256 tiktoken expects of the (uncompressed) rank file
    pat_str: str
    special_tokens: Mapping[str, int]


_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"
_CL100K_HASH = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_O200K_HASH = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_O200K_SPECIAL = {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018}

OFFLINE_ENCODINGS: dict[str, OfflineEncoding] = {
    "o200k_base": OfflineEncoding("o200k_base.tiktoken", _O200K_HASH, _O200K_PAT, _O200K_SPECIAL),
    "cl100k_base": OfflineEncoding(
        "cl100k_base.tiktoken",
        _CL100K_HASH,
        _CL100K_PAT,
        {
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_harmony": OfflineEncoding(
        "o200k_base.tiktoken",
        _O200K_HASH,
        _O200K_PAT,
        {
            **_O200K_SPECIAL,
            "<|startoftext|>": 199998,
            "<|endoftext|>": 199999,
            "<|reserved_200000|>": 200000,
            "<|reserved_200001|>": 200001,
            "<|return|>": 200002,
            "<|constrain|>": 200003,
            "<|reserved_200004|>": 200004,
            "<|channel|>": 200005,
            "<|start|>": 200006,
            "<|end|>": 200007,
            "<|message|>": 200008,
            "<|reserved_200009|>": 200009,
            "<|reserved_200010|>": 200010,
            "<|reserved_200011|>": 200011,
            "<|call|>": 200012,
        }
        | {f"<|reserved_{i}|>": i for i in range(200013, 201088)},
    ),
}
"""The encodings this package loads offline (tiktoken's own definitions, rank files local)."""

#: Encodings this package can load offline.
ENCODINGS = tuple(OFFLINE_ENCODINGS)

#: Encodings whose pre-tokenizer always splits between a newline and a ``-`` that follows
#: it (see :meth:`TokenCounter._seamed`): in their patterns a newline is matched only with
#: whitespace or at the end of a run of punctuation, never before a ``-``.
SEAMED = frozenset({"o200k_base", "cl100k_base"})
MAX_SEAMS = 1024  # more pieces than this: a text is encoded whole (the cache is not flooded)


#: The character classes of the estimate (:class:`ScriptScale`): a name and the code points
#: it covers. A character's class is read off the first byte of its UTF-8 form (so a class
#: is a span of code points: what one lead byte starts), which a C-speed
#: :meth:`bytes.translate` maps for a whole text at once. ASCII is no class of its own: the
#: o200k_base tokens of a text are all weighted by :attr:`ScriptScale.ascii`.
SCRIPT_CLASSES: tuple[tuple[str, str], ...] = (
    ("latin-1", "U+0080-00FF (accented Latin of Western Europe)"),
    ("latin-ext", "U+0100-02FF (Central European, Turkish, Vietnamese letters; IPA)"),
    ("greek", "U+0300-03FF (combining marks, Greek)"),
    ("cyrillic", "U+0400-053F"),
    ("hebrew", "U+0540-05FF (Armenian, Hebrew)"),
    ("arabic", "U+0600-07FF (Arabic, Syriac, Thaana, N'Ko)"),
    ("indic-thai", "U+0800-0FFF (Devanagari to Sinhala, Thai, Lao, Tibetan)"),
    ("u1000", "U+1000-1FFF (Myanmar, Georgian, Hangul Jamo, Ethiopic, Khmer, Vietnamese)"),
    ("symbols", "U+2000-2FFF (punctuation, arrows, math, dingbats)"),
    ("cjk-kana", "U+3000-3FFF (CJK punctuation, Hiragana, Katakana)"),
    ("han", "U+4000-9FFF (CJK ideographs)"),
    ("hangul", "U+A000-DFFF (Yi, Hangul syllables)"),
    ("forms", "U+E000-FFFF (private use, compatibility, fullwidth forms)"),
    ("astral", "U+10000 and up (emoji, rare ideographs, historic scripts)"),
)

#: UTF-8 lead byte -> the class's byte (1 + its index; ASCII and continuation bytes: 0)
_LEAD_SPANS = (
    (0xC2, 0xC3),
    (0xC4, 0xCB),
    (0xCC, 0xCF),
    (0xD0, 0xD4),
    (0xD5, 0xD7),
    (0xD8, 0xDF),
    (0xE0, 0xE0),
    (0xE1, 0xE1),
    (0xE2, 0xE2),
    (0xE3, 0xE3),
    (0xE4, 0xE9),
    (0xEA, 0xED),
    (0xEE, 0xEF),
    (0xF0, 0xF7),
)
_LEAD_TABLE = bytes(
    next((i + 1 for i, (lo, hi) in enumerate(_LEAD_SPANS) if lo <= b <= hi), 0) for b in range(256)
)
_CLASS_BYTES = tuple(bytes([i + 1]) for i in range(len(SCRIPT_CLASSES)))


def script_chars(text: str) -> list[int]:
    """How many characters of ``text`` fall in each of :data:`SCRIPT_CLASSES` (in order;
    ASCII characters are in none). At C speed: one UTF-8 encoding, one byte translation,
    one count per class."""
    if text.isascii():
        return [0] * len(SCRIPT_CLASSES)
    leads = text.encode("utf-8", "surrogatepass").translate(_LEAD_TABLE)
    return [leads.count(code) for code in _CLASS_BYTES]


@record(frozen=True)
class ScriptScale:
    """An estimate of another tokenizer's count from the o200k_base count, per script.

    ``estimate(text, n)``, with ``n`` the text's o200k_base tokens, is
    ``per_text + ceil(ascii * n + sum(surcharge[c] * chars of class c))`` (0 for no text):
    every token weighted by the share ``ascii`` (what English and code need), plus, per
    non-ASCII character, its class's surcharge (:data:`SCRIPT_CLASSES`), the tokens that
    script costs beyond its o200k count, plus ``per_text`` tokens for the few a short text
    may lose at its edges. ``ascii`` and the surcharges are in thousandths, so the sum is
    exact integer arithmetic (deterministic). Characters are additive, so a text of several
    scripts pays each script's share. At least the o200k_base count (``ascii`` is at least
    1000), and the estimate rises wherever that count does."""

    ascii: int
    surcharges: tuple[int, ...]
    per_text: int = 0

    def estimate(self, text: str, n: int) -> int:
        """The estimate of ``text``, whose o200k_base count is ``n``."""
        if not text:
            return 0
        total = self.ascii * n
        if not text.isascii():
            chars = script_chars(text)
            total += sum(w * c for w, c in zip(self.surcharges, chars, strict=True))
        return self.per_text - (-total // 1000)


#: The factors the Anthropic and Gemini estimates use: fitted by
#: benchmarks/script_factors.py (which prints this literal) so that the estimate of every
#: sample text of benchmarks/script_samples.py, whole and sentence by sentence, is at least
#: 10% above the larger of Claude's count (the tokenizer the ``anthropic`` SDK shipped up
#: to 0.34) and cl100k_base's; classes no sample is mostly made of take the largest
#: surcharge measured. The docs' "Token counting" page has the table.
SCRIPT_SCALE = ScriptScale(
    ascii=1140,
    surcharges=(2330, 2330, 930, 320, 760, 740, 1860, 2130, 110, 340, 460, 610, 170, 1060),
    per_text=2,
)


def encoding_name_for_model(model: str) -> str:
    """The tiktoken encoding a model uses (tiktoken's own table). Unknown: a clear error."""
    try:
        name = tiktoken.model.encoding_name_for_model(model.split("/")[-1])
    except KeyError:
        raise TokenizerError(
            code="tokenizer.unknown_model",
            message=f"no known tokenizer for model '{model}'",
            hint="pass --encoding o200k_base (or cl100k_base) to count with that encoding",
        ) from None
    if name not in ENCODINGS:
        raise TokenizerError(
            code="tokenizer.unknown_model",
            message=f"model '{model}' uses {name}, which is not available offline",
            hint=f"pass --encoding with one of {', '.join(ENCODINGS)}",
        )
    return name


def get_encoding(name: str) -> tiktoken.Encoding:
    """Load a tiktoken encoding offline (cached for the process)."""
    encoding = _ENCODINGS.get(name)
    if encoding is not None:
        return encoding
    spec = OFFLINE_ENCODINGS.get(name)
    if spec is None:
        raise TokenizerError(
            code="tokenizer.unknown_encoding",
            message=f"unknown encoding '{name}'",
            hint=did_you_mean(name, ENCODINGS) or f"known: {', '.join(ENCODINGS)}",
        )
    with _LOADING:
        encoding = _ENCODINGS.get(name)
        if encoding is None:
            encoding = tiktoken.Encoding(
                name,
                pat_str=spec.pat_str,
                mergeable_ranks=load_ranks(spec.rank_file, spec.expected_hash),
                special_tokens=dict(spec.special_tokens),
            )
            _ENCODINGS[name] = encoding
    return encoding


_ENCODINGS: dict[str, tiktoken.Encoding] = {}  # the encodings loaded in this process
_LOADING = threading.Lock()


@functools.cache
def ascii_counter(name: str) -> AsciiCounter:
    """The counter of ASCII text for encoding ``name`` (its ASCII ranks loaded once per
    process)."""
    spec = OFFLINE_ENCODINGS[name]
    return AsciiCounter(name, load_ascii_ranks(spec.rank_file, spec.expected_hash))


ASCII_CHARS = 1_000_000
"""The characters of ASCII text a counter counts without tiktoken's encoder
(:mod:`compiler._base.ascii_bpe`, about twice as slow per character) before it loads the
encoder: about where the encoder's load (0.15 s) pays for itself. A counter uses the encoder
as soon as any counter of the process has loaded it."""


MAX_CACHED_CHARS = 64 * 1024 * 1024
"""The most characters of text a counter's cache holds (a long-lived session's counter
would otherwise keep every text it ever counted, up to its entry bound)."""


class TokenCounter:
    """Counts tokens of text for one encoding, caching by content across compiles.

    ``count_fn`` replaces tiktoken's count with the caller's (e.g. one that asks the
    provider's count-tokens endpoint through its SDK); its answers are cached per content in
    this counter, which the caller owns and reuses across turns. Cutting text to a token
    count still uses ``encoding``; the allocator's exact-count loop settles any difference.
    The cache keeps at most ``max_entries`` texts and ``max_chars`` characters of them, then
    starts over; a longer text is counted every time. With a ``scale``
    (:meth:`scaled`), each count is that estimate of the text's tiktoken count (an upper
    bound of other tokenizers' counts: the Anthropic and Gemini dialects count so).
    """

    def __init__(
        self,
        encoding: str,
        max_entries: int = 200_000,
        *,
        count_fn: Callable[[str], int] | None = None,
        max_chars: int = MAX_CACHED_CHARS,
        scale: ScriptScale | None = None,
    ) -> None:
        self.encoding_name = encoding
        self.scale = None if count_fn is not None else scale
        """The estimate this counter counts (:meth:`ScriptScale.estimate` of each text's
        tiktoken count), or None: tiktoken's count (or the caller's ``count_fn``'s) as it is."""
        self._scaled: dict[ScriptScale, TokenCounter] = {}
        self._encoding: tiktoken.Encoding | None = None
        self._ascii_chars = 0  # of text counted without the encoder (see _ordinary)
        self._cache: dict[str, int] = {}
        self._max = max_entries
        self._max_chars = max_chars
        self.cached_chars = 0
        """The characters of the texts the cache holds (it starts over past ``max_chars``)."""
        self._lock = threading.Lock()  # over the cache's changes, not its reads
        self._count_fn = count_fn
        if encoding not in ENCODINGS:
            get_encoding(encoding)  # raises the friendly error now, not mid-fit

    def scaled(self, scale: ScriptScale | None) -> TokenCounter:
        """The counter of ``scale``'s estimate over this counter's encoding: made once and
        kept with this counter (its cache as long-lived as this one's, with the same
        bounds), so estimates and plain counts never share a cache. This counter itself when
        ``scale`` is None or already its own, or when a caller's ``count_fn`` counts (the
        provider's own count needs no estimate)."""
        if scale is None or scale == self.scale or self._count_fn is not None:
            return self
        with self._lock:
            counter = self._scaled.get(scale)
            if counter is None:
                counter = TokenCounter(
                    self.encoding_name, self._max, max_chars=self._max_chars, scale=scale
                )
                counter._encoding = self._encoding
                self._scaled[scale] = counter
            return counter

    @property
    def encoding(self) -> tiktoken.Encoding:
        if self._encoding is None:
            self._encoding = get_encoding(self.encoding_name)
        return self._encoding

    def count(self, text: str) -> int:
        """Tokens of ``text`` as ordinary text (special-token strings count as text), or
        their estimate with a :attr:`scale`."""
        if not text:
            return 0
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        if self._count_fn is not None:
            n = int(self._count_fn(text))
            if n < 0:
                raise TokenizerError(
                    code="tokenizer.bad_count",
                    message=f"the token counter answered {n} for a text of {len(text)} chars",
                )
        elif "\n-" in text and self.encoding_name in SEAMED:
            n = self._seamed(text)
        else:
            n = self._ordinary(text)
            if self.scale is not None:
                n = self.scale.estimate(text, n)
        self._keep(text, n)
        return n

    def _ordinary(self, text: str) -> int:
        """tiktoken's count of ``text`` as ordinary text: from its encoder, or, for ASCII
        text while this counter's ASCII texts, this one included, add up to at most
        :data:`ASCII_CHARS` characters and no counter of the process has loaded the
        encoder, the same count without it
        (:mod:`compiler._base.ascii_bpe`, unless a piece is too long to merge there)."""
        encoding = self._encoding
        if encoding is None:
            encoding = _ENCODINGS.get(self.encoding_name)
            share = self._ascii_chars + len(text)
            if encoding is None and share <= ASCII_CHARS and text.isascii():
                self._ascii_chars = share
                n = ascii_counter(self.encoding_name).count(text)
                if n is not None:  # else a piece too long to merge here
                    return n
            self._encoding = encoding = encoding or self.encoding
        return len(encoding.encode_ordinary(text))

    def _seamed(self, text: str) -> int:
        """Tokens of a text with lines that start with ``-`` (a list; a history's summary):
        the sum of its pieces split before each such line, each piece counted as
        :meth:`counts` counts it, so a line counted before (the same summary line turn after
        turn, under a note that names a new count) is not encoded again. Exact: no
        alternative of the o200k_base or cl100k_base pre-tokenizer pattern (:data:`SEAMED`)
        matches a newline and a ``-`` after it, so the whole text splits at each seam too.
        Whole when it would make more than :data:`MAX_SEAMS` pieces. With a :attr:`scale`,
        the sum of the pieces' estimates: at least the whole text's (each piece rounds up
        and adds its ``per_text``), so still an upper bound, and the same sum every time."""
        if text.count("\n-") >= MAX_SEAMS:  # counted, not split: no copy of a hostile text
            n = self._ordinary(text)
            return n if self.scale is None else self.scale.estimate(text, n)
        parts = text.split("\n-")
        # each piece but the last keeps the newline that ends it, each but the first its "-"
        pieces = [f"{part}\n" for part in parts[:-1]] + [parts[-1]]
        pieces[1:] = [f"-{piece}" for piece in pieces[1:]]
        return sum(self.counts(pieces))

    def _keep(self, text: str, n: int) -> None:
        """Remember ``n`` as the count of ``text`` (not a text longer than the cache holds;
        a full cache starts over)."""
        if len(text) > self._max_chars:
            return
        with self._lock:  # the tally and the cache change together (a server's threads)
            if text in self._cache:
                return
            if len(self._cache) >= self._max or self.cached_chars + len(text) > self._max_chars:
                self._cache.clear()
                self.cached_chars = 0
            self._cache[text] = n
            self.cached_chars += len(text)

    def cache_size(self) -> tuple[int, int]:
        """The texts and characters this counter's cache holds, its scaled counters' included."""
        with self._lock:
            scaled = list(self._scaled.values())
            texts, chars = len(self._cache), self.cached_chars
        for counter in scaled:
            more = counter.cache_size()
            texts, chars = texts + more[0], chars + more[1]
        return texts, chars

    def total(self, texts: list[str]) -> int:
        """The tokens of ``texts`` summed, as :meth:`count` counts each (see :meth:`counts`)."""
        return sum(self.counts(texts))

    @property
    def local(self) -> bool:
        """Whether counting is tiktoken's here (no caller's ``count_fn``, which may be a
        request to a provider: then nothing is counted that is not needed)."""
        return self._count_fn is None

    def counts(self, texts: list[str]) -> list[int]:
        """Each text's :meth:`count`: the ones counted before looked up, the others encoded
        at C speed and remembered as :meth:`count` remembers them; with a caller's
        ``count_fn``, :meth:`count` of each in turn (it is asked what one by one asks it)."""
        if self._count_fn is not None:
            return list(map(self.count, texts))
        hits: list[int | None] = list(map(self._cache.get, texts))
        if None not in hits:
            return hits  # type: ignore[return-value]  # no None among them
        new = list({t: None for t, n in zip(texts, hits, strict=True) if n is None and t})
        if self._encoding is not None:
            found = dict(zip(new, map(len, map(self._encoding.encode_ordinary, new)), strict=True))
        else:
            found = dict(zip(new, map(self._ordinary, new), strict=True))
        if self.scale is not None:
            estimate = self.scale.estimate
            found = {text: estimate(text, n) for text, n in found.items()}
        cache = self._cache
        with self._lock:
            if any(map(cache.__contains__, new)):  # kept by another thread meanwhile
                new = [t for t in new if t not in cache]
            chars = sum(map(len, new))
            room = len(cache) + len(new) < self._max
            room = room and self.cached_chars + chars <= self._max_chars
            if room:
                cache.update(found)  # room for all: kept at once
                self.cached_chars += chars
        if not room:
            for text, n in found.items():  # kept as count() keeps them
                self._keep(text, n)
        found[""] = 0
        return [n if n is not None else found[t] for n, t in zip(hits, texts, strict=True)]

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode_ordinary(text)


def counter_for(encoding: str) -> TokenCounter:
    """A new counter of an encoding: its cache lives as long as the caller keeps it (a
    :class:`compiler.Session` keeps one per encoding; nothing is cached per process but the
    loaded encodings)."""
    return TokenCounter(encoding)
