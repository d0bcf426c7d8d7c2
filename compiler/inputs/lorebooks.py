"""The lorebooks of a run: global ones, the character's, the chat's and the persona's, loaded
once each and merged into SillyTavern's candidate order.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.

Run-context fields (docs: "The run context"):

- ``worldInfo`` (a path) is a global lorebook, as if selected in SillyTavern's global World
  Info list; ``lorebooks.global`` adds more (SillyTavern's ``world_info.globalSelect``);
- the character's: the card's embedded ``character_book`` (as after SillyTavern's "Import
  Card Lore", converted by :mod:`compiler.inputs.character_book` and named as SillyTavern names
  it: the book's ``name``, else ``"<card name>'s Lorebook"``) unless ``useCharacterBook`` is
  false, then ``lorebooks.character`` (the ``extraBooks`` of ``world_info.charLore``);
- ``lorebooks.chat`` (``chat_metadata.world_info``) and ``lorebooks.persona`` (the persona's
  lorebook, from SillyTavern after 1.12.6).

Each item is a path (a world file or a character book JSON, relative to the run context) or
an inline lorebook object. A book's name (SillyTavern's world name, the ``world`` of its
entries' timed effects) is its file name without ``.json``; an inline book's is its
``name`` field, else ``"<kind> lorebook <n>"``. A book is loaded once: one with the name,
the file or the entries of a book already loaded is skipped, looking at the global books
first, then the chat's, the character's and the persona's (SillyTavern skips a character
or chat world that is also global, and a character world that is the chat's); the
embedded book is also skipped when a given file has its name (the user passed the world it
was imported as).

Order (``getSortedEntries``): the chat's entries, then the persona's, then by
``world_info_character_strategy``: 0 evenly (global and character entries together), 1
character first, 2 global first; each group by descending ``order``, stable.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from compiler._records import record
from compiler.errors import ContextError
from compiler.inputs.read import join_path, resolve

if TYPE_CHECKING:  # a lorebook's models are made when a run gives one (read_lorebook)
    from compiler.inputs.lorebook import Lorebook, WorldEntry

BookKind = Literal["global", "character", "chat", "persona"]
BookRef = str | dict[str, Any]
BookKey = tuple[str, str, bytes]  # an inline book's run context, JSON path and pickled data

MAX_LOREBOOKS = 64
"""The most lorebooks a run may name (``context.too_many_lorebooks`` above it)."""
MAX_WORLD_ENTRIES = 50_000
"""The most entries all of a run's lorebooks may hold together."""


