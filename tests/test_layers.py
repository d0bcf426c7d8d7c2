"""The import graph of compiler/ is a DAG that reads like the pipeline.

Every ``import`` of every module under compiler/ is read with :mod:`ast` (imports under
``if TYPE_CHECKING:`` and inside functions included), mapped to its *unit* (a package under
compiler/, or a top-level module) and its unit's *stage* in :data:`LAYERS`. A test fails on

- an import of a stage that the importing stage may not import (against the pipeline's
  direction, or sideways between stages that must stay apart, such as fit and assemble);
- a cycle between units (packages or top-level modules), even inside one stage;
- a private name (``_x``) or a private module (``_x.py``) used from another unit (a private
  package of compiler/, ``compiler._base``, is private to the package, not to its unit);
- a module under compiler/ that no stage holds (a new module must take its place here).

Each failure names the importing module, its file and line, and what it imported.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "compiler"

#: The layers, lowest first: (stage, its units, the stages it may import). "May import" is
#: transitive (a stage may import everything below the stages it names) and only reaches
#: down the table; units of one stage may import each other (no cycles).
LAYERS: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = (
    # records: the package's cheap-to-make dataclasses (compiler/_records/)
    ("records", frozenset({"_records"}), frozenset()),
    # errors: the one base error, codes, Diagnostic and Span
    ("errors", frozenset({"errors"}), frozenset({"records"})),
    # codes: the long form of each code, read from the error pages (compiler/codes/)
    ("codes", frozenset({"codes"}), frozenset({"errors"})),
    # base: the ContextFrame the stages pass and its kinds, the journal, atomic writes, the one
    # converter of validation errors, token counting (compiler/_base/)
    ("base", frozenset({"_base"}), frozenset({"errors"})),
    # syntax: text -> AST; knows nothing but text
    ("syntax", frozenset({"syntax"}), frozenset({"errors"})),
    # the dialect interface fit counts with (the module compiler.providers.dialect: see SUBUNITS)
    ("frame", frozenset({"providers.dialect"}), frozenset({"base"})),
    # inputs: the readers of a run's inputs (in the frame's vocabulary: roles), nothing else:
    # the run-context schema and loading, chats, cards, lorebook files, workspace, sandbox
    ("inputs", frozenset({"inputs"}), frozenset({"frame"})),
    # SillyTavern's engines over read inputs (compiler/st/): its macros and clock, world-info
    # activation and placement, regex scripts and the JavaScript-regex translation
    ("st", frozenset({"st"}), frozenset({"inputs"})),
    # profiles: the schema, layered resolution, the default-writer, the catalogue of known tools
    # and the platform's limits on what a preset or card may set
    ("profile", frozenset({"profile"}), frozenset({"inputs"})),
    # policies over a resolved profile: the tool gate, resource visibility, plan policy and
    # its guard, profile switching
    ("policy", frozenset({"policy"}), frozenset({"profile"})),
    # assemble: AST + profile + run context -> ContextFrame (compiler/_assemble/: the macro
    # catalogue, the marker check, the resource each macro reads and the visible chat)
    ("assemble", frozenset({"_assemble"}), frozenset({"syntax", "st", "policy"})),
    # tavern: SillyTavern presets, assembled through the assemble stage
    ("tavern", frozenset({"tavern"}), frozenset({"assemble"})),
    # fit: counts and cuts a frame with a dialect's cost model; never reads inputs
    ("fit", frozenset({"fit"}), frozenset({"frame"})),
    # lower: one module per provider dialect, their shared helpers and the provider registry
    ("lower", frozenset({"providers"}), frozenset({"frame"})),
    # api: the driver (compiler/_driver/) chains the stages behind the facade (compiler/__init__.py
    # is unit "compiler"), and the turn-by-turn replay of bench
    (
        "api",
        frozenset({"_driver", "compiler", "replay"}),
        frozenset({"tavern", "fit", "lower", "codes"}),
    ),
    # serve: the HTTP compile service over the api (apc serve; FastAPI, an optional extra)
    ("serve", frozenset({"serve"}), frozenset({"api"})),
    # report: the HTML pages of apc explain and apc bench (compiler/report/), over the public
    # API only (FACADE_ONLY)
    ("report", frozenset({"report"}), frozenset({"api"})),
    # front-ends: the apc command line (compiler/cli/: its commands and diagnostics rendering),
    # python -m compiler, and the language server (compiler/lsp/: apc lsp, pygls)
    ("frontends", frozenset({"cli", "__main__", "lsp"}), frozenset({"api", "serve", "report"})),
)

#: modules that are a unit of their own, not their package's: the dialect interface lives with
#: the providers but sits in the frame stage, below fit, which counts with it.
SUBUNITS = {"compiler.providers.dialect": "providers.dialect"}

STAGE_OF = {unit: stage for stage, units, _ in LAYERS for unit in units}

#: units that import only the public API's core: the facade (``compiler``), its errors and
#: the providers package (never a module inside another unit)
FACADE_ONLY = frozenset({"report", "lsp"})
PUBLIC_MODULES = frozenset({"compiler", "compiler.errors", "compiler.providers"})
#: front-ends that import only the public API (the documented public modules: see
#: tests/test_public_api.py), the base layer's utilities (compiler._base: atomic writes, the
#: journal) and other front-ends
PUBLIC_API_ONLY = frozenset({"cli", "__main__", "serve"})
FRONT_ENDS = frozenset({"cli", "__main__", "lsp", "report", "serve"})


def _may_import() -> dict[str, frozenset[str]]:
    """Each stage -> the stages below it that it may import (the transitive closure)."""
    closure: dict[str, frozenset[str]] = {}
    for stage, _, deps in LAYERS:
        unknown = deps - closure.keys()
        assert not unknown, f"stage {stage} names {sorted(unknown)}: not a stage below it"
        closure[stage] = deps.union(*(closure[d] for d in deps))
    return closure


MAY_IMPORT = _may_import()


@dataclass(frozen=True)
class Edge:
    module: str  # the importing module, dotted
    file: str  # its path, relative to the repository
    line: int
    target: str  # the imported module, dotted
    names: tuple[str, ...]  # the names a ``from`` import takes

    def __str__(self) -> str:
        what = f"from {self.target} import {', '.join(self.names)}" if self.names else self.target
        return f"{self.file}:{self.line}: {self.module} imports {what}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _modules()


def unit(module: str) -> str:
    """``compiler.fit.allocator`` -> ``fit``; ``compiler._driver.api`` -> ``api``; ``compiler``;
    a module of :data:`SUBUNITS` -> its own unit."""
    if module in SUBUNITS:
        return SUBUNITS[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _edges(module: str, path: Path, source: str | None = None) -> Iterator[Edge]:
    """The imports of compiler modules in ``path`` (or in ``source``, read as if it were)."""
    text = path.read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text, str(path))
    file = str(path.relative_to(PACKAGE.parent))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):  # every import: top level, TYPE_CHECKING, function bodies
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "compiler":
                    yield Edge(module, file, node.lineno, alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "compiler":
                continue
            names = tuple(alias.name for alias in node.names)
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            if submodules:  # ``from compiler.fit import budgets``: the module
                for sub in submodules:
                    yield Edge(module, file, node.lineno, sub, ())
                names = tuple(n for n in names if f"{target}.{n}" not in MODULES)
                if not names:
                    continue
            yield Edge(module, file, node.lineno, target, names)


EDGES = [edge for module, path in MODULES.items() for edge in _edges(module, path)]


def test_every_module_has_a_stage() -> None:
    missing = sorted(m for m in MODULES if unit(m) not in STAGE_OF)
    assert not missing, f"modules in no stage of LAYERS (add their unit): {missing}"
    empty = sorted(u for u in STAGE_OF if not any(unit(m) == u for m in MODULES))
    assert not empty, f"units in LAYERS with no module: {empty}"


def test_the_package_root_is_the_facade() -> None:
    """Every module but the facade sits in the package of its stage."""
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert root == ["__init__.py", "__main__.py", "errors.py"], root


def test_the_table_says_what_the_pipeline_promises() -> None:
    """The rules of the house, so that editing the table cannot quietly drop one."""
    assert {"assemble", "inputs", "st", "tavern", "profile", "policy", "syntax"}.isdisjoint(
        MAY_IMPORT["fit"]
    ), "fit never imports assemble, inputs or tavern (nor the libraries)"
    assert "fit" not in MAY_IMPORT["lower"], "lower never imports fit"
    assert "fit" not in MAY_IMPORT["lower"] and "lower" not in MAY_IMPORT["fit"]
    assert {"tavern", "st", "profile", "assemble", "policy"}.isdisjoint(MAY_IMPORT["inputs"]), (
        "readers know nothing of presets, SillyTavern's engines or profiles"
    )
    assert "policy" not in MAY_IMPORT["profile"], "a profile is data; policies read it"
    assert {"inputs", "profile", "base", "frame"}.isdisjoint(MAY_IMPORT["syntax"]), (
        "syntax: text only"
    )
    for low in ("errors", "base", "syntax", "st", "frame", "inputs", "policy", "profile"):
        assert not {"assemble", "tavern", "fit", "lower", "api"} & MAY_IMPORT[low], low


def test_no_import_against_the_pipeline() -> None:
    bad = []
    for edge in EDGES:
        source, target = unit(edge.module), unit(edge.target)
        if source == target or target not in STAGE_OF or source not in STAGE_OF:
            continue
        have, want = STAGE_OF[source], STAGE_OF[target]
        if have != want and want not in MAY_IMPORT[have]:
            bad.append(f"{edge}  [stage {have} may not import stage {want}]")
    assert not bad, "imports against the pipeline:\n" + "\n".join(bad)


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_cycle_between_packages() -> None:
    graph: dict[str, set[str]] = {}
    for edge in EDGES:
        source, target = unit(edge.module), unit(edge.target)
        if source != target:
            graph.setdefault(source, set()).add(target)
    cycle = _find_cycle(graph)
    if cycle:
        lines = [
            str(edge)
            for a, b in itertools.pairwise(cycle)
            for edge in EDGES
            if unit(edge.module) == a and unit(edge.target) == b
        ]
        pytest.fail(f"import cycle {' -> '.join(cycle)}:\n" + "\n".join(lines))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_nothing_private_crosses_a_package() -> None:
    """A private package of compiler/ (``compiler._base``) is private to the package: the
    stages import it; its private modules and names stay inside it."""
    bad = [
        str(edge)
        for edge in EDGES
        if unit(edge.module) != unit(edge.target)
        and (
            any(_private(part) for part in edge.target.split(".")[2:])
            or any(_private(name) for name in edge.names)
        )
    ]
    assert not bad, "private names used from another package:\n" + "\n".join(bad)


def test_front_ends_import_only_the_public_api() -> None:
    bad = [
        str(edge)
        for edge in EDGES
        if unit(edge.module) in FACADE_ONLY
        and unit(edge.target) != unit(edge.module)
        and edge.target not in PUBLIC_MODULES
    ]
    assert not bad, "front-ends past the public API:\n" + "\n".join(bad)


def test_the_command_line_and_the_service_import_only_the_public_api() -> None:
    from tests.test_public_api import _documented_public_modules

    public = _documented_public_modules()
    bad = [
        str(edge)
        for edge in EDGES
        if unit(edge.module) in PUBLIC_API_ONLY
        and unit(edge.target) not in FRONT_ENDS
        and edge.target not in public
        and not edge.target.startswith("compiler._base")
    ]
    assert not bad, "a front-end past the public API:\n" + "\n".join(bad)


def test_the_checker_sees_every_kind_of_import() -> None:
    """TYPE_CHECKING, function-local and relative imports are edges too."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from compiler._assemble.assemble import Assembler\n"
        "def f():\n    import compiler.tavern.preset\n"
        "from ..inputs import read\n"
        "from . import budgets\n"
    )
    edges = _edges("compiler.fit.probe", PACKAGE / "fit" / "probe.py", source)
    assert sorted((e.line, e.target) for e in edges) == [
        (3, "compiler._assemble.assemble"),
        (5, "compiler.tavern.preset"),
        (6, "compiler.inputs.read"),
        (7, "compiler.fit.budgets"),
    ]
