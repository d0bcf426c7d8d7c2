"""Start-up: `apc check` and `apc compile` processes beside the import floor, as ratios.

    python benchmarks/startup.py [--runs 21] [--python PATH] [--compare PATH]

Contenders, each a fresh process, run interleaved (one of each per round, the order rotating
from round to round) and reported as medians in milliseconds and as ratios to the floor,
both of wall time and of CPU time (user + system, from the kernel's accounting of the child:
steadier than wall time on a busy machine):

- floor: ``python -c 'import pydantic, lark, tiktoken'`` (what any tool built on these pays);
- check floor: ``python -c 'import pydantic, lark'``;
- model floor: the floor, then one pydantic model defined and validated (what reading any
  input through a pydantic model costs: pydantic's model machinery is not in the floor);
- apc check: ``apc check examples/writer/template.txt``;
- apc compile: ``apc compile examples/writer/template.txt --context examples/writer/run.json``
  (the README's quick start), with the token-rank cache warm (a first run fills it);
- apc compile, no rank cache: the same with ``APC_CACHE_DIR=""`` (the rank file parsed
  every time, as on a first run or where the cache is disabled).

The package is measured installed as a wheel: without ``--python``, the script builds the
wheel of this checkout (``pip wheel --no-deps --no-build-isolation``) and installs it with
``--no-deps`` into a throwaway venv under the system's temp dir, whose dependencies are this
interpreter's (a ``.pth`` line), so it runs offline. ``--python`` takes the interpreter of a
venv where the package is already installed instead (e.g. ``python -m venv /tmp/v &&
/tmp/v/bin/pip install dist/*.whl``), its ``apc`` beside it. ``--compare`` takes another
such interpreter (e.g. of a venv with main's wheel): its ``apc check`` and ``apc compile``
then run beside the others. Bytecode is cached as an install has it (a first, untimed run of
each writes what is missing; PYTHONDONTWRITEBYTECODE is dropped). Each process runs in an
empty temp dir, so nothing of this checkout is importable but through the install.

``--instructions`` also counts each contender's instructions, whole process, under
valgrind's callgrind (one run each, after the timed ones): a figure the machine's load does
not move, for comparing two versions on a busy machine. Needs ``valgrind`` on the PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "writer"


def build_venv(where: Path) -> Path:
    """A throwaway venv under ``where`` with this checkout's wheel installed; its python."""
    dist = where / "dist"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", dist, ROOT],
        check=True,
    )
    (wheel,) = dist.glob("agent_prompt_compiler-*.whl")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # the dependencies are this interpreter's (offline); the package itself is the wheel's
    Path(site, "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [*pip, "--python", python, "install", "--no-deps", "--no-index", "-q", wheel], check=True
    )
    return python


#: the floor, then one pydantic model made and validated: what any pydantic-validated input
#: costs a process (pydantic's model machinery, which ``import pydantic`` alone never loads)
MODEL_FLOOR = "import pydantic, lark, tiktoken\nclass M(pydantic.BaseModel):\n    x: int\nM(x=1)"


def contenders(python: Path, compare: Path | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    apc = str(python.parent / "apc")
    template, run = str(EXAMPLE / "template.txt"), str(EXAMPLE / "run.json")
    compile_args = [apc, "compile", template, "--context", run]
    jobs = {
        "floor": ([str(python), "-c", "import pydantic, lark, tiktoken"], {}),
        "check floor": ([str(python), "-c", "import pydantic, lark"], {}),
        "model floor": ([str(python), "-c", MODEL_FLOOR], {}),
        "apc check": ([apc, "check", template], {}),
        "apc compile": (compile_args, {}),
        "apc compile, no rank cache": (compile_args, {"APC_CACHE_DIR": ""}),
    }
    if compare is not None:
        other = str(compare.parent / "apc")
        jobs["apc check (--compare)"] = ([other, "check", template], {})
        jobs["apc compile (--compare)"] = ([other, "compile", template, "--context", run], {})
    return jobs


def child_env(cache: Path) -> dict[str, str]:
    """The contenders' environment: bytecode written as an install writes it, nothing of
    this checkout on the path, the rank cache in ``cache``."""
    dropped = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    return {k: v for k, v in os.environ.items() if k not in dropped} | {"APC_CACHE_DIR": str(cache)}


def cpu() -> float:
    """CPU seconds (user + system) of the waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(
    python: Path, compare: Path | None, runs: int, cache: Path, cwd: Path
) -> dict[str, tuple[float, float]]:
    """Each contender's median wall time and median CPU time, in ms."""
    env = child_env(cache)
    jobs = contenders(python, compare)
    names = list(jobs)
    wall: dict[str, list[float]] = {name: [] for name in names}
    used: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs + 1):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            command, extra = jobs[name]
            start, before = time.perf_counter(), cpu()
            subprocess.run(command, check=True, capture_output=True, env=env | extra, cwd=cwd)
            if i:  # the first round writes bytecode and the rank cache: not timed
                wall[name].append((time.perf_counter() - start) * 1000)
                used[name].append((cpu() - before) * 1000)
    return {n: (statistics.median(wall[n]), statistics.median(used[n])) for n in names}


def instructions(python: Path, compare: Path | None, cache: Path, cwd: Path) -> dict[str, float]:
    """Each contender's instructions (millions), whole process, counted by callgrind."""
    env = child_env(cache)
    counts: dict[str, float] = {}
    for name, (command, extra) in contenders(python, compare).items():
        out = cwd / "callgrind.out"
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
            check=True,
            capture_output=True,
            text=True,
            env=env | extra,
            cwd=cwd,
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            raise RuntimeError(f"callgrind counted nothing for {name}")
        counts[name] = int(found.group(1)) / 1e6
        out.unlink(missing_ok=True)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="processes of each contender")
    parser.add_argument("--python", help="a venv's python with the package installed")
    parser.add_argument(
        "--compare", help="another install's python (e.g. of main): its apc runs beside"
    )
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (callgrind)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="apc-startup-"))
    counts: dict[str, float] = {}
    try:
        python = Path(args.python) if args.python else build_venv(work)
        cwd = work / "cwd"
        cwd.mkdir()
        compare = Path(args.compare) if args.compare else None
        medians = measure(python, compare, args.runs, work / "cache", cwd)
        if args.instructions:
            counts = instructions(python, compare, work / "cache", cwd)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor, floor_cpu = medians["floor"]
    print(f"{args.runs} processes each, interleaved; medians (ms) and ratios to the floor\n")
    print("| process | wall ms | / floor | CPU ms | / floor |")
    print("|---|---:|---:|---:|---:|")
    for name, (ms, cpu_ms) in medians.items():
        print(
            f"| {name} | {ms:.0f} | {ms / floor:.2f}x | {cpu_ms:.0f} | {cpu_ms / floor_cpu:.2f}x |"
        )
    if counts:
        print("\n| process | M instructions | / floor |")
        print("|---|---:|---:|")
        for name, count in counts.items():
            print(f"| {name} | {count:,.0f} | {count / counts['floor']:.2f}x |")
    check = medians["apc check"][0] / medians["check floor"][0]
    check_cpu = medians["apc check"][1] / medians["check floor"][1]
    print(f"\napc check / check floor (import pydantic, lark): {check:.2f}x, CPU {check_cpu:.2f}x")


if __name__ == "__main__":
    main()
