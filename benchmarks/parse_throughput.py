"""Parse throughput (MB/s) of a large generated template, text-heavy and macro-heavy.

Run: python benchmarks/parse_throughput.py [--mb 8]
Prints, for each shape, MB/s for parse() alone and parse()+bind(), best of 3, and the
ratio to a plain ``str.count`` scan of the same text (a floor that moves with the machine).
"""

from __future__ import annotations

import argparse
import time

from compiler._assemble.macros import bind
from compiler.syntax import parse

PARAGRAPH = (
    "The fog rolled over the harbour while {{char}} counted the lanterns. "
    "Markdown *stays*, code `a << 2 >> 1` stays, and so do stray >> marks.\n"
)
MACROS = (
    '<<agent.file "output/main.md" budget=800 priority=10>>\n'
    '<<agent.tool_results mode="summary" budget=1200>>\n'
    "<<agent.plan>>\n"
)


def make(mb: float, macro_every: int) -> str:
    target = int(mb * 1_000_000)
    parts: list[str] = []
    size = i = 0
    while size < target:
        chunk = PARAGRAPH if i % macro_every else MACROS
        parts.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(parts)


def best(fn: object, text: str, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(text)  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=8.0)
    args = ap.parse_args()
    print(
        f"{'shape':<14}{'MB':>6}{'macros':>9}{'parse MB/s':>12}{'+bind MB/s':>12}{'scan/parse':>12}"
    )
    for shape, every in (("text-heavy", 50), ("macro-heavy", 2)):
        text = make(args.mb, every)
        mb = len(text.encode()) / 1e6
        n_macros = len(parse(text).macros)
        t_parse = best(parse, text)
        t_bind = best(lambda s: bind(parse(s)), text)
        t_scan = best(lambda s: s.count("<<agent."), text)
        print(
            f"{shape:<14}{mb:>6.1f}{n_macros:>9}{mb / t_parse:>12.1f}{mb / t_bind:>12.1f}"
            f"{t_parse / t_scan:>12.0f}x"
        )


if __name__ == "__main__":
    main()
