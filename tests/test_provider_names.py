"""A provider is named in compiler/providers/ only: the registry names the built-in ones, a
dialect says what it is called and which SillyTavern preset key holds its model. Every other
module asks them, so that a provider added there (or by a plugin) needs no edit elsewhere.

Each string constant of each module under compiler/ outside compiler/providers/ is read with
:mod:`ast` (docstrings excepted: they may talk about a provider); one that is a provider's
name fails, unless :data:`ALLOWED` holds it, with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "compiler"
PROVIDERS_DIR = PACKAGE / "providers"

#: The built-in provider names (as ``--provider`` spells them).
NAMES = frozenset(
    {"openai", "openai-chat", "openai-responses", "openai-compatible", "anthropic", "gemini"}
)

#: (file, name) pairs that must stay, each with why.
ALLOWED = frozenset(
    {
        # a profile's preset reference carries SillyTavern's preset-manager API id, whose
        # store of chat-completion presets is called "openai" for every source: a name of
        # SillyTavern's, not a provider of this compiler (and the profile stage sits below
        # the providers, so it could not ask the registry)
        ("compiler/profile/models.py", "openai"),
    }
)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants: a module's, class's or function's first
    statement, and a bare string statement anywhere (an attribute's docstring)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def provider_names_in(source: str, file: str) -> Iterator[str]:
    """``file:line: 'name'`` for each provider name among ``source``'s string constants."""
    tree = ast.parse(source, file)
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in NAMES
            and id(node) not in docs
            and (file, node.value) not in ALLOWED
        ):
            yield f"{file}:{node.lineno}: {node.value!r}"


def test_no_provider_is_named_outside_the_providers_package() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if PROVIDERS_DIR not in path.parents
        for hit in provider_names_in(
            path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()
        )
    ]
    assert not found, (
        "provider names outside compiler/providers/ (ask compiler.providers: DEFAULT_PROVIDER, "
        "provider_names(), get_dialect(name).name or .preset_model_key):\n" + "\n".join(found)
    )


def test_every_allowed_name_is_still_there() -> None:
    """An allowance whose constant is gone is removed, so the list stays the truth."""
    for file, name in ALLOWED:
        tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
        assert any(
            isinstance(node, ast.Constant) and node.value == name for node in ast.walk(tree)
        ), (file, name)


def test_the_scan_sees_constants_but_not_docstrings() -> None:
    source = (
        '"""Talks of "openai" and gemini."""\n'
        "def f(provider='anthropic'):\n"
        '    """Lowers for "gemini"."""\n'
        "    return {'openai-chat': 1}.get(provider, f'{provider}') or 'gemini'\n"
        "KEY = 'claude_model'\n"
        '"""The key of "openai-responses"."""\n'
    )
    assert sorted(provider_names_in(source, "compiler/probe.py")) == [
        "compiler/probe.py:2: 'anthropic'",
        "compiler/probe.py:4: 'gemini'",
        "compiler/probe.py:4: 'openai-chat'",
    ]
    assert frozenset(_registered()) == NAMES


def _registered() -> tuple[str, ...]:
    from compiler.providers.registry import PROVIDERS

    return tuple(PROVIDERS)
