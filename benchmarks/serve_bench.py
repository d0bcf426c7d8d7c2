"""``apc serve``'s two protocols side by side with the same turns in process, 10,000 messages.

    python benchmarks/serve_bench.py [--messages 10000] [--turns 200] [--many 64]
                                     [--many-turns 6] [--process-turns 3] [--workers 4]

Each client is one chat, one message appended per turn, with a warm session of its own:
*whole chat* sends the whole chat to ``POST /v1/compile`` every turn (with its own
``caller``); *turns* starts a session whole (``POST /v1/sessions``, not measured) and then
sends each turn's one message (``POST /v1/sessions/{id}/turns``). *In process* is a
``compiler.Session`` compiling a ``compiler.ChatLog`` one message longer each turn, in this
process. The clients of the turn protocol and the in-process session take their turns in
turn (10 turns of one, then 10 of another, in a shuffled order), so that the machine's
load weighs on both alike; one whole-chat client runs after them.
The clients are the standard library's ``http.client`` with kept-alive connections (a
runtime's client in Rust or JavaScript costs less than a Python one), and for the turn
protocol one more: a minimal HTTP/1.1 client (one send a request, the answer read by its
length), taking its turns with the other two; the first, cold
request of a whole-chat client is not measured, and the measured turns of 64 clients start
when every client has made its session (then the wall clock starts). Requests per second
count every measured request of all clients (the two taking turns: one over the mean);
p50/p99 are per-request latencies, client side. Ratios are to the in-process figures.
*A process per turn* runs ``python -m compiler compile`` once per turn. Peak RSS is the
server's high-water mark (VmHWM) after all runs. Needs the serve extra.
"""

from __future__ import annotations

import argparse
import gc
import http.client
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
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the in-process figures import this checkout
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
BLOCK = 10
"""Turns in a row of one client, then of the other, when two take turns."""


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


def post(conn: http.client.HTTPConnection, route: str, body: bytes) -> http.client.HTTPResponse:
    conn.request("POST", route, body, {"content-type": "application/json"})
    r = conn.getresponse()
    body = r.read()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status} on {route}: {body[:300]!r}")
    return r


class WholeChat:
    """Today's protocol: the whole chat to /v1/compile every turn."""

    route = "/v1/compile"

    def __init__(self, port: int, n: int, turns: int, who: int) -> None:
        # each message is encoded once: a turn's body is a join, so the client's own JSON
        # work (it shares the machine with the server) stays small
        self.encoded = [json.dumps(m) for m in make_chat(n + turns, seed=who)]
        head = {"template": TEMPLATE, "options": OPTIONS, "caller": f"client-{who}"}
        self.head, self.n = json.dumps(head), n
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.turn(-1)  # the cold one, not measured
        self.conn.close()  # reopened by the first turn (the server closes idle ones in 5 s)

    def turn(self, turn: int) -> None:
        chat = ",".join(self.encoded[: self.n + turn + 1])
        post(
            self.conn,
            "/v1/compile",
            (self.head[:-1] + f', "context": {{"chat": [{chat}]}}}}').encode(),
        )


class Turns:
    """The turn protocol: the whole chat once (not measured), then one message a turn."""

    def __init__(self, port: int, n: int, turns: int, who: int) -> None:
        self.chat, self.n, self.sid = make_chat(n + turns, seed=who), n, f"client-{who}"
        whole = {"template": TEMPLATE, "options": OPTIONS, "session": self.sid}
        whole["context"] = {"chat": self.chat[:n]}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.r = post(self.conn, "/v1/sessions", json.dumps(whole).encode())
        self.conn.close()  # reopened by the first turn (the server closes idle ones in 5 s)

    def turn(self, turn: int) -> None:
        count, digest = self.r.headers["apc-session-count"], self.r.headers["apc-session-digest"]
        base = {"count": int(count), "digest": digest}
        body = json.dumps({"base": base, "append": [self.chat[self.n + turn]]}).encode()
        self.r = post(self.conn, f"/v1/sessions/{self.sid}/turns", body)


