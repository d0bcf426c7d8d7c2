"""Reading the error index's family pages (docs/pages/reference/errors/*.md) into entries.

A family page is a title (``# `template.*` codes``), one paragraph that says what the family
covers, then one entry per code under its own heading (``## `template.x` {#template.x}``).
An entry is paragraphs, lists and code blocks; a paragraph that opens with a bold label
(``**Cause:**``, ``**Fix** (the diagnostic's hint):``) starts a section, and what follows up
to the next label belongs to that section.
"""

from __future__ import annotations

import re

from compiler._records import record

#: A code's heading: the code, anchored by itself.
ENTRY_RE = re.compile(r"^## `([a-z]+\.[a-z_]+)` \{#\1\}[ \t]*$", re.M)
#: A bold label opening a paragraph: ``**Cause:** text``, ``**Fix** (by case): text``.
LABEL_RE = re.compile(r"^\*\*([^*:]+):\*\*[ \t]*|^\*\*([^*:]+)\*\* \(([^)]*)\):[ \t]*")
#: A code span, or a link (whose text may hold code spans): whichever starts first.
_INLINE_RE = re.compile(
    r"(?P<fence>`+)(?P<code>.+?)(?P=fence)|!?\[(?P<text>(?:`[^`]*`|[^\]`])*)\]\([^)]*\)", re.S
)
_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*|__(.+?)__", re.S)
_LIST_RE = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
#: A code block's lines are indented by this (as Markdown's indented code); prose never is.
CODE_INDENT = "    "


@record(frozen=True, slots=True)
class RawEntry:
    """One code's entry as written: its page, its Markdown, its sections."""

    code: str
    page: str  # the page's file name, e.g. ``template.md``
    markdown: str
    sections: tuple[tuple[str, str], ...]  # (label, plain text), in page order


@record(frozen=True, slots=True)
class RawPage:
    """One family page: its file name, title and description, and its entries in order."""

    name: str
    title: str
    description: str
    entries: tuple[RawEntry, ...]


def plain(markdown: str) -> str:
    """Markdown inline text as text for a terminal: ``[text](target)`` is ``text``, bold is
    plain, backslash escapes are the character; code spans keep their backticks and their
    text as written (a link inside one is text)."""
    out: list[str] = []
    last = 0
    for match in _INLINE_RE.finditer(markdown):
        out.append(_plain_prose(markdown[last : match.start()]))
        code = match.group("code")
        out.append(f"`{code}`" if code is not None else plain(match.group("text")))
        last = match.end()
    out.append(_plain_prose(markdown[last:]))
    return "".join(out)


def _plain_prose(text: str) -> str:
    text = _BOLD_RE.sub(lambda m: m.group(1) or m.group(2), text)
    return _ESCAPE_RE.sub(lambda m: m.group(1), text)


def blocks(markdown: str) -> list[str]:
    """The blocks of ``markdown``: paragraphs and lists (split at blank lines) and fenced code
    blocks (kept whole, blank lines included)."""
    found: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            if current:
                found.append("\n".join(current))
            current, fence = [line], stripped[:3]
        elif fence is not None:
            current.append(line)
            if stripped.startswith(fence) and len(current) > 1:
                found.append("\n".join(current))
                current, fence = [], None
        elif not stripped:
            if current:
                found.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        found.append("\n".join(current))
    return found


def block_text(block: str) -> str:
    """A block as terminal text: a code block's lines as written (fences dropped), indented by
    :data:`CODE_INDENT`; a list one ``- item`` line per item; a paragraph as one line."""
    lines = block.splitlines()
    if lines[0].lstrip().startswith(("```", "~~~")):
        closed = len(lines) > 1 and lines[-1].strip()[:3] == lines[0].strip()[:3]
        code = lines[1:-1] if closed else lines[1:]
        return "\n".join(f"{CODE_INDENT}{line}" if line.strip() else "" for line in code)
    if _LIST_RE.match(lines[0]):
        items: list[str] = []
        for line in lines:
            if _LIST_RE.match(line):
                items.append("- " + _LIST_RE.sub("", line, count=1).strip())
            elif items:
                items[-1] += " " + line.strip()
        return "\n".join(plain(item) for item in items)
    return plain(" ".join(line.strip() for line in lines))


def sections(markdown: str) -> tuple[tuple[str, str], ...]:
    """An entry's sections: ``(label, text)``; a block before any label has the label ``""``,
    a block after a labelled one joins it (blocks apart by a blank line)."""
    found: list[tuple[str, list[str]]] = []
    for block in blocks(markdown):
        match = LABEL_RE.match(block)
        if match:
            label = match.group(1) or f"{match.group(2)} ({plain(match.group(3))})"
            rest = block[match.end() :]
            found.append((label.strip(), [block_text(rest)] if rest.strip() else []))
        elif found:
            found[-1][1].append(block_text(block))
        else:
            found.append(("", [block_text(block)]))
    return tuple((label, "\n\n".join(parts)) for label, parts in found)


def parse_page(name: str, text: str) -> RawPage:
    """One family page: its title, its description (the first paragraph), its entries."""
    matches = list(ENTRY_RE.finditer(text))
    head = text[: matches[0].start()] if matches else text
    head_blocks = blocks(head)
    title = next((b[2:].strip() for b in head_blocks if b.startswith("# ")), name)
    prose = [b for b in head_blocks if not b.startswith("#")]
    entries = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[match.end() : end].strip("\n")
        entries.append(RawEntry(match.group(1), name, body, sections(body)))
    return RawPage(
        name=name,
        title=plain(title),
        description=block_text(prose[0]) if prose else "",
        entries=tuple(entries),
    )


def page_order(index: str) -> list[str]:
    """The family pages in the order the error index lists them (``- [...](template.md)``)."""
    return re.findall(r"^- \[[^\]]*\]\(([a-z_]+\.md)\)", index, re.M)
