"""Read roots: the directories a compile may read files under, when a caller confines it.

Internal: ``apc serve`` confines every compile to its ``--root`` directories; the CLI and the
Python API read where they are told (no confinement, nothing checked here).

:func:`admit` is the one enforcement point: every file an input reader opens (a template, a
preset, a run context, a chat, a card, a lorebook, a skill, a profile layer: through
:func:`compiler.inputs.read.open_input`) and every workspace file
(:meth:`compiler.inputs.workspace.Workspace.read`) passes through it once opened, and a
directory (a workspace, whose tree is listed) before it is used. Under :func:`confine`, it
refuses with ``workspace.path_denied`` (``details["reason"]``):

- ``outside_roots``: the file's real path is under none of the roots (or no roots are set);
- ``symlink``: the path as given is under a root, but a symlink takes it outside;
- ``hardlink``: the file has more than one hard link (a hard link can name a file outside
  the roots; ``allowWorkspaceHardlinks`` does not lift this).

The real path of an opened file is the descriptor's (``/proc/self/fd``), so a link swapped in
between a check and the open cannot redirect a read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path

from compiler.errors import PolicyError

_ROOTS: ContextVar[tuple[Path, ...] | None] = ContextVar("apc_read_roots", default=None)


@contextlib.contextmanager
def confine(roots: Sequence[str | os.PathLike[str]]) -> Iterator[tuple[Path, ...]]:
    """Confine the reads of this thread or task to ``roots`` (their real paths) while the
    block runs; no roots: every file read is refused."""
    real = tuple(Path(os.path.realpath(r)) for r in roots)
    token = _ROOTS.set(real)
    try:
        yield real
    finally:
        _ROOTS.reset(token)


def confined() -> bool:
    """Whether reads are confined to roots here (hard links are then never admitted)."""
    return _ROOTS.get() is not None


def _deny(path: str | os.PathLike[str], why: str, reason: str) -> PolicyError:
    return PolicyError(
        code="workspace.path_denied",
        message=f"path {str(path)[:200]!r} denied ({reason}): {why}",
        hint="name a file under one of the server's --root directories",
        details={"reason": reason},
    )


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _real_of(fd: int | None, path: str | os.PathLike[str]) -> Path:
    """The real path of the open descriptor ``fd`` (else of ``path``: resolved)."""
    if fd is not None:
        with contextlib.suppress(OSError):
            return Path(os.readlink(f"/proc/self/fd/{fd}"))
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError, RuntimeError):  # a NUL, a name too long, a loop
        raise _deny(path, "not a valid path", "invalid") from None


def admit(path: str | os.PathLike[str], fd: int | None = None) -> None:
    """Refuse ``path`` (opened as ``fd``, or a directory about to be used) unless it is under
    a root, reached without a symlink out of them, with one hard link; no-op unconfined."""
    roots = _ROOTS.get()
    if roots is None:
        return
    if not roots:
        raise _deny(path, "the server has no --root: only inline inputs are accepted", "no_roots")
    real = _real_of(fd, path)
    if not _under(real, roots):
        given = Path(os.path.abspath(path))
        if _under(given, roots):
            raise _deny(path, "a symlink resolves outside the roots", "symlink")
        raise _deny(path, "not under any of the server's roots", "outside_roots")
    if fd is not None and os.fstat(fd).st_nlink > 1:
        raise _deny(path, "the file has other hard links, which can reach outside", "hardlink")
