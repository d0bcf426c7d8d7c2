"""`apc explain-code CODE` and `--list`: the long form of every registered code, read from the
error index's pages (docs/pages/reference/errors/), for a terminal or as JSON."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import compiler
from compiler.cli import main
from compiler.cli.commands.explain_code import Style, render_list, wrap
from compiler.codes import code_pages, explain_code, normalize_code
from compiler.codes._pages import parse_page, plain
from compiler.errors import CODES, APCError

ROOT = Path(__file__).resolve().parents[1]
ERROR_PAGES = ROOT / "docs" / "pages" / "reference" / "errors"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explain-code", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_registered_code_is_explained(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, code)
    assert (status, err) == (0, "")
    found = explain_code(code)
    lines = out.splitlines()
    assert lines[0] == f"{found.severity}[{code}]"
    assert lines[1].startswith("  severity: ") and found.severity_text
    if CODES[code] is None:  # a warning only, never raised
        assert found.severity == "warning"
    else:
        assert f"(raised as `{CODES[code].__name__}`)" in found.severity_text
    # its cause and its fix, each under its label, as the page says them
    for label in ("Cause", "Fix"):
        section = found.section(label)
        assert section is not None and section.text, f"{code}: no {label}"
        assert section.label in lines
        first_words = " ".join(section.text.split()[:3])
        assert first_words in " ".join(out.split())
    assert found.summary and "\n" not in found.summary
    assert lines[-1] == f"documentation: {found.page}"
    page, _, anchor = found.page.partition("#")
    assert anchor == code
    assert f"## `{code}` {{#{code}}}" in (ERROR_PAGES.parent.parent / page).read_text("utf-8")


def test_the_text_is_the_page_made_readable(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "template.too_large")
    assert status == 0
    assert "(`{{description}}` 2,000 times over a long card)" in " ".join(out.split())
    # links are their words; list items keep their dash and hang under it
    assert "Documented together with `template.unreadable`." in out
    assert "](" not in out and "**" not in out
    assert "\n  - split the template, or move long text into workspace files\n" in out
    assert "Fix (the diagnostic's hint, by case)\n" in out
    # Markdown's backslash escapes are the characters
    _, out, _ = run(capsys, "template.syntax")
    assert 'the escapes are \\" \\\\ \\n \\t' in out
    # no line past the wrap width
    assert max(len(line) for line in out.splitlines()) <= 100


def test_the_wrapper_and_the_case_do_not_matter(capsys: pytest.CaptureFixture[str]) -> None:
    _, plain_out, _ = run(capsys, "template.unknown_macro")
    pasted = "error[Template.Unknown_Macro]: unknown macro 'agent.fiel'"
    status, out, _ = run(capsys, pasted)
    assert (status, out) == (0, plain_out)


@given(
    code=st.sampled_from(sorted(CODES)),
    flips=st.lists(st.booleans(), min_size=64, max_size=64),
    wrapper=st.sampled_from(
        ["{}", "error[{}]", "warning[{}]: a message", " {} ", "`{}`:", "t.txt:1:6: error[{}]: m"]
    ),
)
def test_any_spelling_of_a_code_finds_it(code: str, flips: list[bool], wrapper: str) -> None:
    cased = "".join(c.upper() if flip else c for c, flip in zip(code, flips, strict=False))
    assert normalize_code(wrapper.format(cased)) == code
    assert explain_code(wrapper.format(cased)).code == code


def test_the_list_covers_the_registry_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "--list")
    assert (status, err) == (0, "")
    rows = re.findall(r"^  (\S+) +(error|warning)  +(.+)$", out, re.M)
    assert sorted(code for code, _, _ in rows) == sorted(CODES)
    for code, severity, summary in rows:
        found = explain_code(code)
        assert (severity, summary) == (found.severity, found.summary)
    # grouped by family page: each group's heading, then its codes
    groups = out.split("\n\n")
    assert [g.splitlines()[0].split(":")[0] for g in groups] == [
        p.title.removesuffix(" codes") for p in code_pages()
    ]
    policy = next(g for g in groups if g.startswith("`policy.*` and `tool.*`"))
    assert "  tool.policy_denied " in policy
    status, out, _ = run(capsys, "--list", "--format", "json")
    listed = json.loads(out)
    assert sorted(item["code"] for item in listed) == sorted(CODES)
    assert listed[0] == {
        "code": "template.bad_argument",
        "family": "template",
        "severity": "error",
        "summary": "wrong type or value",
        "page": "reference/errors/template.md#template.bad_argument",
    }


def test_json_gives_the_sections_and_the_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "tool.policy_denied", "--format", "json")
    assert status == 0
    got = json.loads(out)
    assert got["code"] == "tool.policy_denied" and got["family"] == "tool"
    assert got["severity"] == "error" and got["severityText"] == "error (raised as `PolicyError`)"
    assert got["page"] == "reference/errors/policy.md#tool.policy_denied"
    assert [s["label"] for s in got["sections"]] == ["Severity", "Example", "Cause", "Fix"]
    assert got["markdown"].startswith("**Severity:** error")
    assert compiler.explain_code("tool.policy_denied").to_json() == got


@pytest.mark.parametrize(
    ("asked", "hint"),
    [
        ("template.unknown_macor", "did you mean 'template.unknown_macro'?"),
        ("unknown_macro", "did you mean 'template.unknown_macro'?"),
        ("error[tokenizer.unknown_encodng]", "did you mean 'tokenizer.unknown_encoding'?"),
        ("diagnostics.omitted", "did you mean 'diagnostics.unknown_code'?"),
        ("nothing like it", "`apc explain-code --list` lists every code"),
    ],
)
def test_an_unknown_code_is_a_usage_error_with_the_closest_code(
    asked: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, asked)
    assert (status, out) == (2, "")
    assert err == (f"error[diagnostics.unknown_code]: no error code {asked!r}\n  = hint: {hint}\n")
    status, out, err = run(capsys, asked, "--format", "json")
    assert status == 2
    (diagnostic,) = json.loads(err)
    assert diagnostic["code"] == "diagnostics.unknown_code" and diagnostic["hint"] == hint
    with pytest.raises(APCError) as info:
        explain_code(asked)
    assert info.value.code == "diagnostics.unknown_code"


@pytest.mark.parametrize("argv", [[], ["template.syntax", "--list"]])
def test_a_code_or_the_list(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.startswith("apc: error: explain-code ")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, piped, _ = run(capsys, "template.unknown_macro")
    assert not ANSI.search(piped)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "100")
    screen = Terminal()
    monkeypatch.setattr("sys.stdout", screen)
    assert main(["explain-code", "template.unknown_macro"]) == 0
    coloured = screen.getvalue()
    assert ANSI.search(coloured)
    # colour stands in for the backticks; the words are the same
    assert ANSI.sub("", coloured) == piped.replace("`", "")
    monkeypatch.setenv("NO_COLOR", "1")
    screen = Terminal()
    monkeypatch.setattr("sys.stdout", screen)
    assert main(["explain-code", "template.unknown_macro"]) == 0
    assert screen.getvalue() == piped


def test_the_list_is_cut_to_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, piped, _ = run(capsys, "--list")
    assert max(len(line) for line in piped.splitlines()) > 120  # whole causes, for grep
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "90")
    screen = Terminal()
    monkeypatch.setattr("sys.stdout", screen)
    assert main(["explain-code", "--list"]) == 0
    assert max(len(line) for line in screen.getvalue().splitlines()) <= 90


def test_markdown_becomes_terminal_text() -> None:
    assert plain("see [Plans](../../runtime/plans.md) and [`a.b`](#a.b)") == "see Plans and `a.b`"
    assert plain(r"escapes \\\" and **bold** but `\\n [x](y)` as written") == (
        'escapes \\" and bold but `\\\\n [x](y)` as written'
    )
    page = parse_page(
        "x.md",
        "# `x.*` codes\n\nWhat x is.\n\n## `x.y` {#x.y}\n\n**Severity:** warning\n\n"
        '**Cause:** a cause\n\nmore cause\n\n```json\n{"a": 1}\n\n  [2]\n```\n\n'
        "**Fix** (by case):\n\n- one\n  two\n- three\n",
    )
    assert (page.title, page.description) == ("`x.*` codes", "What x is.")
    (entry,) = page.entries
    assert entry.sections == (
        ("Severity", "warning"),
        ("Cause", 'a cause\n\nmore cause\n\n    {"a": 1}\n\n      [2]'),
        ("Fix (by case)", "- one two\n- three"),
    )
    # code blocks are never wrapped; list items hang under their dash; code spans stay whole
    text = 'a "long" paragraph with `a code span that is long` in it\n    code   kept  as is'
    assert wrap(text, "  ", width=30) == [
        '  a "long" paragraph with',
        "  `a code span that is long`",
        "  in it",
        "      code   kept  as is",
    ]
    assert wrap("- item one two three four", "  ", width=16) == [
        "  - item one two",
        "    three four",
    ]


def test_a_check_report_ends_with_where_its_code_is_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "t.txt"
    bad.write_text('Read <<agent.fiel "x">>\n')
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "note: for more on this code, run `apc explain-code template.unknown_macro`"
    )
    bad.write_text('Read <<agent.fiel "x">> <<agent.plan budget=-1>>\n')
    assert main(["check", str(bad)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "note: for more on a code, run `apc explain-code CODE` (e.g. `template.unknown_macro`)"
    )
    assert main(["check", str(bad), "--format", "json"]) == 1
    assert len(json.loads(capsys.readouterr().err)) == 2  # JSON: the diagnostics only


def test_the_command_page_shows_real_output(capsys: pytest.CaptureFixture[str]) -> None:
    """The page's terminal blocks (``$ apc explain-code ...`` then its output) are what the
    command prints; the list's block is its head, cut as on a 100-column terminal."""
    page = (ROOT / "docs" / "pages" / "reference" / "commands" / "explain-code.md").read_text()
    shown = re.findall(r"^```\n\$ apc explain-code ([^\n]*)\n(.*?)^```$", page, re.M | re.S)
    assert len(shown) == 3
    for args, expected in shown:
        if args == "--list":
            head = render_list(Style(False), cut_at=100).splitlines()
            assert expected.splitlines() == [*head[: len(expected.splitlines()) - 1], "..."]
            continue
        main(["explain-code", *args.split()])
        captured = capsys.readouterr()
        assert captured.out + captured.err == expected
