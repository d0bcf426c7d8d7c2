"""What a runtime pays for its input over a long chat, per provider: ``compiler.bench`` over
the last 100 turns of a 1,000-message chat at a 16k budget, without cache-stable cuts, with
the default step (32) and with ``cache_stable="auto"``, each billed under the provider's
prompt-cache rule, beside the least bill any budget-respecting cut sequence could reach.

The chat is the side-by-side workload's (``workload.make_chat``), in a template with its
system prompt and card; with the corpus present (../shared/corpus), also SillyTavern's
default preset with the Seraphina card over the same chat.

    .venv/bin/python benchmarks/bill_bench.py [--messages 1000] [--budget 16000] [--turns 100]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from workload import SYSTEM, card_text, make_chat

import compiler

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}


def _pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}%}"


def rows(name: str, report: compiler.BenchReport) -> list[str]:
    out = []
    for run in report.runs:
        bill = run.bill
        step = str(run.cache_stable) if run.cache_stable else "off"
        step = f"auto {step}" if run.auto else step
        price = bill.billed / bill.request_tokens if bill.request_tokens else 0.0
        ratio = "-" if bill.bound_ratio is None else f"{bill.bound_ratio:.3f}x"
        out.append(
            f"| {name} | {report.provider} {report.model} | {step} | {_pct(bill.cached_share, 2)} "
            f"| {_pct(run.cached_share.mean)} | {bill.billed:,.0f} | {price:.3f}x "
            f"| {bill.bound or 0:,.0f} ({bill.bound_window}) | {ratio} "
            f"| {_pct(run.budget_use.median)} |"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--budget", type=int, default=16000)
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--providers", default=",".join(MODELS))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="apc-bill-"))
    template = tmp / "template.txt"
    template.write_text(f"{SYSTEM}\n{card_text()}\n<<agent.chat.history>>\n", encoding="utf-8")
    chat = make_chat(args.messages)
    (tmp / "run.json").write_text(json.dumps({"chat": chat}), encoding="utf-8")
    sources = [("template", template, tmp / "run.json")]
    if CORPUS.is_dir():
        card = str(CORPUS / "cards" / "Seraphina-v2v3.png")
        (tmp / "st.json").write_text(json.dumps({"chat": chat, "character": card}))
        sources.append(("ST preset", CORPUS / "presets" / "st-default-2024.json", tmp / "st.json"))
    print(
        f"{args.turns} turns of a {args.messages:,}-message chat at {args.budget:,} tokens\n\n"
        "| source | provider | cache-stable | cached share (billed) | cached share (bytes) "
        "| billed input | per request token | least bound (window) | bill / bound "
        "| budget use |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for provider in args.providers.split(","):
        for name, source, context in sources:
            report = compiler.bench(
                source,
                context=context,
                budgets=[args.budget],
                last=args.turns,
                auto=True,
                provider=provider,
                model=MODELS.get(provider),
            )
            print("\n".join(rows(name, report)), flush=True)


if __name__ == "__main__":
    main()
