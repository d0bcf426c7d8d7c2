"""A runtime's warm turn with the inputs SillyTavern users bring: lorebooks, cards with their
own lorebook, a preset. Each turn appends one message to a ``compiler.ChatLog`` and compiles
it again in the same ``compiler.Session`` with the same other inputs (a runtime's steady
state); the figure is the median turn in milliseconds.

    python benchmarks/session_inputs.py [--turns 40] [--against DIR] [--rounds 2]

Scenarios (a template of the workload's system prompt, the card, ``<<agent.world.activated>>``
and the history unless said; 16,000 o200k tokens):

- lorebook N: an inline lorebook (``lorebooks.global``) of N generated entries, chat of 200;
- long chat: a 100-entry lorebook, chat of 3,000 (the world info scan reads the newest);
- card book N: a card with an embedded ``character_book`` of N entries, chat of 200;
- tool results N: N results of reading a file (4.5 KB each) as
  ``<<agent.tool_results mode="summary" budget=1200>>``, chat of 200;
- preset: ``../shared/corpus``'s st-default-2024 preset with its Seraphina card (skipped
  when the corpus is absent), chats of 200 and 3,000.

``--against DIR`` runs every scenario also with the checkout DIR first on the path (e.g. a
``git worktree`` of an older commit), alternately, each in a fresh process, ``--rounds``
times, and prints both medians and their ratio.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import CARD, SYSTEM, make_chat, offline_tiktoken_cache

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
TEMPLATE = f"{SYSTEM}\n<<agent.character>>\n<<agent.world.activated>>\n<<agent.chat.history>>"
TOOLS = f'{SYSTEM}\n<<agent.tool_results mode="summary" budget=1200>>\n<<agent.chat.history>>'
WORDS = ["lantern", "ferry", "river", "night", "bank", "weight", "grey"]
WORDS += ["keeper", "daughter", "storm", "harbour", "tide"]


def entries(n: int, *, card: bool) -> Any:
    """``n`` generated entries: a world file's (keyed by uid) or a card book's (a list)."""
    rng = random.Random(n)
    made = [
        {
            "keys" if card else "key": [f"{rng.choice(WORDS)}{i}", rng.choice(WORDS) + "x"],
            "content": " ".join(rng.choice(WORDS) for _ in range(60)),
            **({"id": i, "insertion_order": i} if card else {"uid": i, "comment": f"e{i}"}),
        }
        for i in range(n)
    ]
    return made if card else {str(i): e for i, e in enumerate(made)}


def tool_results(n: int) -> list[dict[str, Any]]:
    """``n`` results of reading a file: 60 lines of 12 words each (about 4.5 KB)."""
    rng = random.Random(n)
    return [
        {
            "callId": f"c{i}",
            "tool": "workspace.read_file",
            "arguments": {"path": f"output/f{i}.md"},
            "content": "\n".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(60)),
        }
        for i in range(n)
    ]


def scenarios() -> dict[str, tuple[str, int, dict[str, Any]]]:
    """name -> (source: a template's text or a preset's path, chat length, other inputs)."""
    out: dict[str, tuple[str, int, dict[str, Any]]] = {}
    for n in (0, 100, 500):
        book = {"lorebooks": {"global": {"entries": entries(n, card=False)}}} if n else {}
        out[f"lorebook {n}"] = (TEMPLATE, 200, {"character": CARD, **book})
    out["long chat, lorebook 100"] = (
        TEMPLATE,
        3000,
        {"character": CARD, "lorebooks": {"global": {"entries": entries(100, card=False)}}},
    )
    for n in (100, 300):
        card = {**CARD, "character_book": {"entries": entries(n, card=True)}}
        out[f"card book {n}"] = (TEMPLATE, 200, {"character": card})
    for n in (20, 100):
        out[f"tool results {n}"] = (TOOLS, 200, {"toolResults": tool_results(n)})
    preset = CORPUS / "presets" / "st-default-2024.json"
    seraphina = CORPUS / "cards" / "Seraphina-v2v3.png"
    if preset.is_file() and seraphina.is_file():
        for n in (200, 3000):
            out[f"preset, {n} messages"] = (str(preset), n, {"character": str(seraphina)})
    return out


def turn_ms(name: str, turns: int) -> float:
    """The median warm turn of one scenario, in this process."""
    import compiler

    source, n, inputs = scenarios()[name]
    if "character" in inputs and isinstance(inputs["character"], str):
        from compiler.inputs.cards import read_card_json

        inputs = {**inputs, "character": read_card_json(inputs["character"])[0]}  # inline
    chat = make_chat(n + turns + 4)
    session = (
        compiler.Session(source, budget=16_000)
        if source.endswith(".json")
        else compiler.Session.from_string(source, budget=16_000)
    )
    log = compiler.ChatLog(chat[:n])
    gc.disable()
    times = []
    for i in range(turns + 4):
        log.append(chat[n + i])
        start = time.perf_counter()
        session.compile({"chat": log, **inputs})
        if i >= 4:  # the first turns read what later ones reuse
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def in_process(name: str, turns: int, path: str | None) -> float:
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, "--turns", str(turns)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=path or ROOT,
    )
    return float(json.loads(out.stdout)["ms"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--against", help="another checkout, run alternately beside this one")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    offline_tiktoken_cache()
    if args.child:
        print(json.dumps({"ms": turn_ms(args.child, args.turns)}))
        return
    if not args.against:
        print("| scenario | warm turn (ms) |\n|---|---:|")
        for name in scenarios():
            print(f"| {name} | {in_process(name, args.turns, str(ROOT)):.2f} |")
        return
    print(f"| scenario | {args.against} (ms) | this checkout (ms) | ratio |\n|---|---:|---:|---:|")
    for name in scenarios():
        them: list[float] = []
        us: list[float] = []
        for _ in range(args.rounds):
            them.append(in_process(name, args.turns, args.against))
            us.append(in_process(name, args.turns, str(ROOT)))
        a, b = statistics.median(them), statistics.median(us)
        print(f"| {name} | {a:.2f} | {b:.2f} | {a / b:.1f}x |")


if __name__ == "__main__":
    main()
