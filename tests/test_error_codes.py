"""The registry of error codes (compiler.errors.CODES): complete, one class a code, documented."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import compiler.errors as errors
from compiler.errors import CODES, APCError
from compiler.tool_catalogue import KNOWN_TOOLS, RUNTIME_ONLY_TOOLS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "compiler"
FAMILIES = (
    "template",
    "context",
    "workspace",
    "policy",
    "tool",
    "agent",
    "profile",
    "lower",
    "tokenizer",
    "io",
    "world",
    "regex",
    "internal",
    "diagnostics",
    "bench",
    "serve",
)
CODE_RE = re.compile(rf"^(?:{'|'.join(FAMILIES)})\.[a-z_]+$")

#: Dotted strings in the package that look like codes but are names: macros, resources, the
#: grammar file.
NOT_CODES = frozenset(
    {
        "agent.character",
        "agent.diff",
        "agent.file",
        "agent.lark",
        "agent.plan",
        "agent.skill",
        "agent.system_prompt",
        "agent.task",
        "agent.tool_results",
        "agent.tools",
        "agent.user",
        "world.activated",
        "diagnostics.omitted",  # the JSON note that stands for capped diagnostics
    }
    | set(KNOWN_TOOLS)
    | set(RUNTIME_ONLY_TOOLS)
)


def _constants() -> dict[str, set[str]]:
    """Every code-like string constant in the package, with the files it appears in."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and CODE_RE.match(node.value)
                and node.value not in NOT_CODES
            ):
                found[node.value].add(path.relative_to(ROOT).as_posix())
    return found


def test_every_code_the_package_uses_is_registered() -> None:
    missing = {code: sorted(files) for code, files in _constants().items() if code not in CODES}
    assert missing == {}


def test_every_registered_code_is_used_and_documented() -> None:
    used = _constants()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert sorted(code for code in CODES if code not in used) == []
    assert sorted(code for code in CODES if f"`{code}`" not in readme) == []


def test_each_code_is_raised_with_its_one_class() -> None:
    classes = {
        name: cls
        for name, cls in vars(errors).items()
        if isinstance(cls, type) and issubclass(cls, APCError)
    }
    wrong: list[str] = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name not in classes:
                continue
            for kw in node.keywords:
                if kw.arg == "code" and isinstance(kw.value, ast.Constant):
                    code = kw.value.value
                    expected = CODES.get(code)
                    if expected is None or not issubclass(classes[name], expected):
                        wrong.append(f"{path.name}: {name}(code={code!r}), registry {expected}")
    assert wrong == []
