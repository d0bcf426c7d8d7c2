"""Read roots (compiler.inputs.sandbox): under confine(), every file a compile opens must be
under a root, reached without a symlink out, with one hard link; unconfined, nothing changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import compiler
from compiler.errors import PolicyError
from compiler.inputs.read import read_bytes
from compiler.inputs.run import load_context
from compiler.inputs.sandbox import confine


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """``root/`` with a file, a symlink out and a hard link out; ``outside/secret.txt``."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    (root / "ok.txt").write_text("fine", encoding="utf-8")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    os.link(outside / "secret.txt", root / "hard.txt")
    (root / "ws" / "output").mkdir(parents=True)
    (root / "ws" / "output" / "main.md").write_text("draft", encoding="utf-8")
    os.link(outside / "secret.txt", root / "ws" / "output" / "hard.md")
    return root, outside


def _reason(exc: pytest.ExceptionInfo[PolicyError]) -> str:
    assert exc.value.code == "workspace.path_denied"
    return str(exc.value.details["reason"])


def test_files_under_a_root_are_read(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with confine([root]):
        assert read_bytes(root / "ok.txt") == b"fine"


@pytest.mark.parametrize(
    ("name", "reason"),
    [("link.txt", "symlink"), ("hard.txt", "hardlink"), ("../outside/secret.txt", "outside_roots")],
)
def test_paths_out_of_the_roots_are_denied(tree: tuple[Path, Path], name: str, reason: str) -> None:
    root, _ = tree
    with confine([root]), pytest.raises(PolicyError) as exc:
        read_bytes(root / name)
    assert _reason(exc) == reason


def test_no_roots_deny_every_file(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with confine([]), pytest.raises(PolicyError) as exc:
        read_bytes(root / "ok.txt")
    assert _reason(exc) == "no_roots"


def test_a_nul_in_a_path_is_denied_not_a_crash(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with confine([root]), pytest.raises(PolicyError) as exc:
        read_bytes(Path(f"{root}/ok\0.txt"))
    assert _reason(exc) == "invalid"


def test_unconfined_reads_are_unchanged(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert read_bytes(root / "link.txt") == b"secret"
    assert read_bytes(root / "hard.txt") == b"secret"


def test_workspace_hard_links_are_denied_even_when_the_run_allows_them(
    tree: tuple[Path, Path],
) -> None:
    root, _ = tree
    run = {"workspace": "ws", "allowWorkspaceHardlinks": True}
    template = 'A <<agent.file "output/main.md">> B <<agent.file "output/hard.md">>'
    assert (
        "secret"
        in compiler.compile_string(template, context=load_context(run, root)).request["messages"][
            0
        ]["content"]
    )
    with confine([root]):
        ctx = load_context(run, root)
        with pytest.raises(PolicyError) as exc:
            compiler.compile_string(template, context=ctx)
    assert _reason(exc) == "hardlink"


def test_a_workspace_directory_outside_the_roots_is_denied(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (outside / "output").mkdir()
    with confine([root]):
        ctx = load_context({"workspace": str(outside)}, root)
        with pytest.raises(PolicyError) as exc:
            compiler.compile_string("<<agent.workspace.tree>>", context=ctx)
    assert _reason(exc) == "outside_roots"


def test_a_chat_file_outside_the_roots_is_denied_when_the_context_loads(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    (outside / "chat.jsonl").write_text('{"name": "u", "is_user": true, "mes": "hi"}\n')
    with confine([root]), pytest.raises(PolicyError) as exc:
        load_context({"chat": str(outside / "chat.jsonl")}, root)
    assert _reason(exc) == "outside_roots"


@pytest.mark.parametrize("exists", [True, False])
def test_directories_outside_the_roots_are_denied_whether_they_exist_or_not(
    tree: tuple[Path, Path], exists: bool
) -> None:
    root, outside = tree
    target = outside / ("skills" if exists else "none")
    if exists:
        (target / "x").mkdir(parents=True)
        (target / "x" / "SKILL.md").write_text("skill", encoding="utf-8")
    with confine([root]):
        for run, template in (
            ({"workspace": str(target)}, "<<agent.workspace.tree>>"),
            ({"skills": str(target)}, '<<agent.skill "x">>'),
        ):
            ctx = load_context(run, root)
            with pytest.raises(PolicyError) as exc:
                compiler.compile_string(template, context=ctx)
            assert _reason(exc) == "outside_roots"  # no oracle of what exists out there


def test_a_workspace_swapped_for_a_link_after_its_check_is_not_listed(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the workspace passes the check, then becomes a symlink out of the roots
    before it is resolved; its tree (file names outside the roots) must not be listed."""
    import compiler.inputs.run as run_module

    root, outside = tree
    (outside / "output").mkdir()
    (outside / "output" / "leaked-name.md").write_text("x", encoding="utf-8")
    resolve_dir = run_module.real_dir

    def swapped(path: os.PathLike[str] | str) -> Path | None:
        (root / "ws").rename(root / "ws-old")
        (root / "ws").symlink_to(outside)
        return resolve_dir(path)

    monkeypatch.setattr(run_module, "real_dir", swapped)
    ctx = {"workspace": "ws"}
    with confine([root]), pytest.raises(PolicyError) as exc:
        compiler.compile_string("<<agent.workspace.tree>>", context=load_context(ctx, root))
    assert _reason(exc) == "outside_roots"  # the directory as resolved
