"""``apc explain-code CODE``: the long form of an error code; ``--list``: every code.

Internal: the interface is the ``apc`` command line.

The text comes from :mod:`compiler.codes` (the error index's pages); this module lays it out
for a terminal: paragraphs wrapped, list items with a hanging indent, code blocks as they are,
colour only on a terminal (:func:`compiler.cli.render.colour_enabled`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import textwrap
from typing import Any

from compiler.cli.commands._common import dumps, usage_error
from compiler.cli.render import colour_enabled, print_diagnostics
from compiler.codes import CodeExplanation, code_pages, explain_code
from compiler.errors import APCError

#: Widest a wrapped line gets, however wide the terminal.
MAX_WIDTH = 100
_NBSP = "\xa0"
_CODE_SPAN = re.compile(r"`([^`]+)`")
_BOLD, _CYAN, _RED, _YELLOW, _RESET = "\x1b[1m", "\x1b[36m", "\x1b[31m", "\x1b[33m", "\x1b[0m"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "explain-code",
        help="explain an error code: what it means, an example, its cause and fix",
        description="Print the long form of an error code (as printed in error[CODE], in any "
        "case), or with --list every code with its severity and cause.",
    )
    p.add_argument("code", nargs="?", metavar="CODE", help="e.g. template.unknown_macro")
    p.add_argument("--list", action="store_true", help="list every code, by family")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list and args.code is not None:
        return usage_error("explain-code takes a CODE or --list, not both")
    if not args.list and args.code is None:
        return usage_error("explain-code needs a CODE (e.g. template.unknown_macro) or --list")
    out = sys.stdout
    style = Style(colour_enabled(out))
    terminal = _terminal_width(out)
    if args.list:
        if args.format == "json":
            out.write(dumps([_listed(code) for page in code_pages() for code in page.codes]))
        else:
            out.write(render_list(style, cut_at=terminal))
        return 0
    try:
        found = explain_code(args.code)
    except APCError as exc:  # an unknown code: a usage error, with the closest code
        print_diagnostics(exc.diagnostics, fmt=args.format, explain=False)
        return 2
    if args.format == "json":
        out.write(dumps(found.to_json()))
    else:
        out.write(render(found, style, terminal or MAX_WIDTH))
    return 0


class Style:
    """ANSI styles when colour is on; otherwise the text as it is (code spans keep their
    backticks, which colour replaces)."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, ansi: str) -> str:
        return f"{ansi}{text}{_RESET}" if self.colour else text

    def code_spans(self, text: str) -> str:
        if not self.colour:
            return text
        return _CODE_SPAN.sub(lambda m: f"{_CYAN}{m.group(1)}{_RESET}", text)

    def severity(self, severity: str, text: str) -> str:
        return self(text, _YELLOW if severity == "warning" else _RED)


def _terminal_width(stream: Any) -> int | None:
    """The terminal's width (at most :data:`MAX_WIDTH`) when ``stream`` is one, else None."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return None
    return max(40, min(MAX_WIDTH, shutil.get_terminal_size().columns))


def wrap(text: str, indent: str, width: int = MAX_WIDTH) -> list[str]:
    """A section's text as lines: paragraphs wrapped (never inside a code span), ``- item``
    lines with a hanging indent, code block lines (indented four) as they are."""
    lines: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("    "):
            lines.append(f"{indent}{line}".rstrip())
            continue
        hang = "  " if line.startswith("- ") else ""
        kept = _CODE_SPAN.sub(lambda m: m.group(0).replace(" ", _NBSP), line)
        for part in textwrap.wrap(
            kept,
            width=width,
            initial_indent=indent,
            subsequent_indent=indent + hang,
            break_long_words=False,
            break_on_hyphens=False,
        ):
            lines.append(part.replace(_NBSP, " "))
    return lines


def render(found: CodeExplanation, style: Style, width: int = MAX_WIDTH) -> str:
    """One code's entry for a terminal: the code and its severity, then its sections."""
    page = next(p for p in code_pages() if any(c.code == found.code for c in p.codes))
    colour = _YELLOW if found.severity == "warning" else _RED
    family = f"{_family(page.title)}: {page.description}"
    lines = [
        style(f"{found.severity}[{found.code}]", _BOLD + colour),
        f"  severity: {style.code_spans(found.severity_text)}",
        f"  family:   {style.code_spans(family)}",
    ]
    for section in found.sections:
        if section.label == "Severity":
            continue
        lines += ["", style(section.label, _BOLD)]
        lines += [style.code_spans(line) for line in wrap(section.text, "  ", width)]
    lines += ["", f"documentation: {found.page}"]
    return "\n".join(lines) + "\n"


def render_list(style: Style, cut_at: int | None = None) -> str:
    """Every code, grouped by family page: the code, its severity, its cause (whole, or cut
    to ``cut_at`` columns: a terminal's width)."""
    lines: list[str] = []
    for page in code_pages():
        name_width = max(len(c.code) for c in page.codes)
        if lines:
            lines.append("")
        title = _cut(f"{_family(page.title)}: {page.description}", cut_at)
        lines.append(style(title.replace("`", ""), _BOLD) if style.colour else title)
        for code in page.codes:
            left = f"  {code.code.ljust(name_width)}  {code.severity.ljust(7)}  "
            summary = _cut(code.summary, None if cut_at is None else cut_at - len(left))
            lines.append(
                f"  {style(code.code.ljust(name_width), _BOLD)}  "
                f"{style.severity(code.severity, code.severity.ljust(7))}  "
                f"{style.code_spans(summary)}"
            )
    return "\n".join(lines) + "\n"


def _cut(text: str, width: int | None) -> str:
    """``text`` in ``width`` columns (at least 10), its end cut to ``…``; None: whole."""
    if width is None or len(text) <= width:
        return text
    return text[: max(10, width) - 1].rstrip() + "…"


def _family(title: str) -> str:
    """A page's title without its last word: ```template.*` codes`` -> ```template.*` ``."""
    return title.removesuffix(" codes")


def _listed(code: CodeExplanation) -> dict[str, Any]:
    return {
        "code": code.code,
        "family": code.family,
        "severity": code.severity,
        "summary": code.summary,
        "page": code.page,
    }