class RawTurns(Turns):
    """The turn protocol through a minimal HTTP/1.1 client: each request one send (its head
    and body), the answer read by its ``content-length``. What a runtime's own client pays
    (one in Rust or JavaScript, or a tuned Python one), without ``http.client``'s two sends
    and its header parsing by the ``email`` package: the service's latency itself."""

    def __init__(self, port: int, n: int, turns: int, who: int) -> None:
        super().__init__(port, n, turns, who)
        self.head = self.r.headers["apc-session-count"], self.r.headers["apc-session-digest"]
        self.conn = socket.create_connection(("127.0.0.1", port), timeout=300)  # type: ignore[assignment]
        self.conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # type: ignore[attr-defined]

    def turn(self, turn: int) -> None:
        base = {"count": int(self.head[0]), "digest": self.head[1]}
        body = json.dumps({"base": base, "append": [self.chat[self.n + turn]]}).encode()
        sock: socket.socket = self.conn  # type: ignore[assignment]
        sock.sendall(
            f"POST /v1/sessions/{self.sid}/turns HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        data = bytearray()
        while (end := data.find(b"\r\n\r\n")) < 0:
            data += sock.recv(1 << 16)
        lines = bytes(data[:end]).decode("latin-1").split("\r\n")
        fields = dict(line.lower().split(": ", 1) for line in lines[1:])
        need = end + 4 + int(fields["content-length"])
        while len(data) < need:
            data += sock.recv(1 << 16)
        if lines[0].split()[1] != "200":
            raise RuntimeError(f"{lines[0]} on a turn: {bytes(data[end + 4 :][:300])!r}")
        self.head = fields["apc-session-count"], fields["apc-session-digest"]


def serve_figures(port: int, n: int, turns: int, clients: int, kind: type[Any]) -> dict[str, float]:
    """``clients`` clients of ``kind`` at once, each made (its cold request sent) first: the
    wall clock runs from the first measured turn on."""
    made = [kind(port, n, turns, clients * 1000 + i) for i in range(clients)]
    latencies: list[float] = []
    failed: list[BaseException] = []

    def run(client: Any) -> None:
        try:
            for turn in range(turns):
                start = time.perf_counter()
                client.turn(turn)
                latencies.append(time.perf_counter() - start)
        except BaseException as exc:  # reported below
            failed.append(exc)
        finally:
            client.conn.close()

    threads = [threading.Thread(target=run, args=(c,)) for c in made]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise SystemExit(f"a client failed: {failed[0]!r}")
    wall = time.perf_counter() - start
    return summary(latencies, wall)


def single_client_figures(port: int, n: int, turns: int) -> dict[str, dict[str, float]]:
    """Two clients of the turn protocol (``http.client``'s and a minimal one:
    :class:`RawTurns`) and the same turns in process (a ``compiler.Session``
    compiling a ``compiler.ChatLog`` one message longer each turn, start-up's heap frozen, as
    the server freezes its own), :data:`BLOCK` turns of each in turn, in a shuffled order:
    the machine's load, which moves single-client figures by 2x within minutes, weighs on
    both alike (turn by turn, each would slow the other: one's compile evicts the other's
    working set from the caches). Requests per second: one over the mean latency."""
    import compiler

    chat = make_chat(n + turns, seed=1)
    options = {"model": "gpt-4o", "budget": 16000, "cache_stable": True}
    session = compiler.Session.from_string(TEMPLATE, **options)  # type: ignore[arg-type]
    log = compiler.ChatLog(chat[:n])
    session.compile({"chat": log})
    clients = {"turns": Turns(port, n, turns, 1001), "raw": RawTurns(port, n, turns, 1002)}
    gc.collect()
    gc.freeze()
    latencies: dict[str, list[float]] = {"in": [], "turns": [], "raw": []}
    order = random.Random(0)
    for first in range(0, turns, BLOCK):
        steps = ["in", "turns", "raw"]
        order.shuffle(steps)
        for name in steps:
            for i in range(first, min(first + BLOCK, turns)):
                if name == "in":
                    log.append(chat[n + i])
                start = time.perf_counter()
                if name == "in":
                    session.compile({"chat": log})
                else:
                    clients[name].turn(i)
                latencies[name].append(time.perf_counter() - start)
    gc.unfreeze()
    for client in clients.values():
        client.conn.close()
    return {name: summary(found, sum(found)) for name, found in latencies.items()}


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
    p.add_argument("--turns", type=int, default=200, help="measured turns of one client")
    p.add_argument("--many", type=int, default=64, help="clients at once")
    p.add_argument("--many-turns", type=int, default=6, help="measured turns per client then")
    p.add_argument("--process-turns", type=int, default=3, help="0: no process per turn")
    p.add_argument("--workers", type=int, default=4)
    args = p.parse_args()
    n, many = args.messages, args.many
    rows: list[tuple[str, dict[str, float]]] = []
    child_rss = 0.0
    if args.process_turns:
        rows.append(("apc compile, a process per turn", process_figures(n, args.process_turns)))
        child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    port = free_port()
    server = start_server(port, args.workers)
    try:
        single = single_client_figures(port, n, args.turns)
        local = single["in"]
        whole = serve_figures(port, n, args.turns, 1, WholeChat)
        rows += [
            ("in process: Session + ChatLog, 1 client", local),
            ("apc serve, whole chat (/v1/compile), 1 client", whole),
            ("apc serve, turns (/v1/sessions), 1 client", single["turns"]),
            ("apc serve, turns, 1 client with a minimal HTTP client", single["raw"]),
        ]
        for name, run in (
            ("apc serve, whole chat (/v1/compile)", WholeChat),
            ("apc serve, turns (/v1/sessions)", Turns),
        ):
            label = f"{name}, {many} clients"
            rows.append((label, serve_figures(port, n, args.many_turns, many, run)))
        server_rss = peak_rss_mib(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    print(
        f"chat of {n:,} messages, one appended a turn, budget 16,000 with cacheStable, "
        f"{args.workers} workers, {os.cpu_count()} CPUs"
    )
    print("| setup | requests | req/s | p50 ms | p99 ms | p50 / in process | p99 / in process |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, f in rows:
        print(
            f"| {name} | {f['requests']:.0f} | {f['rps']:.1f} | {f['p50']:.2f} | {f['p99']:.2f} "
            f"| {f['p50'] / local['p50']:.2f}x | {f['p99'] / local['p99']:.2f}x |"
        )
    whole, turns = rows[-2][1], rows[-1][1]
    print(
        f"{many} clients: turns/whole chat throughput {turns['rps'] / whole['rps']:.2f}x; "
        f"peak RSS: server {server_rss:.0f} MiB"
        + (f"; one apc compile process {child_rss:.0f} MiB" if child_rss else "")
    )


if __name__ == "__main__":
    main()
