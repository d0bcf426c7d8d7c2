"""Time from ``textDocument/didChange`` to ``textDocument/publishDiagnostics`` of ``apc lsp``
(a real server process over stdio, pygls's client), beside the time of the check it runs
(``compiler.check_string`` in this process), for the bundled example template, the corpus's
SillyTavern preset and that preset with its entries repeated to a large one.

    .venv/bin/python benchmarks/lsp_latency.py [--changes 10]

The server waits 300 ms after a change before it checks (the debounce); ``after debounce``
is the rest: the check, mapping the diagnostics, and the round trip.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler.lsp.server import DEBOUNCE_SECONDS  # noqa: E402
from tests.lsp.client import Client  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "presets" / "st-default-2024.json"


def _sources(folder: Path) -> list[tuple[str, Path]]:
    out = [("example template", ROOT / "examples" / "writer" / "template.txt")]
    if CORPUS.is_file():
        out.append(("corpus preset", CORPUS))
        data = json.loads(CORPUS.read_text(encoding="utf-8"))
        prompts = data["prompts"]
        data["prompts"] = [
            {**p, "identifier": f"{p['identifier']}_{i}"} if i else p
            for i in range(60)
            for p in prompts
        ]
        big = folder / "large-preset.json"
        big.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        out.append(("large preset (60x entries)", big))
    return out


def _check_ms(text: str, kind: str, name: str) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        with contextlib.suppress(compiler.APCError):
            compiler.check_string(text, name=name, kind=kind)  # type: ignore[arg-type]
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        client = Client(folder)
        try:
            print(
                "| source | size | didChange -> publishDiagnostics (median) | after debounce "
                "| check_string | server/check |"
            )
            print("|---|---|---|---|---|---|")
            for label, path in _sources(folder):
                text = path.read_text(encoding="utf-8")
                uri = client.open(path, text)
                client.published(uri)
                times = []
                for version in range(2, args.changes + 2):
                    changed = text + " " * (version % 2)
                    start = time.perf_counter()
                    client.change(uri, changed, version)
                    client.published(uri)
                    times.append(time.perf_counter() - start)
                median = statistics.median(times) * 1000
                rest = median - DEBOUNCE_SECONDS * 1000
                kind = "preset" if path.suffix == ".json" else "template"
                check = _check_ms(text, kind, str(path))
                print(
                    f"| {label} | {len(text.encode()) / 1024:,.1f} KB | {median:,.0f} ms | "
                    f"{rest:,.0f} ms | {check:,.1f} ms | {rest / check:,.1f}x |"
                )
        finally:
            client.close()


if __name__ == "__main__":
    main()
