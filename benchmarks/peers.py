"""This compiler beside the tools people would otherwise use, on one workload, as ratios.

    benchmarks/run.sh              # everything, from a fresh checkout (makes its own venvs)
    python benchmarks/peers.py [--sizes 200,2000,10000] [--budget 16000] [--repeat 5]
                               [--poet-python PATH] [--skip priompt,...]

The workload (benchmarks/workload.py): a system prompt, a character card and a chat of N
messages fitted into ``--budget`` o200k tokens, produced as OpenAI Chat messages, by

- floor: tiktoken counting only the newest messages until the budget is full (the least any
  tool must do; the encoding already loaded);
- floor+check: the floor after the structural check this compiler makes of every message a
  caller gives (``plain_chat``, as issue 14 asks: the same errors for bad input), nothing
  else: the least a compile that checks what it is given can cost;
- ours cold: one-shot ``compiler.compile_string`` (history strategy: summarize, the default);
- ours truncate: the same with ``strategy="truncate"`` (no summary: the peers' work);
- ours warm: a ``compiler.Session`` that compiled the previous turn (one message fewer);
- ours warm log: the same with the chat kept in a ``compiler.ChatLog`` (one message appended
  to it), so the session checks only the new message;
- langchain: ``trim_messages(strategy="last")`` with a per-message tiktoken counter;
- priompt: ``render`` with priorities rising toward the newest message;
- prompt-poet (``--poet-python``: its own venv, it pins an older tiktoken): ``tokenize()`` +
  ``truncate()``, compared through a floor measured with that same tiktoken.

The contenders run interleaved in one process, the same number of times each, with the
garbage collector off while one runs (as timeit does); figures are medians in milliseconds.
Peers get their own message objects built outside the timing.
*/truncate* ratios compare a peer with ours truncate, the same work (no summary).
Also: peak RSS of a 10,000-message compile beside the floor's (each in a fresh process),
and the wall time of ``apc check`` and ``apc compile`` processes on the bundled example
(bytecode cached, as an installed package has it).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import CARD, SYSTEM, card_text, make_chat, offline_tiktoken_cache
from workload import floor as workload_floor

import compiler
from compiler._base.tokens import get_encoding
from compiler.inputs.lazy_chat import plain_chat

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = f"{SYSTEM}\n<<agent.character>>\n<<agent.chat.history>>"
TRUNCATE = f'{SYSTEM}\n<<agent.character>>\n<<agent.chat.history strategy="truncate">>'
ENC = get_encoding("o200k_base")


def floor(chat: list[dict[str, str]], budget: int) -> int:
    """Count the system text, then only the newest messages until the budget is full."""
    return workload_floor(chat, budget, ENC.encode_ordinary)


def floor_checked(chat: list[dict[str, str]], budget: int) -> int:
    """The floor, after the check of every message a compile makes (nothing copied)."""
    if plain_chat(chat, copy=False) is None:
        raise ValueError("the workload's chat is plain")
    return floor(chat, budget)


def context(chat: Any) -> dict[str, Any]:
    return {"chat": chat, "character": CARD}


Contender = tuple[Callable[[], object], Callable[[], object]]  # (setup, measured)


def ours(template: str, chat: list[dict[str, str]], budget: int) -> Contender:
    ctx = context(chat)
    return (lambda: None), (lambda: compiler.compile_string(template, context=ctx, budget=budget))


def ours_warm(chat: list[dict[str, str]], budget: int) -> Contender:
    state: dict[str, compiler.Session] = {}
    before, after = context(chat[:-1]), context(chat)

    def setup() -> None:
        state["s"] = compiler.Session.from_string(TEMPLATE, budget=budget)
        state["s"].compile(before)

    return setup, (lambda: state["s"].compile(after))


def ours_warm_log(chat: list[dict[str, str]], budget: int) -> Contender:
    state: dict[str, Any] = {}

    def setup() -> None:
        state["log"] = log = compiler.ChatLog(chat[:-1])
        state["s"] = compiler.Session.from_string(TEMPLATE, budget=budget)
        state["s"].compile(context(log))
        log.append(chat[-1])

    return setup, (lambda: state["s"].compile(context(state["log"])))


def langchain(chat: list[dict[str, str]], budget: int) -> Contender:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        trim_messages,
    )

    messages: list[BaseMessage] = [SystemMessage(f"{SYSTEM}\n{card_text()}")]
    messages += [
        HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"]) for m in chat
    ]

    def count(message: BaseMessage) -> int:  # the cookbook's per-message count
        return 4 + len(ENC.encode_ordinary(str(message.content)))

    count.__annotations__["message"] = BaseMessage  # per message: langchain reads the type

    def run() -> object:
        return trim_messages(
            messages,
            max_tokens=budget - 3,
            token_counter=count,
            strategy="last",
            include_system=True,
            start_on="human",
        )

    return (lambda: None), run


def priompt(chat: list[dict[str, str]], budget: int) -> Contender:
    from priompt import AssistantMessage, O200KTokenizer, Scope, SystemMessage, UserMessage, render

    elements = [SystemMessage(f"{SYSTEM}\n{card_text()}", p=10**9)]
    elements += [
        Scope(
            UserMessage(m["content"]) if m["role"] == "user" else AssistantMessage(m["content"]),
            p=i,
        )
        for i, m in enumerate(chat)
    ]
    prompt = Scope(*elements)
    return (lambda: None), (
        lambda: render(prompt, {"token_limit": budget, "tokenizer": O200KTokenizer})
    )


def median_ms(contenders: dict[str, Contender], repeat: dict[str, int]) -> dict[str, float]:
    """Run the contenders interleaved; each name's median of its ``repeat`` runs, in ms."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(max(repeat.values())):
        for name, (setup, run) in contenders.items():
            if round_ >= repeat[name]:
                continue
            setup()
            gc.collect()
            gc.disable()  # as timeit does: a collection of the setup's garbage is noise
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) * 1000)
            gc.enable()
    return {name: statistics.median(t) for name, t in times.items()}


