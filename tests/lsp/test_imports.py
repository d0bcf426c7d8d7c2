"""The language server is a front-end: of the compiler it imports only the public facade
(``compiler``), ``compiler.errors`` and ``compiler.providers`` (and its own modules)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "compiler" / "lsp"
ALLOWED = {"compiler", "compiler.errors", "compiler.providers"}


def test_the_server_imports_only_the_public_api() -> None:
    found: list[str] = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                inside = name == "compiler" or name.startswith("compiler.")
                if inside and name not in ALLOWED and not name.startswith("compiler.lsp"):
                    found.append(f"{path.name}:{node.lineno}: {name}")
    assert found == []
