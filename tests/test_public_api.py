"""The public API: a curated, sorted __all__ whose every name imports."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import re
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

import compiler


def test_all_is_sorted_and_importable() -> None:
    # isort's order, as ruff keeps every __all__ (RUF022): constants, classes, functions
    def order(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2), name

    assert compiler.__all__ == sorted(compiler.__all__, key=order)
    for name in compiler.__all__:
        assert getattr(compiler, name) is not None


def test_tool_gate_from_the_public_api() -> None:
    profile = compiler.resolve_profile(run={"tools": {"maxCallsPerTool": {"chat.search": 1}}})
    gate = compiler.ToolGate(profile)
    assert gate.check_call("chat.search") == "allowed"
    with pytest.raises(compiler.PolicyError) as info:
        gate.check_call("chat.search")
    assert info.value.code == "agent.tool_budget_exhausted"
    with pytest.raises(compiler.PolicyError) as denied:
        gate.check_call("shell.exec")
    assert denied.value.code == "tool.policy_denied"


def test_compile_takes_a_path_and_compile_string_takes_text(tmp_path: Path) -> None:
    with pytest.raises(compiler.ContextError) as info:
        compiler.compile("Hello <<agent.plan>>", context={"plan": "p"})
    assert info.value.code == "context.file_not_found"
    assert info.value.hint is not None and "compile_string" in info.value.hint
    text = compiler.compile_string("Hello <<agent.plan>>", context={"plan": "p"})
    (tmp_path / "t.txt").write_text("Hello <<agent.plan>>")
    assert compiler.compile(tmp_path / "t.txt", context={"plan": "p"}).request == text.request
    assert compiler.compile(str(tmp_path / "t.txt"), context={"plan": "p"}).request == text.request


def test_preset_text_compiles_as_a_preset_only_when_asked(tmp_path: Path) -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "content": "Be kind."},
            {"identifier": "chatHistory", "marker": True},
        ]
    }
    ctx = {"chat": [{"role": "user", "content": "hi"}]}
    as_preset = compiler.compile_string(json.dumps(preset), kind="preset", context=ctx)
    assert [m["content"] for m in as_preset.request["messages"]] == [
        "Be kind.",
        "[Start a new Chat]",
        "hi",
    ]
    as_text = compiler.compile_string(json.dumps(preset), context=ctx)  # a template: as written
    assert as_text.request["messages"][0]["content"] == json.dumps(preset)
    (tmp_path / "p.json").write_text(json.dumps(preset))
    assert compiler.compile(tmp_path / "p.json", context=ctx).request == as_preset.request
    with pytest.raises(compiler.ContextError) as info:
        compiler.compile_string("{not json", kind="preset")
    assert info.value.code == "context.invalid_json"


def test_one_options_object_with_keyword_overrides() -> None:
    from typing import get_type_hints

    from compiler._driver.options import OptionFields

    options = compiler.CompileOptions(budget=60, model="gpt-4o-mini")
    chat = {"chat": [{"role": "user", "content": f"message {i} " * 5} for i in range(40)]}
    small = compiler.compile_string("S <<agent.chat.history>>", context=chat, options=options)
    assert small.ledger.total_tokens <= 60
    bigger = compiler.compile_string(
        "S <<agent.chat.history>>", context=chat, options=options, budget=200
    )
    assert 60 < bigger.ledger.total_tokens <= 200 and options.budget == 60  # frozen
    with pytest.raises(TypeError, match="budgte"):
        compiler.compile_string("S", options=options, budgte=3)  # type: ignore[call-arg]
    fields = {f.name for f in dataclasses.fields(compiler.CompileOptions)}
    assert set(get_type_hints(OptionFields)) == fields  # the keyword spelling cannot drift


ROOT = Path(__file__).resolve().parents[1]


def _documented_public_modules() -> set[str]:
    """The documented list: the paragraph of the Architecture page (docs/pages/architecture.md)
    that starts with "Public modules"."""
    section = (ROOT / "docs" / "pages" / "architecture.md").read_text(encoding="utf-8")
    paragraph = next(p for p in section.split("\n\n") if p.startswith("Public modules"))
    listed = paragraph.rsplit("):", 1)[1]  # the list follows "... starts with `_`):"
    return set(re.findall(r"`(compiler(?:\.[a-z_]+)*)`", listed))


def _internal(module: str, path: Path) -> bool:
    if any(part.startswith("_") and part != "__init__" for part in path.with_suffix("").parts):
        return True
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return any(line.startswith("Internal:") for line in doc.splitlines())


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def test_public_surface_is_the_documented_list() -> None:
    """Every module is either in the documented list of public modules or marked internal."""
    documented = _documented_public_modules()
    assert "compiler" in documented and "compiler.errors" in documented
    public = {
        module
        for module, path in _modules().items()
        if not _internal(module, path.relative_to(ROOT))
    }
    assert public == documented, (
        f"public but not in the documented list: {sorted(public - documented)}; "
        f"listed but internal or absent: {sorted(documented - public)}"
    )


def test_every_public_module_has_an_importable_all() -> None:
    for module in sorted(_documented_public_modules()):
        mod = importlib.import_module(module)
        names = getattr(mod, "__all__", None)
        assert names, f"{module} has no __all__"
        assert len(set(names)) == len(names), f"{module}.__all__ repeats a name"
        for name in names:
            assert hasattr(mod, name), f"{module}.__all__ names {name!r}, which is not there"


def _compiler_types(hint: object) -> Iterator[type]:
    """The classes of this package a type hint names (through unions and generics)."""
    if isinstance(hint, type):
        if hint.__module__.split(".")[0] == "compiler":
            yield hint
        return
    for arg in typing.get_args(hint):
        yield from _compiler_types(arg)


def _every_name() -> dict[str, object]:
    """The globals of every loaded module of this package: what annotations name under
    ``if TYPE_CHECKING:`` resolves here."""
    found: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "compiler" and module is not None:
            found.update((k, v) for k, v in vars(module).items() if k not in found)
    return found


def _signatures(obj: object) -> Iterator[tuple[str, object]]:
    """(what, hint) for each part of a public name a caller meets: a function's parameters
    and result; a class's fields, ``__init__`` parameters and public properties."""
    targets: list[object] = []
    if inspect.isclass(obj):
        if dataclasses.is_dataclass(obj) or hasattr(obj, "model_fields"):
            targets.append(obj)
        init = vars(obj).get("__init__")
        if inspect.isfunction(init) and not dataclasses.is_dataclass(obj):
            targets.append(init)
        targets += [
            m.fget
            for n, m in vars(obj).items()
            if isinstance(m, property) and m.fget and not n.startswith("_")
        ]
    elif inspect.isfunction(obj):
        targets.append(obj)
    for target in targets:
        for name, hint in typing.get_type_hints(target, localns=_every_name()).items():
            if not name.startswith("_"):
                yield f"{getattr(target, '__qualname__', target)}.{name}", hint


def test_types_in_public_signatures_are_public() -> None:
    """A caller can name every type a public signature shows: each is in the ``__all__`` of
    a public module."""
    public: set[int] = set()
    names: list[tuple[str, object]] = []
    for module in sorted(_documented_public_modules()):
        mod = importlib.import_module(module)
        for name in mod.__all__:
            public.add(id(getattr(mod, name)))
            names.append((f"{module}.{name}", getattr(mod, name)))
    hidden = {
        f"{tp.__module__}.{tp.__qualname__} (in {where})"
        for _, obj in names
        for where, hint in _signatures(obj)
        for tp in _compiler_types(hint)
        if id(tp) not in public
    }
    assert not hidden, "types in public signatures that no public module exports:\n" + "\n".join(
        sorted(hidden)
    )
