"""Output stays proportional to input (issue 9): capped diagnostics, bounded excerpts."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

import compiler
from compiler._base.atomic import atomic_write_text
from compiler._driver.checking import check, check_string
from compiler.cli import main
from compiler.cli.render import (
    EXCERPT_WIDTH,
    MAX_PER_FILE,
    Omitted,
    cap_per_file,
    format_diagnostic,
    print_diagnostics,
)
from compiler.errors import (
    APCError,
    Diagnostic,
    Severity,
    Span,
    StrictError,
    TemplateError,
)

BAD = "<<agent.fiel>>"  # one unknown macro: 14 bytes, one error
#: The last line of a text report: where its code is explained.
EXPLAIN_NOTE = "note: for more on this code, run `apc explain-code template.unknown_macro`"


def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def line_bound(path: Path) -> int:
    """The longest line a capped diagnostic may print: its header (the path, the position,
    the code and a short message) or an excerpt of EXCERPT_WIDTH columns behind ``N | ``."""
    return len(str(path)) + EXCERPT_WIDTH + 60


def bad_template(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("newline_every", [0, 1, 200], ids=["one-line", "lines", "long-lines"])
def test_many_bad_macros_print_a_bounded_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], newline_every: int
) -> None:
    count = 200_000 // len(BAD)  # ~200 KB of bad macros
    parts = [
        BAD + ("\n" if newline_every and (i + 1) % newline_every == 0 else "") for i in range(count)
    ]
    path = bad_template(tmp_path, "".join(parts))
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    lines = err.splitlines()
    # four lines per diagnostic (header, source, caret, hint), then the notes
    assert len(lines) <= 4 * MAX_PER_FILE + 2
    assert max(len(line) for line in lines) <= line_bound(path)
    assert err.count("error[template.unknown_macro]") == MAX_PER_FILE
    assert lines[-2:] == [
        f"{path}: note: and {count - MAX_PER_FILE} more errors",
        EXPLAIN_NOTE,
    ]


def test_json_report_ends_with_an_omitted_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = bad_template(tmp_path, BAD * 120)
    assert main(["check", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().err)
    assert len(report) == MAX_PER_FILE + 1
    assert all(d["code"] == "template.unknown_macro" for d in report[:-1])
    assert report[-1] == {
        "severity": "note",
        "code": "diagnostics.omitted",
        "message": "and 70 more errors",
        "file": str(path),
        "line": None,
        "column": None,
        "endLine": None,
        "endColumn": None,
        "path": None,
        "hint": None,
        "omitted": 70,
    }


def test_the_cap_is_per_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    many = bad_template(tmp_path, BAD * 60)
    few = tmp_path / "few.txt"
    few.write_text(BAD * 2)
    assert main(["check", str(many), str(few)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert f"{many}: note: and 10 more errors" in lines
    assert sum(line.startswith(f"{few}:1:") for line in lines) == 2
    assert not any(line.startswith(f"{few}: note:") for line in lines)


def test_all_diagnostics_stay_available_to_python(tmp_path: Path) -> None:
    path = bad_template(tmp_path, BAD * 120)
    with pytest.raises(TemplateError) as info:
        check(path)
    assert len(info.value.diagnostics) == 120
    # the diagnostics share the template text instead of copying its line
    text = path.read_text()
    assert all(d.source == text for d in info.value.diagnostics)


def diag(file: str, severity: Severity = "error") -> Diagnostic:
    return Diagnostic(code="x.y", message="m", file=file, severity=severity)


def note(items: list[Diagnostic | Omitted], i: int) -> str:
    item = items[i]
    assert isinstance(item, Omitted)
    return item.text()


def test_cap_counts_a_presets_entries_as_one_file_and_says_what_was_left_out() -> None:
    entries = [diag(f"p.json#prompts[{i}].content") for i in range(4)]
    items = cap_per_file([*entries, diag("p.json", "warning")], limit=2)
    assert items[:2] == entries[:2] and len(items) == 3
    assert note(items, 2) == "p.json: note: and 3 more errors and warnings"
    assert note(cap_per_file([diag("a"), diag("a", "warning")], limit=1), 1) == (
        "a: note: and 1 more warning"
    )
    assert note(cap_per_file([diag(""), diag("")], limit=1), 1) == "note: and 1 more error"
    assert len(cap_per_file([diag("a")] * 100, limit=None)) == 100


def render(text: str) -> tuple[str, str]:
    """The excerpt and caret lines of the first diagnostic of ``text``."""
    with pytest.raises(TemplateError) as info:
        check_string(text)
    out = format_diagnostic(info.value.diagnostics[0]).splitlines()
    return out[1], out[2]


def caret_target(source: str, caret: str) -> str:
    """The text above the carets, by display column."""
    start = caret.index("^") - caret.index("|") - 2
    cols = 0
    for i, ch in enumerate(source[source.index("|") + 2 :]):
        if cols == start:
            return source[source.index("|") + 2 + i :][: caret.count("^")]
        cols += width(ch)
    raise AssertionError("caret beyond the line")


def test_a_long_line_is_cut_around_the_span_with_the_caret_aligned() -> None:
    text = "x" * 5000 + BAD + "y" * 5000
    source, caret = render(text)
    assert source.startswith("1 | ...x") and source.endswith("y...")
    assert width(source) == len("1 | ") + EXCERPT_WIDTH
    assert caret_target(source, caret) == BAD


def test_wide_characters_keep_the_caret_aligned() -> None:
    text = "好" * 3000 + BAD + "界" * 3000
    source, caret = render(text)
    assert source.startswith("1 | ...") and source.endswith("...")
    assert width(source) <= len("1 | ") + EXCERPT_WIDTH
    assert caret_target(source, caret) == BAD


def test_a_span_at_the_end_of_a_long_line_shows_more_of_the_line_before_it() -> None:
    source, caret = render("x" * 5000 + BAD + "\nnext line")
    assert source.startswith("1 | ...x") and source.endswith(BAD)
    assert width(source) == len("1 | ") + EXCERPT_WIDTH
    assert caret_target(source, caret) == BAD


def test_a_short_line_is_shown_whole() -> None:
    source, caret = render("\tRead: " + BAD)
    assert source == "1 |     Read: " + BAD
    assert caret == "  |           " + "^" * len(BAD)


def test_a_span_running_past_the_window_is_underlined_to_its_edge() -> None:
    text = '<<agent.file "' + "a" * 5000  # unterminated string: the span runs to the end
    source, caret = render(text)
    assert source.endswith("...")
    assert caret.endswith("^") and width(caret) == width(source) - len("...")


def test_bad_escapes_by_the_thousand_print_a_bounded_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = bad_template(tmp_path, '<<agent.file "' + "\\q" * 50_000 + '">>')
    assert main(["check", str(path)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) <= 4 * MAX_PER_FILE + 2
    assert max(len(line) for line in lines) <= line_bound(path)
    assert lines[-2] == f"{path}: note: and {50_000 - MAX_PER_FILE} more errors"


def test_a_diagnostic_with_a_given_line_still_renders() -> None:
    d = Diagnostic(
        code="x.y",
        message="m",
        span=Span(3, 4, 1, 4, 1, 5, "f"),
        source_line="abcdef",
    )
    buf = io.StringIO()
    print_diagnostics([d], stream=buf)
    assert buf.getvalue() == "f:1:4: error[x.y]: m\n1 | abcdef\n  |    ^\n"


def test_unclosed_legacy_macros_are_still_found_and_do_not_backtrack() -> None:
    # ``{{agent.`` + a long name used to backtrack once per character (quadratic)
    bound = check_string("{{agent." + "a" * 200_000 + " {{agent.plan}}")
    assert [w.hint for w in bound.warnings] == ["write <<agent.plan>>"]


# -o OUT: only a regular file is replaced; signals leave no temp file behind

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "writer"
COMPILE = ["compile", str(EXAMPLES / "template.txt"), "--context", str(EXAMPLES / "run.json")]
EXPLAIN = ["explain", *COMPILE[1:]]


def special_file(tmp_path: Path, kind: str) -> Path:
    if kind == "fifo":
        path = tmp_path / "out.fifo"
        os.mkfifo(path)
        return path
    if kind == "device":  # a node of its own: a broken build must not replace /dev/null
        path = tmp_path / "null"
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("cannot create a device node here")
        return path
    target = tmp_path / "target.json"
    target.write_text("keep me")
    path = tmp_path / "out.json"
    path.symlink_to(target if kind == "symlink" else tmp_path / "missing.json")
    return path


@pytest.mark.parametrize("command", [COMPILE, EXPLAIN], ids=["compile", "explain"])
@pytest.mark.parametrize("kind", ["fifo", "symlink", "dangling-symlink", "device"])
def test_output_that_is_not_a_regular_file_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], kind: str
) -> None:
    out = special_file(tmp_path, kind)
    before = sorted(tmp_path.iterdir())
    mode = os.lstat(out).st_mode
    assert main([*command, "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert f"{out}: error[io.output_not_regular]: " in captured.err
    assert captured.out == ""
    assert os.lstat(out).st_mode == mode  # still the FIFO / symlink / device it was
    assert sorted(tmp_path.iterdir()) == before  # no temp file, nothing created
    if kind == "symlink":
        assert (tmp_path / "target.json").read_text() == "keep me"


def test_a_regular_output_file_is_still_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("old")
    assert main([*COMPILE, "-o", str(out)]) == 0
    assert json.loads(out.read_text())["model"] == "gpt-4o"
    assert sorted(tmp_path.iterdir()) == [out]


def test_atomic_write_refuses_a_symlink_that_appears_late(tmp_path: Path) -> None:
    # the run-dir profile and any other atomic write share the check
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    link = tmp_path / "input" / "resolved_profile.json"
    link.parent.mkdir()
    link.symlink_to(target)
    with pytest.raises(APCError) as info:
        atomic_write_text(link, "x")
    assert info.value.code == "io.output_not_regular"
    assert target.read_text() == "keep me" and link.is_symlink()
    assert sorted(link.parent.iterdir()) == [link]


def test_atomic_write_restores_the_sigterm_handler(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    atomic_write_text(tmp_path / "a.txt", "x")
    assert signal.getsignal(signal.SIGTERM) == before


SIGNAL_DURING_FSYNC = """
import os, signal, sys
from compiler.cli import main
real = os.fsync
def fsync(fd):
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    real(fd)
os.fsync = fsync
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_during_the_write_leaves_no_temp_file(
    tmp_path: Path, name: str, code: int
) -> None:
    out = tmp_path / "out" / "request.json"
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_DURING_FSYNC, name, *COMPILE, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert list(out.parent.iterdir()) == []  # neither the output nor its temp file


