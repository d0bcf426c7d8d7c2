"""prompt-poet on the shared workload, beside a floor measured with prompt-poet's own tiktoken.

Runs in prompt-poet's virtual environment (it pins an older tiktoken), started by
``peers.py --poet-python PATH``; prints one JSON object: per chat size, the median
milliseconds of ``Prompt.tokenize()`` + ``truncate()`` and of the floor (tiktoken counting
only the newest messages until the budget is full), measured interleaved.

    POET/bin/python benchmarks/poet_bench.py --sizes 200,2000 --budget 16000 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiktoken
from prompt_poet import Prompt
from workload import SYSTEM, card_text, floor, make_chat

TEMPLATE = """- name: system
  role: system
  content: |
    {{ system | replace("\\n", "\\n    ") }}
{% for m in chat %}
- name: m{{ loop.index }}
  role: {{ m.role }}
  truncation_priority: 1
  content: |
    {{ m.content }}
{% endfor %}
"""


def poet(chat: list[dict[str, str]], budget: int) -> int:
    prompt = Prompt(
        raw_template=TEMPLATE,
        template_data={"system": f"{SYSTEM}\n{card_text()}", "chat": chat},
        tiktoken_encoding_name="o200k_base",
        token_limit=budget,
    )
    prompt.tokenize()
    prompt.truncate(truncation_step=1)
    return len(prompt.messages)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="200,2000,10000")
    parser.add_argument("--budget", type=int, default=16_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    enc = tiktoken.get_encoding("o200k_base")
    out = {"tiktoken": tiktoken.__version__ if hasattr(tiktoken, "__version__") else "?"}
    for n in (int(s) for s in args.sizes.split(",")):
        chat = make_chat(n)
        times: dict[str, list[float]] = {"poet": [], "floor": []}
        contenders = (
            ("floor", lambda chat=chat: floor(chat, args.budget, enc.encode_ordinary)),
            ("poet", lambda chat=chat: poet(chat, args.budget)),
        )
        for _ in range(args.repeat):
            for name, fn in contenders:
                start = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - start) * 1000)
        out[str(n)] = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
