"""The registry of error codes (compiler.errors.CODES): complete, one class a code, documented
(docs/pages/reference/errors/: one page per family, each code under its own heading)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import compiler.errors as errors
from compiler.errors import CODES, APCError
from compiler.profile.tool_catalogue import KNOWN_TOOLS, RUNTIME_ONLY_TOOLS

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
    "lsp",
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
        "context.chat",  # a JSON path in a request body (apc serve's turn protocol)
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


ERROR_PAGES = ROOT / "docs" / "pages" / "reference" / "errors"
#: The family pages of the error index: a code's family (its prefix) -> its page.
FAMILY_PAGES = {family: f"{family}.md" for family in FAMILIES} | {"tool": "policy.md"}
#: A code's entry: its own heading, anchored by the code (`## `ctx.x` {#ctx.x}`), then a
#: cause (the first paragraph that says so) before the next heading.
ENTRY_RE = re.compile(r"^## `([a-z]+\.[a-z_]+)` \{#\1\}$", re.M)


def _documented() -> dict[str, list[tuple[str, str]]]:
    """Every code entry of the error index: code -> [(page, the entry's text)]."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in sorted(ERROR_PAGES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        matches = list(ENTRY_RE.finditer(text))
        for i, match in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            found[match.group(1)].append((path.name, text[match.end() : end]))
    return found


def test_every_registered_code_is_used_and_documented() -> None:
    used = _constants()
    assert sorted(code for code in CODES if code not in used) == []
    documented = _documented()
    # every registered code has its one entry, on its family's page, with its cause
    missing = sorted(code for code in CODES if code not in documented)
    assert missing == []
    for code, places in documented.items():
        assert len(places) == 1, f"{code} has {len(places)} entries"
        page, text = places[0]
        assert page == FAMILY_PAGES[code.split(".")[0]], f"{code} is on {page}"
        assert "**Cause:**" in text and "**Severity:**" in text, f"{code}: no cause"
        severity = text.split("**Severity:**")[1].split("\n")[0]
        if CODES[code] is None:  # a warning only, never raised
            assert "warning" in severity and "raised" not in severity, code
        else:
            assert f"raised as `{CODES[code].__name__}`" in severity, code
    # no page documents a code that is not registered
    assert sorted(code for code in documented if code not in CODES) == []
    # and no page heads an entry any other way
    headings = re.findall(
        r"^## .*$", "".join(p.read_text(encoding="utf-8") for p in ERROR_PAGES.glob("*.md")), re.M
    )
    assert len(headings) == sum(len(places) for places in documented.values())


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
