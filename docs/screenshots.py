"""Writes the screenshots of the HTML report page (docs/pages/budgets/html-report.md) from the
bundled example: the top of the `apc explain` and `apc bench` pages of examples/writer, in
Debian's chromium through Playwright (the test extra).

    .venv/bin/python docs/screenshots.py   # from the repository root
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "examples" / "writer"
OUT = ROOT / "docs" / "pages" / "budgets"
RUN = ["--context", str(WRITER / "run.json")]


def pages(tmp: Path) -> dict[str, tuple[Path, str | None]]:
    """The two pages: explain at a budget that cuts; bench over the example's chat told on
    for 24 messages (the example's three, again and again), so the charts have turns."""
    template = tmp / "template.txt"  # a short path on the page
    shutil.copy(WRITER / "template.txt", template)
    explain, bench = tmp / "explain.html", tmp / "bench.html"
    args = ["explain", "template.txt", *RUN, "--budget", "1100"]
    assert main([*args, "--format", "html", "-o", str(explain)]) == 0
    run = json.loads((WRITER / "run.json").read_text(encoding="utf-8"))
    run["workspace"] = str(WRITER / "workspace")
    run["chat"] = [
        {**m, "content": f"{m['content']} (part {i // 3 + 1})"}
        for i, m in enumerate(run["chat"] * 8)
    ]
    (tmp / "run.json").write_text(json.dumps(run), encoding="utf-8")
    args = ["bench", "template.txt", "--context", "run.json", "--budget", "1150", "--no-compare"]
    assert main([*args, "--format", "html", "-o", str(bench)]) == 0
    return {
        "html-report-explain.png": (explain, None),
        "html-report-bench.png": (bench, "section.run .grid"),
    }


def main_() -> int:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.stderr.write("no chromium on PATH\n")
        return 1
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        os.chdir(tmp)  # the source as the page names it: template.txt
        browser = pw.chromium.launch(executable_path=chromium)
        page = browser.new_page(viewport={"width": 1000, "height": 760})
        for name, (path, part) in pages(Path(tmp)).items():
            page.goto(path.as_uri())
            page.wait_for_selector("#app h1")
            shot = page.locator(part) if part else page
            shot.screenshot(path=str(OUT / name))
            print(OUT / name, (OUT / name).stat().st_size, "bytes")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main_())
