"""`apc check` of a template loads the parser and the macro catalogue only: no pydantic, no
pipeline, no tokenizer (a check process starts fast); `import compiler` loads none of them
either; `apc compile` of the (ASCII) example builds no tiktoken encoder (its counts come
from the ASCII counter and the rank cache). Checked on sys.modules in a fresh interpreter,
never by timing."""

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
#: what a run that gives no card, lorebook, regex script or SillyTavern macro never needs
SILLYTAVERN = (
    "compiler.inputs.cards",
    "compiler.inputs.lorebook",
    "compiler.st.macros",
    "compiler.st.regex_run",
    "compiler.st.world.run",
    "compiler.st.world.report",
    "compiler.tavern",
)


def loaded_after(args: list[str] | None) -> dict[str, object]:
    """The exit code of ``main(args)`` (no call for None: ``import compiler`` only), the
    modules of HEAVY then loaded, and the tiktoken encoders built."""
    run = (
        "code = 0\n" if args is None else f"from compiler.cli import main\ncode = main({args!r})\n"
    )
    code = (
        "import json, sys\n"
        "import compiler\n"
        f"{run}"
        "built = sys.modules.get('compiler._base.tokens')\n"
        "built = sorted(built._ENCODINGS) if built else []\n"
        f"heavy = [m for m in {HEAVY + SILLYTAVERN!r} if m in sys.modules]\n"
        "print(json.dumps({'code': code, 'heavy': heavy, 'encoders': built}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_compiler_loads_no_pipeline() -> None:
    assert loaded_after(None) == {"code": 0, "heavy": [], "encoders": []}


def test_checking_a_template_loads_no_pipeline() -> None:
    got = loaded_after(["check", "examples/writer/template.txt"])
    assert got == {"code": 0, "heavy": [], "encoders": []}


def test_a_budget_check_and_a_compile_still_load_what_they_need() -> None:
    example = ["examples/writer/template.txt", "--context", "examples/writer/run.json"]
    got = loaded_after(["check", *example, "--budget", "100000"])
    assert got["code"] == 0 and "compiler.providers" in got["heavy"]  # type: ignore[operator]
    got = loaded_after(
        ["compile", "examples/writer/template.txt", "--context", "examples/writer/run.json"]
    )
    assert got["code"] == 0 and "tiktoken" in got["heavy"]  # type: ignore[operator]
    assert got["encoders"] == []  # ASCII text: counted without building the encoder
    assert not set(SILLYTAVERN) & set(got["heavy"])  # type: ignore[arg-type]


def test_a_compile_loads_sillytavern_s_engines_when_the_run_needs_them(tmp_path: Path) -> None:
    card = {"name": "Mira", "description": "{{char}} keeps the {{random::lamp,light}}."}
    book = {"entries": {"0": {"uid": 0, "key": ["lamp"], "content": "The lamp is old."}}}
    run = {"chat": [{"role": "user", "content": "the lamp"}], "character": card}
    (tmp_path / "run.json").write_text(json.dumps({**run, "lorebooks": {"global": book}}))
    (tmp_path / "t.txt").write_text(
        "<<agent.character>>\n<<agent.world.activated>>\n<<agent.chat.history>>"
    )
    got = loaded_after(
        ["compile", str(tmp_path / "t.txt"), "--context", str(tmp_path / "run.json")]
    )
    assert got["code"] == 0
    assert {"compiler.inputs.cards", "compiler.inputs.lorebook", "compiler.st.macros"} <= set(
        got["heavy"]  # type: ignore[arg-type]
    )
    assert {"compiler.st.world.run", "compiler.st.world.report"} <= set(got["heavy"])  # type: ignore[arg-type]


def test_explaining_a_code_loads_no_pipeline() -> None:
    got = loaded_after(["explain-code", "template.unknown_macro"])
    assert got == {"code": 0, "heavy": [], "encoders": []}
