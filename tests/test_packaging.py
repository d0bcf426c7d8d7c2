"""The wheel ships the grammar and the error pages, and an installed (non-editable) copy
parses with the one and explains codes from the other."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_ships_grammar_and_installed_copy_loads_it(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("agent_prompt_compiler-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert "compiler/_grammar/agent.lark" in names
        assert "compiler/syntax/_lark_tables.py" in names
        for asset in ("report.css", "common.js", "chart.js", "explain.js", "bench.js"):
            assert f"compiler/report/assets/{asset}" in names  # the HTML report's page
        assert (
            zf.read("compiler/_grammar/agent.lark")
            == (ROOT / "grammar" / "agent.lark").read_bytes()
        )
        assert any(
            n.endswith("entry_points.txt") and b"apc = compiler.cli:run" in zf.read(n)
            for n in names
        )
        # the error index's pages, as they are in docs/ (apc explain-code reads them)
        pages = sorted((ROOT / "docs" / "pages" / "reference" / "errors").glob("*.md"))
        assert len(pages) > 10
        for page in pages:
            assert zf.read(f"compiler/_docs/errors/{page.name}") == page.read_bytes()
        zf.extractall(tmp_path / "site")
    probe = (
        "import compiler, compiler.syntax.grammar as g, pathlib;"
        "from importlib import resources;"
        "assert resources.files('compiler').joinpath('_grammar', 'agent.lark').is_file();"
        "assert pathlib.Path(compiler.__file__).parent.parent == pathlib.Path.cwd() / 'site';"
        # the shipped tables are used exactly when the installed lark is the one that wrote
        # them (lark>=1.2 is allowed: another release builds the parser from the grammar)
        "import lark; from compiler.syntax import _lark_tables as t;"
        "fit = lark.__version__ == t.LARK_VERSION;"
        "assert (g.parser().source_path == '<deserialized>') == fit, lark.__version__;"
        "import compiler.report as r;"
        "assert 'explain.js' not in r.render_page('explain', 't', {}) and "
        "'use strict' in r.render_page('explain', 't', {});"
        "print(compiler.parse('x <<agent.plan>>').macros[0].name)"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, 'site'); {probe}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.stdout.strip() == "agent.plan"
    # explain-code from the installed copy: the shipped pages (no docs/ beside it)
    explain = (
        "from compiler.cli import main; from compiler.codes import _source, code_pages;"
        "from compiler.errors import CODES;"
        "assert str(_source()).endswith('_docs/errors'), _source();"
        "assert sum(len(p.codes) for p in code_pages()) == len(CODES);"
        "main(['explain-code', 'error[template.unknown_macro]'])"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, 'site'); {explain}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.stdout.startswith("error[template.unknown_macro]\n")
    assert "\nCause\n  not in the catalogue (did-you-mean hint)\n" in out.stdout
