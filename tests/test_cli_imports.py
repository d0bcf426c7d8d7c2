"""`apc check` of a template loads the parser and the macro catalogue only: no pydantic, no
pipeline, no tokenizer (issue 14: a check process starts fast). Checked on sys.modules in a
fresh interpreter, never by timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "pydantic",
    "tiktoken",
    "compiler._assemble.assemble",
    "compiler.fit",
    "compiler.providers",
)


def loaded_after(args: list[str]) -> dict[str, object]:
    code = (
        "import json, sys\n"
        "from compiler.cli import main\n"
        f"code = main({args!r})\n"
        f"print(json.dumps({{'code': code, 'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_checking_a_template_loads_no_pipeline() -> None:
    got = loaded_after(["check", "examples/writer/template.txt"])
    assert got == {"code": 0, "heavy": []}


def test_a_budget_check_and_a_compile_still_load_what_they_need() -> None:
    example = ["examples/writer/template.txt", "--context", "examples/writer/run.json"]
    got = loaded_after(["check", *example, "--budget", "100000"])
    assert got["code"] == 0 and "compiler.providers" in got["heavy"]  # type: ignore[operator]
    got = loaded_after(
        ["compile", "examples/writer/template.txt", "--context", "examples/writer/run.json"]
    )
    assert got["code"] == 0 and "tiktoken" in got["heavy"]  # type: ignore[operator]


def test_explaining_a_code_loads_no_pipeline() -> None:
    assert loaded_after(["explain-code", "template.unknown_macro"]) == {"code": 0, "heavy": []}
