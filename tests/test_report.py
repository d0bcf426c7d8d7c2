"""The HTML reports (``apc explain --format html``, ``apc bench --format html``) as files:
the document embedded in the page is exactly what ``--format json`` prints, no input can end
the element it sits in, and the page lets only its own scripts run. What the page shows is
checked in a browser: tests/test_report_browser.py."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import compiler
from compiler.cli import main
from compiler.report.page import DATA_ID, embed_json

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "examples" / "writer"
EXPLAIN = ["explain", str(WRITER / "template.txt"), "--context", str(WRITER / "run.json")]
HOSTILE = "</script><script>window.__pwned = 1</script><!-- <img src=x onerror=alert(1)> \"'&"


def embedded(page: str) -> Any:
    """The JSON document of a page, read back as the page's script reads it."""
    match = re.search(rf'<script type="application/json" id="{DATA_ID}">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_embedded_json_reads_back_and_cannot_end_its_element(value: Any) -> None:
    text = embed_json(value)
    assert not {"<", ">", "&", "\u2028", "\u2029"} & set(text)
    assert json.loads(text) == value


def test_the_explain_page_holds_the_json_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_cli([*EXPLAIN, "--format", "json"], capsys)
    assert code == 0
    page_file = tmp_path / "explain.html"
    assert main([*EXPLAIN, "--format", "html", "-o", str(page_file)]) == 0
    page = page_file.read_text(encoding="utf-8")
    data = embedded(page)
    assert data["report"] == "explain" and data["failed"] is False
    assert data["explain"] == json.loads(out)
    assert data["source"] == str(WRITER / "template.txt")
    assert page.startswith("<!DOCTYPE html>") and "<script src" not in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


def test_the_page_runs_only_its_own_scripts(capsys: pytest.CaptureFixture[str]) -> None:
    code, page = run_cli([*EXPLAIN, "--format", "html"], capsys)
    assert code == 0
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    rules = dict(r.strip().split(" ", 1) for r in html.unescape(policy.group(1)).split(";"))
    assert rules["default-src"] == "'none'" and rules["img-src"] == "'none'"
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(scripts) == 1 and len(styles) == 1

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert rules["script-src"] == digest(scripts[0])
    assert rules["style-src"] == digest(styles[0])


def test_hostile_inputs_stay_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.txt").write_text(f"{HOSTILE}\n<<agent.chat.history>>\n")
    chat = [{"role": "user", "name": HOSTILE[:20], "content": HOSTILE}]
    (tmp_path / "run.json").write_text(json.dumps({"chat": chat}))
    args = ["explain", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    code, page = run_cli([*args, "--format", "html"], capsys)
    assert code == 0
    assert page.count("</script>") == 2  # the data element's and the script's own
    assert "window.__pwned" not in re.sub(r'id="apc-data">.*?</script>', "", page, flags=re.S)
    texts = [m["text"] for m in embedded(page)["messages"]["messages"]]
    assert HOSTILE in texts[0] and texts[1] == HOSTILE


def test_a_source_name_not_utf8_still_writes_a_utf8_page(tmp_path: Path) -> None:
    """A file name of bytes that are not UTF-8 (read as lone surrogates) is no crash: the page
    is valid UTF-8 and its document reads back the name as the JSON report gives it."""
    name = os.fsdecode(b"b\xff<!--.txt")
    if "\udcff" not in name:
        pytest.skip("the file system encoding decodes every byte")
    try:
        (tmp_path / name).write_text("Hello {{user}}\n", encoding="utf-8")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses a name that is not UTF-8")
    out = tmp_path / "page.html"
    assert main(["explain", str(tmp_path / name), "--format", "html", "-o", str(out)]) == 0
    page = out.read_bytes().decode("utf-8")  # strict: valid UTF-8
    assert embedded(page)["source"] == str(tmp_path / name)
    assert "<title>apc explain: " in page and "b\ufffd&lt;!--.txt</title>" in page


@given(st.text(st.characters(categories=["Cs", "Ll"]), max_size=8))
def test_embedded_json_escapes_lone_surrogates(text: str) -> None:
    embedded_text = embed_json({"name": text})
    embedded_text.encode("utf-8")  # no lone surrogate left
    # as UTF-16 code units (what the page's JSON.parse reads): a high and a low surrogate
    # side by side are one character
    units = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    assert json.loads(embedded_text) == {"name": units}


def test_a_failed_fit_draws_the_ledger_up_to_the_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_cli([*EXPLAIN, "--budget", "50", "--format", "json"], capsys)
    assert code == 1
    code, page = run_cli([*EXPLAIN, "--budget", "50", "--format", "html"], capsys)
    assert code == 1
    data = embedded(page)
    assert data["failed"] is True and data["messages"] is None
    assert data["explain"]["entries"] == json.loads(out)["entries"]
    assert [d["code"] for d in data["diagnostics"]] == ["context.budget_exceeded"]


def test_request_messages_follow_the_request_and_the_ledger() -> None:
    result = compiler.compile(WRITER / "template.txt", context=WRITER / "run.json")
    got = compiler.request_messages(result)
    assert got["squashed"] is False
    rows = got["messages"]
    sent = result.request["messages"]
    assert [(r["role"], r["text"]) for r in rows[: len(sent)]] == [
        (m["role"], m["content"][:1200]) for m in sent
    ]
    assert rows[-1]["role"] == "tools"  # the tool definitions, last
    for row in rows:
        for part in row["parts"]:
            if part["tokens"] is not None:
                assert part["tokens"] == result.ledger.entry(part["id"]).tokens_used
    history = result.ledger.entry("012:chat.history")
    assert sum(r["parts"][0]["id"] == history.id for r in rows) == history.messages_kept
    # every token of the request is in a message but the provider's reply priming
    assert 0 <= result.ledger.total_tokens - sum(r["tokens"] for r in rows) <= 3


def test_the_bench_page_holds_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", str(WRITER / "template.txt"), "--context", str(WRITER / "run.json")]
    args += ["--budget", "1100", "--no-compare"]
    code, out = run_cli([*args, "--format", "json"], capsys)
    assert code == 0
    code, page = run_cli([*args, "--format", "html"], capsys)
    assert code == 0
    data = embedded(page)
    expected = json.loads(out)
    for run in (*expected["runs"], *data["bench"]["runs"]):  # timings differ run to run
        run.pop("compileMs")
        for turn in run["perTurn"]:
            turn.pop("compileMs")
    assert data["report"] == "bench" and data["bench"] == expected
