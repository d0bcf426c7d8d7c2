"""Code shape limits: no module over :data:`MAX_MODULE_LINES` lines, no function (or method)
over :data:`MAX_FUNCTION_LINES` lines.

Enforced for the packages in :data:`PACKAGES` (directories under the repository root, all
their modules); add a package once it meets the limits.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PACKAGES = ["compiler/fit"]
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

MODULES = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("package", PACKAGES)
def test_package_exists(package: str) -> None:
    assert (ROOT / package / "__init__.py").is_file(), f"{package} is not a package"


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
