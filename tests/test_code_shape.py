"""Code shape limits: no module over :data:`MAX_MODULE_LINES` lines, no function (or method)
over :data:`MAX_FUNCTION_LINES` lines.

Enforced for every module of :data:`PACKAGE`: the top-level modules and every package under
it, found by walking the tree (a new module is checked without being listed anywhere).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PACKAGE = ROOT / "compiler"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

MODULES = sorted(PACKAGE.rglob("*.py"))


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_package_and_top_level_module_is_checked() -> None:
    """The walk reaches the top-level modules and every package, however deep."""
    assert (PACKAGE / "__init__.py") in MODULES and (PACKAGE / "errors.py") in MODULES
    packages = {p.parent for p in PACKAGE.rglob("__init__.py")}
    assert {PACKAGE / "fit", PACKAGE / "inputs", PACKAGE / "profile"} <= packages
    for package in packages:
        assert package / "__init__.py" in MODULES, f"{_id(package)} is not checked"


@pytest.mark.parametrize("path", MODULES, ids=_id)
def test_module_is_not_too_long(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{_id(path)}: {lines} lines (> {MAX_MODULE_LINES})"


@pytest.mark.parametrize("path", MODULES, ids=_id)
def test_functions_are_not_too_long(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    long = [
        f"{node.name} (line {node.lineno}): {n} lines"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (n := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert not long, f"{_id(path)}: functions over {MAX_FUNCTION_LINES} lines: {long}"