def peak_rss(which: str, n: int, budget: int) -> int:
    """Peak RSS (KiB) of a fresh process that loads the encoding and does one ``which``."""
    out = subprocess.run(
        [sys.executable, __file__, "--rss", which, "--sizes", str(n), "--budget", str(budget)],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout.strip())


def process_ms(args: list[str], repeat: int) -> float:
    """Median wall time of an ``apc`` process, its modules' bytecode cached as an install
    has it (a first run writes it, even where PYTHONDONTWRITEBYTECODE is set)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "compiler", *args]
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=ROOT)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=ROOT)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def poet(python: str, sizes: str, budget: int, repeat: int) -> dict[str, Any]:
    script = Path(__file__).resolve().parent / "poet_bench.py"
    out = subprocess.run(
        [python, str(script), "--sizes", sizes, "--budget", str(budget), "--repeat", str(repeat)],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout))


def table(rows: list[list[str]], head: list[str]) -> None:
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---:" for _ in head) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="200,2000,10000")
    parser.add_argument("--budget", type=int, default=16_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--slow-repeat", type=int, default=1, help="runs of priompt at 10,000")
    parser.add_argument("--poet-python", help="python of a venv with prompt-poet installed")
    parser.add_argument("--skip", default="", help="comma list: langchain,priompt,rss,process")
    parser.add_argument("--rss", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    skip = set(args.skip.split(",")) - {""}
    offline_tiktoken_cache()
    if args.rss:
        chat = make_chat(sizes[0])
        if args.rss == "ours":
            compiler.compile_string(TEMPLATE, context=context(chat), budget=args.budget)
        else:
            floor(chat, args.budget)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        return
    compiler.compile_string(TEMPLATE, context=context(make_chat(4)), budget=args.budget)  # warm-up
    print(f"budget {args.budget} o200k tokens; medians of {args.repeat} interleaved runs, ms\n")
    figures: dict[int, dict[str, float]] = {}
    for n in sizes:
        chat = make_chat(n)
        contenders = {
            "floor": ((lambda: None), lambda chat=chat: floor(chat, args.budget)),
            "floor+check": ((lambda: None), lambda chat=chat: floor_checked(chat, args.budget)),
            "ours cold": ours(TEMPLATE, chat, args.budget),
            "ours truncate": ours(TRUNCATE, chat, args.budget),
            "ours warm": ours_warm(chat, args.budget),
            "ours warm log": ours_warm_log(chat, args.budget),
        }
        if "langchain" not in skip:
            contenders["langchain"] = langchain(chat, args.budget)
        if "priompt" not in skip:
            contenders["priompt"] = priompt(chat, args.budget)
        repeat = {name: args.repeat for name in contenders}
        if "priompt" in repeat and n >= 5_000:
            repeat["priompt"] = args.slow_repeat
        figures[n] = median_ms(contenders, repeat)
    names = list(figures[sizes[0]])
    table(
        [[f"{n:,}", *(f"{figures[n][k]:.2f}" for k in names)] for n in sizes], ["messages", *names]
    )
    print("ratios (>1: slower than the reference)\n")
    rows = []
    base = figures[sizes[0]]["ours cold"]
    for n in sizes:
        f = figures[n]
        row = [
            f"{n:,}",
            f"{f['ours cold'] / f['floor']:.1f}x",
            f"{f['floor+check'] / f['floor']:.2f}x",
            f"{f['ours cold'] / f['floor+check']:.1f}x",
            f"{f['ours cold'] / base:.1f}x",
            f"{f['ours warm'] / f['floor']:.2f}x",
            f"{f['ours warm log'] / f['floor']:.2f}x",
        ]
        row += [
            f"{f[p] / f[ours]:.1f}x" if p in f else "-"
            for p in ("langchain", "priompt")
            for ours in ("ours cold", "ours truncate")
        ]
        rows.append(row)
    head = [
        "messages",
        "ours cold/floor",
        "floor+check/floor",
        "ours cold/floor+check",
        f"ours cold/ours at {sizes[0]:,}",
        "ours warm/floor",
        "warm log/floor",
        "langchain/ours",
        "langchain/truncate",
        "priompt/ours",
        "priompt/truncate",
    ]
    if args.poet_python:
        poet_fig = poet(args.poet_python, args.sizes, args.budget, max(1, args.repeat // 2))
        for row, n in zip(rows, sizes, strict=True):
            p = poet_fig[str(n)]
            # poet/ours through the floors measured beside each (tiktoken versions differ)
            ratio = (p["poet"] / p["floor"]) / (figures[n]["ours cold"] / figures[n]["floor"])
            row.append(f"{ratio:.1f}x")
        head.append("prompt-poet/ours")
    table(rows, head)
    if "rss" not in skip:
        n = sizes[-1]
        rss = {w: peak_rss(w, n, args.budget) for w in ("floor", "ours")}
        print(
            f"peak RSS at {n:,} messages: floor {rss['floor'] / 1024:.0f} MiB, ours "
            f"{rss['ours'] / 1024:.0f} MiB ({rss['ours'] / rss['floor']:.2f}x)\n"
        )
    if "process" not in skip:
        example = ROOT / "examples" / "writer"
        check = process_ms(["check", str(example / "template.txt")], args.repeat)
        run = process_ms(
            ["compile", str(example / "template.txt"), "--context", str(example / "run.json")],
            args.repeat,
        )
        print(
            f"processes on the bundled example: apc check {check:.0f} ms, "
            f"apc compile {run:.0f} ms\n"
        )


if __name__ == "__main__":
    main()
