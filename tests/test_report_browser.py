"""The HTML reports in a real headless Chromium (Debian's ``chromium``, driven by Playwright's
Python API with that executable): each page loads from ``file://`` with no console error and
no request but its own file, shows the numbers of the JSON document, sorts and switches
categories off and on, and leaves a screenshot in tests/artifacts/ (git-ignored).

Without Playwright or a Chromium these tests skip with the reason; under CI (``CI=true``)
they fail instead: ``.ci/run`` installs both.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.cli.commands._bench_text import render_report
from compiler.replay import BenchReport

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "examples" / "writer"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CORPUS = ROOT / ".." / "shared" / "corpus"
PRESET = CORPUS / "presets" / "st-default-2024.json"
ELDORIA = CORPUS / "worlds" / "Eldoria.json"
SERAPHINA = CORPUS / "cards" / "Seraphina-v2v3.png"
HOSTILE = "</script><script>window.__pwned = 1</script><img src=x onerror=alert(1)> \"'&<!--"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: under CI the browser tests never skip (.ci/run installs it)")
    pytest.skip(reason)


def _chromium() -> str | None:
    return (
        os.environ.get("APC_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    exe = _chromium()
    if exe is None:
        _unavailable("no chromium on PATH (apt-get install chromium, or set APC_CHROMIUM)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=exe)
        yield chromium
        chromium.close()


@dataclass
class Opened:
    """A page and all it did while loading: requests, console errors, uncaught errors and
    dialogs."""

    page: Any
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.requests == [self.url], "the page fetched something"
        assert self.errors == []
        assert self.dialogs == []


@pytest.fixture(scope="module")
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield context
    context.close()


@pytest.fixture
def open_page(context: Any) -> Iterator[Any]:
    pages: list[Any] = []

    def opener(path: Path) -> Opened:
        page = context.new_page()
        pages.append(page)
        opened = Opened(page, path.as_uri())
        page.on("request", lambda r: opened.requests.append(r.url))
        page.on("console", lambda m: m.type == "error" and opened.errors.append(m.text))
        page.on("pageerror", lambda e: opened.errors.append(str(e)))
        page.on("dialog", lambda d: (opened.dialogs.append(d.message), d.dismiss()))
        page.goto(opened.url)
        page.wait_for_selector("#app h1")
        return opened

    yield opener
    for page in pages:
        page.close()


def screenshot(opened: Opened, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / name
    opened.page.screenshot(path=str(out), full_page=True)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return out


def fmt(n: float | None) -> str:
    return "-" if n is None else f"{round(n):,}"


def apc(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


def cat_of(entry: dict[str, Any]) -> str:
    return entry["category"] or entry["kind"]


def ledger_rows(page: Any) -> list[dict[str, str]]:
    """The visible rows of the ledger table: id -> the text of each column."""
    return page.eval_on_selector_all(
        "table.ledger tbody tr:not([hidden])",
        """rows => rows.map(r => Object.fromEntries([['id', r.dataset.id],
             ...[...r.cells].map(c => [c.dataset.col, c.textContent])]))""",
    )


def explain_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    page = tmp_path / "explain.html"
    assert main([*args, "--format", "html", "-o", str(page)]) == 0
    capsys.readouterr()
    return page, json.loads(apc([*args, "--format", "json"], capsys))


WRITER_ARGS = ["explain", str(WRITER / "template.txt"), "--context", str(WRITER / "run.json")]


def test_explain_page_shows_the_ledger(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, doc = explain_files(tmp_path, capsys, WRITER_ARGS)
    opened = open_page(path)
    page = opened.page
    opened.assert_clean()
    assert page.text_content("[data-field=totalTokens] b") == fmt(doc["totalTokens"])
    assert page.text_content("[data-field=overheadTokens] b") == fmt(doc["overheadTokens"])
    rows = ledger_rows(page)
    assert [r["id"] for r in rows] == [e["id"] for e in doc["entries"]]
    for row, e in zip(rows, doc["entries"], strict=True):
        assert row["used"] == fmt(e["tokensUsed"])
        assert row["granted"] == fmt(e["tokensGranted"])
        assert row["offered"].split(" (")[0] == fmt(e["tokensOffered"])
        assert (row["action"], row["category"].strip()) == (e["action"], cat_of(e))
    # the used bar holds every token of the request: the components' and the overhead
    assert page.text_content("text[data-total=used]") == fmt(doc["totalTokens"])
    drawn = page.eval_on_selector_all(
        "rect[data-bar=used]", "rs => rs.map(r => [r.dataset.id, +r.dataset.tokens])"
    )
    assert sum(n for _, n in drawn) == doc["totalTokens"]
    data = json.loads(page.text_content("#apc-data"))
    messages = data["messages"]["messages"]
    shown = page.eval_on_selector_all("ol.messages li", "ls => ls.map(l => +l.dataset.tokens)")
    assert shown == [m["tokens"] for m in messages] and len(shown) == 6
    screenshot(opened, "explain-writer.png")


def test_the_ledger_sorts_by_a_column_and_categories_switch_off(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, doc = explain_files(tmp_path, capsys, WRITER_ARGS)
    page = open_page(path).page
    entries = doc["entries"]
    page.click("table.ledger th[data-col=used]")
    up = [e["id"] for e in sorted(entries, key=lambda e: e["tokensUsed"])]
    assert [r["id"] for r in ledger_rows(page)] == up
    assert page.get_attribute("table.ledger th[data-col=used]", "aria-sort") == "ascending"
    page.click("table.ledger th[data-col=used]")
    down = [e["id"] for e in sorted(entries, key=lambda e: -e["tokensUsed"])]
    assert [r["id"] for r in ledger_rows(page)] == down
    page.click("table.ledger th[data-col=id]")
    assert [r["id"] for r in ledger_rows(page)] == sorted(e["id"] for e in entries)

    files = [e for e in entries if cat_of(e) == "workspaceFile"]
    assert len(files) == 3
    page.uncheck("input[data-cat=workspaceFile]")
    assert {r["id"] for r in ledger_rows(page)} == {e["id"] for e in entries} - {
        e["id"] for e in files
    }
    assert page.locator("rect[data-cat=workspaceFile]").count() == 0
    left = doc["totalTokens"] - sum(e["tokensUsed"] for e in files)
    assert page.text_content("text[data-total=used]") == fmt(left)
    page.check("input[data-cat=workspaceFile]")
    assert len(ledger_rows(page)) == len(entries)
    assert page.locator("rect[data-cat=workspaceFile]").count() == 3 * len(files)
    assert page.text_content("text[data-total=used]") == fmt(doc["totalTokens"])


def test_hostile_inputs_are_shown_as_text(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "t<b>'&.txt"
    template.write_text(f"{HOSTILE}\n<<agent.world.activated>>\n<<agent.chat.history>>\n")
    book = {"entries": {"0": {"uid": 0, "key": ["dragon"], "content": HOSTILE, "comment": HOSTILE}}}
    chat = [{"role": "user", "content": f"a dragon {HOSTILE}"}]
    (tmp_path / "run.json").write_text(json.dumps({"chat": chat, "lorebooks": {"global": book}}))
    args = ["explain", str(template), "--context", str(tmp_path / "run.json")]
    path, doc = explain_files(tmp_path, capsys, args)
    opened = open_page(path)
    page = opened.page
    opened.assert_clean()  # no <img> fetched, no inline handler or script run (CSP: no error)
    assert page.evaluate("window.__pwned") is None
    assert page.title() == f"apc explain: {template}"
    assert page.text_content("h1") == f"apc explain: {template}"
    texts = page.eval_on_selector_all("ol.messages pre", "ps => ps.map(p => p.textContent)")
    assert HOSTILE in texts[0] and texts[-1] == f"a dragon {HOSTILE}"
    assert doc["worldInfo"]["entries"][0]["comment"] == HOSTILE
    assert page.text_content("table.world td[data-col=entry]") == HOSTILE
    assert page.locator("main img, main script, main iframe").count() == 0


#: the bill chart's series: a turn's input tokens read from the cache, written, and neither
BILL_PARTS = (
    ("cached", "cachedTokens"),
    ("cache-written", "writtenTokens"),
    ("uncached", "uncachedTokens"),
)


def bench_page(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> tuple[Opened, dict[str, Any]]:
    """The page of ``apc bench ARGS``, opened clean, and its JSON document."""
    path = tmp_path / "bench.html"
    assert main([*args, "--format", "html", "-o", str(path)]) == 0
    capsys.readouterr()
    opened = open_page(path)
    opened.assert_clean()
    return opened, json.loads(opened.page.text_content("#apc-data"))["bench"]


def check_bench_page(page: Any, data: dict[str, Any]) -> None:
    """The page shows the text report's set-up and prompt-cache rule lines and its first
    table cell for cell, and per primary run its label, its bill's figures (the JSON's
    numbers) and each turn's input as billed, stacked: cached, cache-written, uncached."""
    report = BenchReport.model_validate(data)
    lines = render_report(report).splitlines()
    assert f"{data['source']}: " + page.text_content("#meta") == lines[0]  # the source: h1
    assert page.text_content("#rule") == lines[1]
    table = lines[3 : lines.index("", 3)]  # head, dashes, one row per figure
    summary = page.eval_on_selector_all(
        "table.summary tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert len(summary) == len(table) - 1 == 16
    for line, cells in zip([table[0], *table[2:]], summary, strict=True):
        assert re.split(r"\s{2,}", line.strip()) == cells
    for i, run in enumerate(data["runs"]):
        if not run["primary"]:
            continue
        section = f"section[data-run='{i}']"
        assert page.text_content(f"{section} h2") == report.runs[i].label
        bill = run["bill"]
        cards = page.eval_on_selector_all(
            f"{section} .cards.bill .card",
            "cs => cs.map(c => [c.dataset.field, 'value' in c.dataset ? +c.dataset.value : null])",
        )
        per_token = bill["billed"] / bill["requestTokens"] if bill["requestTokens"] else None
        assert dict(cards) == {
            "billed": bill["billed"],
            "perRequestToken": per_token,
            "cachedShare": bill["cachedShare"],
            "boundRatio": bill["boundRatio"],
        }
        assert page.text_content(f"{section} [data-field=billed] b") == fmt(bill["billed"])
        rects = page.eval_on_selector_all(
            f"{section} .chart.bill rect[data-turn]",
            "rs => rs.map(r => [r.dataset.turn, r.dataset.cat, +r.dataset.tokens])",
        )
        turns = run["perTurn"]
        expected = [[str(t["messages"]), n, t[k]] for t in turns for n, k in BILL_PARTS if t[k]]
        assert sorted(rects) == sorted(expected)
        for t in turns:  # a turn's stack is its request
            stack = sum(n for turn, _, n in rects if turn == str(t["messages"]))
            assert stack == (t["totalTokens"] or 0)
        marks = page.eval_on_selector_all(
            f"{section} .chart.bill line.mark",
            "ls => ls.map(l => [l.dataset.turn, +l.dataset.value])",
        )
        assert marks == [
            [str(t["messages"]), t["billed"]] for t in turns if t["billed"] is not None
        ]
        # prefix stability: the run's and each comparison run's of the same budget
        points = page.locator(f"{section} .chart.stability circle").count()
        same = [r for r in data["runs"] if r["budget"] == run["budget"]]
        assert points == sum(t["prefixStability"] is not None for r in same for t in r["perTurn"])


def test_bench_page_shows_the_figures_of_the_text_and_json(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", str(WRITER / "template.txt"), "--context", str(WRITER / "run.json")]
    opened, data = bench_page(open_page, tmp_path, capsys, [*args, "--budget", "1100", "2000"])
    page = opened.page
    check_bench_page(page, data)
    assert data["cacheRule"]["caching"] == "automatic"
    runs = [r for r in data["runs"] if r["primary"]]
    assert page.locator("section.run").count() == len(runs) == 2
    assert any(t["cuts"] for t in runs[0]["perTurn"])  # budget 1,100 cuts
    assert any(t["cachedTokens"] for t in runs[0]["perTurn"])  # over 1,024 tokens: cached
    for i, run in enumerate(data["runs"]):
        if not run["primary"]:
            continue
        rects = page.eval_on_selector_all(
            f"section[data-run='{i}'] .chart.tokens rect",
            "rs => rs.map(r => [r.dataset.turn, r.dataset.cat, +r.dataset.tokens])",
        )
        expected = [
            [str(t["messages"]), cat, n]
            for t in run["perTurn"]
            for cat, n in t["categories"].items()
            if n
        ]
        assert sorted(rects) == sorted(expected)
        cuts = page.eval_on_selector_all(
            f"section[data-run='{i}'] .chart.turn-cuts rect[data-turn]",
            "rs => rs.map(r => [r.dataset.turn, r.dataset.cat, +r.dataset.tokens])",
        )
        expected = [
            [str(t["messages"]), a, n] for t in run["perTurn"] for a, n in t["cuts"].items()
        ]
        assert sorted(cuts) == sorted(expected)
    page.uncheck("input[data-cat=history]")
    assert page.locator(".chart.tokens rect[data-cat=history]").count() == 0
    assert page.locator("table.categories tr[data-id=history]:not([hidden])").count() == 0
    page.check("input[data-cat=history]")
    assert page.locator(".chart.tokens rect[data-cat=history]").count() == 2 * len(data["turns"])
    screenshot(opened, "bench-writer.png")


def test_bench_page_shows_auto_beside_the_fixed_steps(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--cache-stable auto`` under Anthropic's explicit cache: the chosen step (``auto N``)
    beside the runs without steps and with the default step, each bill with cache writes."""
    args = ["bench", str(WRITER / "template.txt"), "--context", str(WRITER / "run.json")]
    args += ["--budget", "2000", "--cache-stable", "auto", "--provider", "anthropic"]
    opened, data = bench_page(open_page, tmp_path, capsys, args)
    page = opened.page
    check_bench_page(page, data)
    assert data["cacheRule"]["caching"] == "explicit"
    steps = page.eval_on_selector_all(
        "table.summary tr[data-id=cache-stable] td", "ts => ts.map(t => t.textContent)"
    )
    auto = next(r for r in data["runs"] if r["primary"])
    assert steps == ["cache-stable", "off (cmp)", "32 (cmp)", f"auto {auto['cacheStable']}"]
    assert auto["auto"] and auto["bill"]["written"] > 0
    assert any(t["writtenTokens"] for t in auto["perTurn"])
    names = page.eval_on_selector_all(
        "section.run .chart.stability circle", "cs => [...new Set(cs.map(c => c.dataset.series))]"
    )
    primary = f"cache-stable auto {auto['cacheStable']}"
    assert names == [primary, "cache-stable off (cmp)", "cache-stable 32 (cmp)"]
    screenshot(opened, "bench-auto.png")


def test_hostile_bench_inputs_are_shown_as_text(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source, chat and model name with markup: shown as text, nothing run or fetched; a
    model with no known prompt-cache rule is billed in full and says so."""
    template = tmp_path / "t<b>'&.txt"
    template.write_text(f"{HOSTILE}\n<<agent.chat.history>>\n")
    chat = [{"role": "user", "content": f"a dragon {HOSTILE}"}]
    (tmp_path / "run.json").write_text(json.dumps({"chat": chat}))
    model = "m</script><b>'&"
    args = ["bench", str(template), "--context", str(tmp_path / "run.json")]
    args += ["--provider", "openai-compatible", "--model", model]
    opened, data = bench_page(open_page, tmp_path, capsys, args)
    page = opened.page
    assert page.evaluate("window.__pwned") is None
    assert page.text_content("h1") == f"apc bench: {template}"
    assert data["cacheRule"] is None
    no_rule = f"no rule known for openai-compatible {model}: every input token billed in full"
    assert page.text_content("#rule") == f"prompt cache: {no_rule}"
    check_bench_page(page, data)
    assert page.locator("main img, main script, main iframe").count() == 0


def test_a_failed_fit_shows_the_ledger_up_to_the_failure(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "failed.html"
    assert main([*WRITER_ARGS, "--budget", "50", "--format", "html", "-o", str(path)]) == 1
    capsys.readouterr()
    opened = open_page(path)
    page = opened.page
    opened.assert_clean()
    assert page.text_content("[data-field=totalTokens] b") == "none (failed)"
    actions = {r["id"]: r["action"] for r in ledger_rows(page)}
    assert actions["012:chat.history"] == "not_reached" and actions["013:text"] == "kept"
    assert page.get_attribute("#diagnostics .diag", "data-code") == "context.budget_exceeded"
    assert page.locator("ol.messages").count() == 0


def test_figures_are_written_as_the_text_report_writes_them(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python rounds a tie to even, JavaScript's toFixed up: the page rounds as Python."""
    path, _ = explain_files(tmp_path, capsys, WRITER_ARGS)
    page = open_page(path).page
    rng = random.Random(28)
    values = [0.0, 0.15, 0.25, 0.35, 2.5, 3.5, 1086.5, 0.98845, 0.00049, 999.95, 99999.5]
    values += [k / 8 for k in range(0, 400)] + [k + 0.5 for k in range(0, 3000, 7)]
    values += [round(rng.uniform(0, 10 ** rng.randint(0, 6)), 4) for _ in range(2000)]
    got = page.evaluate("vs => vs.map(v => [fmt(v), pct(v), ms(v)])", values)
    assert got == [[f"{round(v):,}", f"{v:.1%}", f"{v:.1f}"] for v in values]


@pytest.mark.skipif(
    not (PRESET.exists() and ELDORIA.exists() and SERAPHINA.exists()),
    reason="no corpus at ../shared/corpus",
)
def test_a_real_preset_with_its_lorebook(
    open_page: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = [
        {"role": "assistant", "content": "*You wake in a forest glade.* Are you hurt?"},
        {"role": "user", "content": "I remember the Eldoria woods, and a beast."},
    ]
    run = {"character": str(SERAPHINA), "worldInfo": str(ELDORIA), "chat": chat}
    (tmp_path / "run.json").write_text(json.dumps(run))
    args = ["explain", str(PRESET), "--context", str(tmp_path / "run.json")]
    path, doc = explain_files(tmp_path, capsys, args)
    opened = open_page(path)
    opened.assert_clean()
    world = opened.page.eval_on_selector_all(
        "table.world tbody tr",
        "rs => rs.map(r => [r.cells[0].textContent, r.cells[3].textContent])",
    )
    entries = doc["worldInfo"]["entries"]
    assert len(entries) == 4
    assert world == [
        [str(e["uid"]), "activated" if e["activated"] else e["reason"]] for e in entries
    ]
    screenshot(opened, "explain-corpus.png")
