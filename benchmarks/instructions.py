"""Instructions per compile, counted by valgrind's callgrind: a figure that the load of a
shared machine does not move, for comparing two versions of the code.

    python benchmarks/instructions.py [--sizes 20,10000] [--modes floor,cold,first,warm,swipe]
                                      [--repeat 3]

Each (mode, size) runs in a fresh process under ``valgrind --tool=callgrind`` with counting
off; the process sets its compiles up, turns counting on (``callgrind_control -i on``) for
``--repeat`` of them, then off, so start-up, imports and the encoding's load are not counted.
Modes, on the workload of ``peers.py`` (16,000 o200k tokens):

- floor: tiktoken counting only the newest messages until the budget is full;
- cold: a one-shot ``compiler.compile_string``;
- first: a ``compiler.Session``'s first compile of a ``compiler.ChatLog``;
- warm: the next turn of that session, one message appended to the log;
- swipe: a turn of that session whose log's newest message was replaced (at a few messages:
  the fixed cost of a turn).

Instructions are not time: the floor's tiktoken runs more of them per nanosecond than the
interpreter does, and memory stalls are not counted (see ``peers.py`` for times). Needs
valgrind (``callgrind_control`` included).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import CARD, SYSTEM, floor, make_chat, offline_tiktoken_cache

TEMPLATE = f"{SYSTEM}\n<<agent.character>>\n<<agent.chat.history>>"
BUDGET = 16_000


def _counting(on: bool) -> None:
    subprocess.run(
        ["callgrind_control", "-i", "on" if on else "off", str(os.getpid())],
        check=True,
        capture_output=True,
    )


def child(mode: str, n: int, repeat: int) -> None:
    """Set up, then count ``repeat`` runs of ``mode`` (in the process valgrind runs)."""
    import gc

    import compiler
    from compiler._base.tokens import get_encoding

    offline_tiktoken_cache()
    chat = make_chat(n + repeat)
    gc.disable()  # a collection's passes are not the compile's
    compiler.compile_string(TEMPLATE, context={"chat": chat[:n], "character": CARD}, budget=BUDGET)
    if mode == "floor":
        encode = get_encoding("o200k_base").encode_ordinary
        _counting(True)
        for _ in range(repeat):
            floor(chat[:n], BUDGET, encode)
    elif mode == "cold":
        context = {"chat": chat[:n], "character": CARD}
        _counting(True)
        for _ in range(repeat):
            compiler.compile_string(TEMPLATE, context=context, budget=BUDGET)
    elif mode == "first":
        sessions = [compiler.Session.from_string(TEMPLATE, budget=BUDGET) for _ in range(repeat)]
        logs = [compiler.ChatLog(chat[:n]) for _ in range(repeat)]
        _counting(True)
        for session, log in zip(sessions, logs, strict=True):
            session.compile({"chat": log, "character": CARD})
    elif mode == "swipe":  # the fixed cost of a turn: the newest message replaced
        session = compiler.Session.from_string(TEMPLATE, budget=BUDGET)
        log = compiler.ChatLog(chat[:n])
        session.compile({"chat": log, "character": CARD})
        _counting(True)
        for i in range(repeat):
            log[n - 1] = chat[n + i]
            session.compile({"chat": log, "character": CARD})
    else:  # warm: turn after turn, one message appended each
        session = compiler.Session.from_string(TEMPLATE, budget=BUDGET)
        log = compiler.ChatLog(chat[:n])
        session.compile({"chat": log, "character": CARD})
        _counting(True)
        for i in range(repeat):
            log.append(chat[n + i])
            session.compile({"chat": log, "character": CARD})
    _counting(False)


def instructions(mode: str, n: int, repeat: int) -> float:
    """Millions of instructions per run of ``mode`` at ``n`` messages."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                mode,
                str(n),
                str(repeat),
            ],
            check=True,
            capture_output=True,
        )
        for line in out.read_text().splitlines():
            if line.startswith("totals:"):
                return int(line.split()[1]) / 1e6 / repeat
    raise RuntimeError("callgrind wrote no totals")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="20,10000")
    parser.add_argument("--modes", default="floor,cold,first,warm")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, n, repeat = args.child
        child(mode, int(n), int(repeat))
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("instructions.py needs valgrind (with callgrind_control) on the PATH")
    modes = args.modes.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"millions of instructions per run (callgrind, {args.repeat} runs each)\n")
    print("| messages | " + " | ".join(modes) + " |")
    print("|---:|" + "---:|" * len(modes))
    for n in sizes:
        figures = {m: instructions(m, n, args.repeat) for m in modes}
        base = figures.get("floor")
        row = [
            f"{figures[m]:.2f}" + (f" ({figures[m] / base:.2f}x)" if base and m != "floor" else "")
            for m in modes
        ]
        print(f"| {n:,} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