# --journal records failures before assembly too


def journal_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("template", "template.unknown_macro"),
        ("context", "context.invalid_json"),
        ("profile", "agent.profile_id_invalid"),
        ("output", "io.output_not_regular"),
    ],
)
def test_a_failure_before_assembly_is_journaled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, code: str
) -> None:
    template = tmp_path / "t.txt"
    template.write_text("Hello <<agent.fiel>>" if case == "template" else "Hello <<agent.plan>>")
    run = tmp_path / "run.json"
    run.write_text('{"chat": [}' if case == "context" else '{"plan": "x"}')
    journal = tmp_path / "journal.jsonl"
    journal.write_text('{"earlier": "run"}\n')  # appended to, never replaced
    args = ["compile", str(template), "--context", str(run), "--journal", str(journal)]
    args += ["--run-dir", str(tmp_path / "rundir")]
    if case == "profile":
        args += ["--profile", "Bad ID!"]
    if case == "output":
        os.mkfifo(tmp_path / "out")
        args += ["-o", str(tmp_path / "out")]
    assert main(args) == 1
    assert f"error[{code}]" in capsys.readouterr().err
    earlier, event = journal_lines(journal)
    assert earlier == {"earlier": "run"}
    assert sorted(event) == ["id", "level", "payload", "runId", "seq", "timestamp", "type"]
    assert (event["seq"], event["level"], event["type"]) == (1, "error", "context_assembly_failed")
    payload = event["payload"]
    assert isinstance(payload, dict) and payload["code"] == code and payload["message"]
    resolved = tmp_path / "rundir" / "input" / "resolved_profile.json"
    # the profile bound to the run is written only once the compile succeeded
    assert not resolved.exists()