class Lorebooks(BaseModel):
    """The run context's ``lorebooks``: each a path or an inline lorebook, or a list."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    global_: list[BookRef] = Field(default=[], alias="global")
    character: list[BookRef] = []
    chat: list[BookRef] = []
    persona: list[BookRef] = []

    @field_validator("global_", "character", "chat", "persona", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str | dict) else value


@record(frozen=True)
class BookSource:
    """One loaded lorebook: whose it is, its name (SillyTavern's world name), where it was
    read (for diagnostics) and the book."""

    kind: BookKind
    name: str
    file: str
    book: Lorebook


def _digest(book: Lorebook) -> str:
    return hashlib.sha256(book.model_dump_json().encode("utf-8", "surrogatepass")).hexdigest()


class BookMemo:
    """The inline lorebooks a session's last compile read, each by where it was given and
    its data, with its digest: a turn that gives the same book does not parse or digest
    it again (a lorebook of hundreds of entries took most of a turn). Reading a lorebook
    reports nothing, and nothing changes a book once read (the scan reads copies of its
    entries). Holds one compile's books, swapped whole at its end (thread-safe)."""

    __slots__ = ("_digested", "_last", "_sorted")

    def __init__(self) -> None:
        self._last: dict[BookKey, tuple[Lorebook, str]] = {}
        self._digested: tuple[Lorebook | None, str] = (None, "")
        self._sorted: tuple[list[tuple[BookKind, str, Lorebook]], int, list[WorldEntry]] = (
            [],
            0,
            [],
        )

    def get(self, key: BookKey) -> tuple[Lorebook, str] | None:
        return self._last.get(key)

    def keep(self, read: dict[BookKey, tuple[Lorebook, str]]) -> None:
        self._last = read

    def digest(self, book: Lorebook) -> str:
        """The digest of a book read elsewhere (a card's, kept by the session's card memo):
        the last one's when it is the very same book."""
        last, digest = self._digested
        if last is not book:
            digest = _digest(book)
            self._digested = (book, digest)
        return digest

    def sorted_entries(self, books: Sequence[BookSource], strategy: int) -> list[WorldEntry]:
        """:func:`sorted_entries`, the last compile's when it sorted these very book objects
        (the memo's, read again) by the same strategy: not copied entry by entry again."""
        key = [(b.kind, b.name, b.book) for b in books]
        last_key, last_strategy, last = self._sorted
        same = len(last_key) == len(key) and all(
            (k, n) == (lk, ln) and book is last_book
            for (k, n, book), (lk, ln, last_book) in zip(key, last_key, strict=True)
        )
        if not (same and strategy == last_strategy):
            last = sorted_entries(books, strategy)
            self._sorted = (key, strategy, last)
        return list(last)


class _Loader:
    """Reads the books in ownership order, each once."""

    def __init__(self, base_dir: Path, origin: str, memo: BookMemo | None = None) -> None:
        self.base_dir = base_dir
        self.origin = origin
        self.books: list[BookSource] = []
        self.seen: set[str] = set()
        self.entries = 0  # of the books kept
        self.memo = memo
        self.read: dict[BookKey, tuple[Lorebook, str]] = {}  # the inline books read, by key

    def add(self, kind: BookKind, ref: BookRef, where: str) -> None:
        if len(self.books) >= MAX_LOREBOOKS:
            raise ContextError(
                code="context.too_many_lorebooks",
                message=f"the run names more than {MAX_LOREBOOKS} lorebooks",
                file=self.origin,
                path=where,
            )
        if isinstance(ref, str):
            path = resolve(ref, self.base_dir)
            try:
                real = "file:" + os.path.realpath(path)
            except (OSError, ValueError):  # read_lorebook says what is wrong with it
                real = "file:" + str(path)
            if real in self.seen:
                return
            from compiler.inputs.lorebook import read_lorebook

            book = read_lorebook(path)
            self.keep(kind, book, _stem(path), str(path), real)
        else:
            book, digest = self._inline(ref, where)
            name = book.name or f"{kind} lorebook {len(self.books)}"
            self.keep(kind, book, name, where, digest=digest)

    def _inline(self, ref: dict[str, Any], where: str) -> tuple[Lorebook, str]:
        """An inline book and its digest: the memo's when it read the same data there. The
        data (plain JSON, checked and copied from the caller's) is known by its pickle: the
        same bytes are the same values of the same types in the same order (1, 1.0 and true
        differ), and pickling is about 3.5x faster than JSON text."""
        key = None
        if self.memo is not None:
            try:
                data = pickle.dumps(ref, protocol=pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, TypeError, ValueError, RecursionError):
                data = None  # not plain data: read every time
            key = None if data is None else (self.origin, where, data)
        found = self.memo.get(key) if self.memo is not None and key is not None else None
        if found is None:
            from compiler.inputs.lorebook import read_lorebook

            book = read_lorebook(ref, origin=self.origin, json_path=where)
            found = (book, _digest(book))
        if key is not None:
            self.read[key] = found
        return found

    def keep(
        self,
        kind: BookKind,
        book: Lorebook,
        name: str,
        file: str,
        *ids: str,
        digest: str | None = None,
    ) -> None:
        marks = {"name:" + name, "book:" + (digest or _digest(book)), *ids}
        if marks & self.seen:
            return
        self.seen |= marks
        self.books.append(BookSource(kind, name, file, book))
        self.entries += len(book.entries)
        if self.entries > MAX_WORLD_ENTRIES:  # at once: the books after it are not read
            raise ContextError(
                code="context.too_many_lorebooks",
                message=f"the run's lorebooks hold more than {MAX_WORLD_ENTRIES} entries "
                f"({self.entries} in the first {len(self.books)})",
                file=self.origin,
                hint="give fewer or smaller lorebooks",
            )


def _stem(path: Path) -> str:
    return path.name[:-5] if path.name.lower().endswith(".json") else path.name


def load_books(
    *,
    base_dir: Path,
    origin: str,
    world_info: str | None,
    lorebooks: Lorebooks,
    character_book: tuple[str, Lorebook, str] | None,
    memo: BookMemo | None = None,
) -> list[BookSource]:
    """The run's lorebooks in ownership order (module docstring). ``character_book`` is the
    card's embedded book, its world name and where it was read, or None; ``memo``: the
    inline books a session's last compile read."""
    loader = _Loader(base_dir, origin, memo)
    refs: list[tuple[BookKind, BookRef, str]] = []
    if world_info is not None:
        refs.append(("global", world_info, "worldInfo"))
    kinds: tuple[tuple[BookKind, list[BookRef]], ...] = (
        ("global", lorebooks.global_),
        ("chat", lorebooks.chat),
        ("character", lorebooks.character),
        ("persona", lorebooks.persona),
    )
    for kind, items in kinds:
        refs += [(kind, ref, join_path("lorebooks", kind, i)) for i, ref in enumerate(items)]
    stems = {_stem(resolve(ref, base_dir)) for _, ref, _ in refs if isinstance(ref, str)}
    embedded = next((i for i, r in enumerate(refs) if r[0] in ("character", "persona")), len(refs))
    for i in range(len(refs) + 1):
        if i == embedded and character_book is not None and character_book[0] not in stems:
            name, book, file = character_book
            digest = memo.digest(book) if memo is not None else None
            loader.keep("character", book, name, file, digest=digest)
        if i < len(refs):
            loader.add(*refs[i])
    if memo is not None:
        memo.keep(loader.read)
    return loader.books


def _by_order(entries: list[WorldEntry]) -> list[WorldEntry]:
    return sorted(entries, key=lambda e: -e.order)


def sorted_entries(books: Sequence[BookSource], strategy: int) -> list[WorldEntry]:
    """All entries in SillyTavern's candidate order, each knowing its book (``world``)."""
    lore: dict[BookKind, list[WorldEntry]] = {
        "global": [],
        "character": [],
        "chat": [],
        "persona": [],
    }
    for source in books:
        lore[source.kind] += [
            e.model_copy(update={"world": source.name}) for e in source.book.entries
        ]
    glob, char = lore["global"], lore["character"]
    if strategy == 1:
        merged = _by_order(char) + _by_order(glob)
    elif strategy == 2:
        merged = _by_order(glob) + _by_order(char)
    else:
        merged = _by_order(glob + char)
    return _by_order(lore["chat"]) + _by_order(lore["persona"]) + merged
