"""``apc serve`` against a new ``apc compile`` process per turn, for a 10,000-message chat.

    python benchmarks/serve_bench.py [--messages 10000] [--turns 6] [--clients 1,8,64]

Each client is one chat: it sends its chat turn after turn (one message appended per turn)
to ``POST /v1/compile`` with its own ``caller``, so it has its own warm session; its first
request (cold) is not measured. Requests per second count every measured request of all
clients; p50/p99 are per-request latencies. The baseline runs ``python -m compiler compile``
once per turn (a process per turn: imports, rank files, a cold compile). Peak RSS is the
server's high-water mark (VmHWM) after all runs, and the largest baseline process's.
Needs the serve extra and httpx.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = "You are a writing agent. Continue the story.\n<<agent.chat.history>>\n"
WORDS = [
    "the",
    "ferry",
    "creaked",
    "across",
    "the",
    "grey",
    "river",
    "while",
    "Mira",
    "counted",
    "lanterns",
    "on",
    "the",
    "far",
    "bank",
    "and",
    "Sam",
    "said",
    "nothing",
    "for",
    "a",
    "long",
    "time",
    "because",
    "the",
    "night",
    "had",
    "its",
    "own",
    "weight",
]
OPTIONS = {"model": "gpt-4o", "budget": 16000, "cacheStable": True}


def make_chat(n: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": " ".join(rng.choices(WORDS, k=rng.randint(8, 60))),
        }
        for i in range(n)
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "compiler", "serve", "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--workers", str(workers), "--timeout", "120"], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("apc serve did not start")


def client_run(url: str, n: int, turns: int, who: int, out: list[float]) -> None:
    # each message is encoded once: a turn's body is a join, so the client's own JSON work
    # (it shares the machine with the server) stays small
    encoded = [json.dumps(m) for m in make_chat(n + turns, seed=who)]
    head = json.dumps({"template": TEMPLATE, "options": OPTIONS, "caller": f"client-{who}"})
    headers = {"content-type": "application/json"}
    with httpx.Client(base_url=url, timeout=300) as c:
        for turn in range(turns + 1):
            body = head[:-1] + ', "context": {"chat": [' + ",".join(encoded[: n + turn]) + "]}}"
            start = time.perf_counter()
            r = c.post("/v1/compile", content=body.encode(), headers=headers)
            took = time.perf_counter() - start
            if r.status_code != 200:
                raise SystemExit(f"HTTP {r.status_code}: {r.text[:300]}")
            if turn:  # the first turn is the cold one
                out.append(took)


def serve_figures(url: str, n: int, turns: int, clients: int) -> dict[str, float]:
    latencies: list[float] = []
    threads = [
        threading.Thread(target=client_run, args=(url, n, turns, clients * 1000 + i, latencies))
        for i in range(clients)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return summary(latencies, wall)


def summary(latencies: list[float], wall: float) -> dict[str, float]:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "requests": len(ordered),
        "rps": len(ordered) / wall,
        "p50": statistics.median(ordered) * 1000,
        "p99": p99 * 1000,
    }


def process_figures(n: int, turns: int) -> dict[str, float]:
    chat = make_chat(n + turns, seed=1)
    latencies: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.txt"
        template.write_text(TEMPLATE, encoding="utf-8")
        args = ["--model", "gpt-4o", "--budget", "16000", "--cache-stable"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        start_all = time.perf_counter()
        for turn in range(1, turns + 1):
            run = Path(tmp) / "run.json"
            run.write_text(json.dumps({"chat": chat[: n + turn]}), encoding="utf-8")
            cmd = [sys.executable, "-m", "compiler", "compile", str(template), "--context"]
            start = time.perf_counter()
            subprocess.run([*cmd, str(run), *args], env=env, check=True, capture_output=True)
            latencies.append(time.perf_counter() - start)
        return summary(latencies, time.perf_counter() - start_all)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=10_000)
    p.add_argument("--turns", type=int, default=6, help="measured turns per client")
    p.add_argument("--clients", default="1,8,64")
    p.add_argument("--workers", type=int, default=4)
    args = p.parse_args()
    baseline = process_figures(args.messages, args.turns)  # first: its children's peak RSS
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    port = free_port()
    server = start_server(port, args.workers)
    rows: list[tuple[str, dict[str, float]]] = []
    try:
        for clients in (int(c) for c in args.clients.split(",")):
            figures = serve_figures(f"http://127.0.0.1:{port}", args.messages, args.turns, clients)
            rows.append((f"apc serve, {clients} client(s)", figures))
        server_rss = peak_rss_mib(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    rows.append(("apc compile, a process per turn", baseline))
    print(
        f"chat of {args.messages:,} messages, {args.turns} measured turns per client, "
        f"budget 16,000, {args.workers} workers, {os.cpu_count()} CPUs"
    )
    print("| setup | requests | req/s | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for name, f in rows:
        print(
            f"| {name} | {f['requests']:.0f} | {f['rps']:.1f} | {f['p50']:.0f} | {f['p99']:.0f} |"
        )
    print(f"peak RSS: server {server_rss:.0f} MiB; one apc compile process {child_rss:.0f} MiB")


if __name__ == "__main__":
    main()