def test_a_failure_during_assembly_is_journaled_once(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    args = [*COMPILE, "--budget", "10", "--journal", str(journal)]
    assert main(args) == 1
    types = [e["type"] for e in journal_lines(journal)]
    assert types[0] == "context_assembly_started"
    assert types[-1] == "context_assembly_failed" and types.count("context_assembly_failed") == 1


# --budget over the model's window: a warning, an error with --strict


def test_a_budget_over_the_window_is_a_warning() -> None:
    template, run = EXAMPLES / "template.txt", EXAMPLES / "run.json"
    result = compiler.compile(template, context=run, budget=199_988)
    (warning,) = [w for w in result.warnings if w.code == "context.budget_over_window"]
    assert warning.severity == "warning"
    assert warning.message == (
        "the budget of 199,988 tokens is over the 128,000-token window of gpt-4o"
    )
    reserved = compiler.compile(template, context=run, budget=127_000, reserve=4_000)
    assert [w.message for w in reserved.warnings] == [
        "the budget of 127,000 tokens plus the 4,000 reserved for the response is over the "
        "128,000-token window of gpt-4o"
    ]
    for fine in (
        compiler.compile(template, context=run, budget=124_000, reserve=4_000),
        compiler.compile(template, context=run),  # the window itself
        compiler.compile(
            template, context=run, budget=10**6, model="mystery-1", encoding="o200k_base"
        ),
    ):
        assert fine.warnings == []


def test_strict_turns_warnings_into_an_error_before_assembly() -> None:
    with pytest.raises(StrictError) as info:
        compiler.compile(
            EXAMPLES / "template.txt", context=EXAMPLES / "run.json", budget=200_000, strict=True
        )
    assert info.value.code == "context.budget_over_window"
    assert [d.severity for d in info.value.diagnostics] == ["error"]
    assert "events" not in info.value.details  # nothing was assembled
    with pytest.raises(StrictError) as legacy:
        compiler.compile_string("{{agent.plan}} <<agent.plan>>", context={"plan": "x"}, strict=True)
    assert legacy.value.code == "template.legacy_agent_macro"


def test_cli_warns_about_a_budget_over_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*COMPILE, "--budget", "200000"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["model"] == "gpt-4o"
    assert "warning[context.budget_over_window]: the budget of 200,000 tokens" in captured.err
    assert main([*EXPLAIN, "--budget", "200000"]) == 0
    assert "warning[context.budget_over_window]" in capsys.readouterr().err
    run = ["--context", str(EXAMPLES / "run.json")]
    assert main(["check", str(EXAMPLES / "template.txt"), *run, "--budget", "200000"]) == 0
    assert "warning[context.budget_over_window]" in capsys.readouterr().err


def test_cli_strict_fails_on_the_warning_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, journal = tmp_path / "out.json", tmp_path / "journal.jsonl"
    args = ["--budget", "200000", "--strict", "-o", str(out)]
    assert main([*COMPILE, *args, "--journal", str(journal)]) == 1
    assert "error[context.budget_over_window]" in capsys.readouterr().err
    assert not out.exists()
    (event,) = journal_lines(journal)
    assert event["type"] == "context_assembly_failed"
    assert event["payload"] == {
        "code": "context.budget_over_window",
        "message": "the budget of 200,000 tokens is over the 128,000-token window of gpt-4o",
    }
    assert main([*EXPLAIN, *args]) == 1
    assert "error[context.budget_over_window]" in capsys.readouterr().err
    assert not out.exists()
    check_args = ["check", str(EXAMPLES / "template.txt"), "--context", str(EXAMPLES / "run.json")]
    assert main([*check_args, "--budget", "200000", "--strict"]) == 1
    assert "error[context.budget_over_window]" in capsys.readouterr().err
    assert main([*check_args, "--budget", "2000", "--strict"]) == 0


def test_check_strict_fails_on_template_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    legacy = tmp_path / "legacy.txt"
    legacy.write_text("<<agent.plan>> {{agent.plan}}")
    assert main(["check", str(legacy)]) == 0
    assert "warning[template.legacy_agent_macro]" in capsys.readouterr().err
    assert main(["check", str(legacy), "--strict", "--format", "json"]) == 1
    (d,) = json.loads(capsys.readouterr().err)
    assert (d["severity"], d["code"]) == ("error", "template.legacy_agent_macro")


# --journal FILE: the same rule as -o; a FIFO is refused, never waited on


@pytest.mark.parametrize("kind", ["fifo", "symlink", "dangling-symlink", "device"])
def test_a_journal_that_is_not_a_regular_file_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    journal = special_file(tmp_path, kind)
    before = sorted(tmp_path.iterdir())
    mode = os.lstat(journal).st_mode
    # a reader on the FIFO: a plain append would then write into it rather than wait forever
    reader = os.open(journal, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None
    try:
        assert main([*COMPILE, "--journal", str(journal)]) == 1
    finally:
        if reader is not None:
            os.close(reader)
    captured = capsys.readouterr()
    assert f"{journal}: error[io.output_not_regular]: " in captured.err
    assert captured.out == ""
    assert os.lstat(journal).st_mode == mode
    assert sorted(tmp_path.iterdir()) == before
    if kind == "symlink":
        assert (tmp_path / "target.json").read_text() == "keep me"


def test_a_journal_fifo_that_appears_after_the_check_is_refused(tmp_path: Path) -> None:
    from compiler._base.journal import Journal, append_jsonl

    fifo = tmp_path / "journal.fifo"
    os.mkfifo(fifo)
    journal = Journal()
    journal.emit("context_assembled")
    # with a reader, opening succeeds and the file is then refused (nothing written)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(APCError) as info:
            append_jsonl(journal.events, fifo)
        assert info.value.code == "io.output_not_regular"
        assert os.read(reader, 1) == b""  # nothing was written into it
    finally:
        os.close(reader)
    # with none, opening to write fails at once instead of waiting for one
    with pytest.raises(APCError) as info:
        append_jsonl(journal.events, fifo)
    assert info.value.code == "io.output_not_regular"


def test_a_journal_is_still_appended(tmp_path: Path) -> None:
    journal = tmp_path / "j" / "journal.jsonl"
    assert main([*COMPILE, "--journal", str(journal)]) == 0
    first = journal.read_text().count("\n")
    assert main([*COMPILE, "--journal", str(journal)]) == 0
    assert first > 0 and journal.read_text().count("\n") == 2 * first


@pytest.mark.parametrize("other", [["-o"], ["--world-state"], []])
def test_the_journal_may_not_share_a_file_or_be_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], other: list[str]
) -> None:
    path = str(tmp_path / "same.json") if other else "-"
    assert main([*COMPILE, "--journal", path, *other, *([path] if other else [])]) == 2
    assert "--journal" in capsys.readouterr().err


def test_a_text_keeps_a_names_bytes_and_escapes_other_lone_surrogates(tmp_path: Path) -> None:
    """What a text written to a file holds: a file name's undecodable byte as that byte (as
    standard output writes it), a lone surrogate that stands for no byte as its escape,
    and everything else as UTF-8, however the two mix."""
    from compiler._base.atomic import atomic_write_text

    out = tmp_path / "out.txt"
    atomic_write_text(out, "é " + os.fsdecode(b"t\xff") + " \ud83d 😀")
    assert out.read_bytes() == "é ".encode() + b"t\xff \\ud83d " + "😀".encode()
    atomic_write_text(out, "plain")
    assert out.read_bytes() == b"plain"
