#!/usr/bin/env bash
# Every side-by-side figure from a fresh checkout: the project with its benchmark extras in
# benchmarks/.venv, prompt-poet (which pins an older tiktoken) in benchmarks/.venv-poet.
# Usage: benchmarks/run.sh [peers.py options, e.g. --sizes 200,2000 --repeat 3]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x benchmarks/.venv/bin/python ]; then
    python3 -m venv benchmarks/.venv
    benchmarks/.venv/bin/pip install -q -e '.[bench]'
fi
if [ ! -x benchmarks/.venv-poet/bin/python ]; then
    python3 -m venv benchmarks/.venv-poet
    benchmarks/.venv-poet/bin/pip install -q 'prompt-poet==0.0.52'
fi
benchmarks/.venv/bin/python benchmarks/history_fit.py
benchmarks/.venv/bin/python benchmarks/parse_throughput.py --mb 4
benchmarks/.venv/bin/python benchmarks/peers.py --poet-python benchmarks/.venv-poet/bin/python "$@"
