"""Cost of fitting a long chat history into a 16k budget, cold and warm, against a naive
"tokenize everything, keep the tail" baseline (what trim_messages-style trimmers do).

    python benchmarks/history_fit.py [--budget 16000] [--repeat 5]

cold: a fresh token-count cache and summary cache (the encoding itself already loaded);
warm: the same process after the previous turn, with one new message appended (what a chat
runtime does every turn). The baseline counts every message with the same cost model and
then keeps the newest that fit; its warm figure reuses its cache too (so only the framing
and the walk over all messages remain). Figures are best of --repeat, in milliseconds.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from compiler._base.frame import Component, ComponentKind, ContextFrame, Message
from compiler._base.journal import Journal
from compiler._base.tokens import TokenCounter, get_encoding
from compiler.fit import fit
from compiler.fit.summarize import SummaryCache
from compiler.providers.openai_chat import DIALECT

TEXT = (
    "the ferry creaked across the grey river while Mira counted lanterns on the far bank "
    "and Sam said nothing for a long time because the night had its own weight"
)
WORDS = TEXT.split()


def make_chat(n: int, seed: int = 7) -> list[Message]:
    rng = random.Random(seed)
    out: list[Message] = []
    for i in range(n):
        words = rng.choices(WORDS, k=rng.randint(8, 60))
        out.append({"role": "user" if i % 2 == 0 else "assistant", "content": " ".join(words)})
    return out


def frame_of(messages: list[Message]) -> ContextFrame:
    return ContextFrame(
        components=[
            Component(
                id="000:text",
                kind=ComponentKind.PRESET_GUIDE,
                source="bench",
                inline_content="You are a writing agent. Continue the story.",
            ),
            Component(
                id="001:chat.history",
                kind=ComponentKind.CHAT_HISTORY,
                source="bench",
                messages=messages,
                role="user",
            ),
        ]
    )


SUMMARIES = [SummaryCache()]  # the caller-owned summary cache of the current run


def ours(frame: ContextFrame, counter: TokenCounter, budget: int) -> int:
    result = fit(
        frame,
        dialect=DIALECT,
        counter=counter,
        model="gpt-4o",
        budget=budget,
        journal=Journal(),
        summary_cache=SUMMARIES[0],
    )
    return result.total_tokens


def naive(frame: ContextFrame, counter: TokenCounter, budget: int) -> int:
    messages = frame.components[1].messages or []
    costs = [DIALECT.message_tokens(m, counter) for m in messages]  # everything, every time
    room = budget - 20
    for cost in reversed(costs):
        if cost > room:
            break
        room -= cost
    return budget - room


def best(fn: Callable[[], object], repeat: int, setup: Callable[[], None]) -> float:
    times = []
    for _ in range(repeat):
        setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


Fitter = Callable[[ContextFrame, TokenCounter, int], int]


def measure(
    fn: Fitter, before: ContextFrame, after: ContextFrame, budget: int, repeat: int
) -> tuple[float, float]:
    """(cold, warm) milliseconds of one fitter."""
    state: dict[str, TokenCounter] = {}

    def fresh() -> None:
        state["c"] = TokenCounter("o200k_base")
        SUMMARIES[0] = SummaryCache()

    def previous_turn() -> None:
        fresh()
        fn(before, state["c"], budget)

    cold = best(lambda: fn(before, state["c"], budget), repeat, fresh)
    warm = best(lambda: fn(after, state["c"], budget), repeat, previous_turn)
    return cold, warm


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=16_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    get_encoding("o200k_base")  # load once; not part of any figure
    print(f"budget {args.budget} tokens, o200k_base, best of {args.repeat}, milliseconds\n")
    print(
        "| messages | ours cold | naive cold | naive/ours | ours warm | naive warm | naive/ours |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in (200, 2_000, 10_000):
        chat = make_chat(n + 1)
        before, after = frame_of(chat[:n]), frame_of(chat)
        (oc, ow), (nc, nw) = (
            measure(fn, before, after, args.budget, args.repeat) for fn in (ours, naive)
        )
        cells = [f"{n:,}", f"{oc:.2f}", f"{nc:.2f}", f"{nc / oc:.1f}x"]
        cells += [f"{ow:.2f}", f"{nw:.2f}", f"{nw / ow:.1f}x"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
