"""The run's workspace: files under the roots output, scratch, plan, summaries, persist.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.

:func:`safe_relpath` is the one enforcing function for workspace path *syntax*: relative only,
no ``..``, no absolute or drive-prefixed paths, no control characters (C0, DEL, C1: a name
with a newline would slip past resource patterns), ``\\`` read as ``/``, and the first
component must be a workspace root.

:meth:`Workspace.read` is the one enforcing function for workspace *reads*; every read (a
file macro, a precomputed summary, ...) goes through it, and it decides before a byte is read:

1. the path is valid (:func:`safe_relpath`) and the policy shows it (the ``visible``
   predicate the assembler gives, over workspace paths);
2. its real path (symlinks resolved) stays inside the path's root and is valid and visible
   too, so a link cannot reach a hidden subtree (``scratch/pub -> private``) or leave;
3. the opened file is a regular file (not a pipe or device) with one link: a hard link
   would read a file from outside the workspace (reason ``hardlink``; a runtime that needs
   them sets ``allowWorkspaceHardlinks`` in the run context);
4. it is at most :data:`MAX_FILE_BYTES` and valid UTF-8.

A path refusal is ``workspace.path_denied`` (its ``details["reason"]`` says why), a hidden
file ``policy.resource_hidden``; :meth:`Workspace.tree` lists exactly the files ``read``
would accept.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from compiler.errors import ContextError, PolicyError
from compiler.inputs.sandbox import admit, confined

WORKSPACE_ROOTS = ("output", "scratch", "plan", "summaries", "persist")
"""The five workspace roots (seed section 7), in tree order; profiles name them too."""
MAX_FILE_BYTES = 8 * 1024 * 1024
"""The largest workspace file the compiler reads (``workspace.file_too_large`` above it)."""

_DRIVE_RE = re.compile(r"^[A-Za-z]:")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = getattr(os, "O_DIRECTORY", 0)
_OPEN_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)


def _deny(path: str, why: str, reason: str) -> PolicyError:
    return PolicyError(
        code="workspace.path_denied",
        message=f"workspace path {path!r} denied ({reason}): {why}",
        hint=f"use a relative path under one of the roots: {', '.join(WORKSPACE_ROOTS)}",
        details={"reason": reason},
    )


def safe_relpath(path: str) -> str:
    """The normalised ``root/sub/file`` form of a workspace path, or ``workspace.path_denied``."""
    if not path:
        raise _deny(path, "empty path", "empty")
    if _CONTROL_RE.search(path):
        raise _deny(path, "control character in path", "control_character")
    if _DRIVE_RE.match(path):
        raise _deny(path, "drive prefix", "absolute")
    norm = path.replace("\\", "/")
    if norm.startswith("/") or norm.startswith("~"):
        raise _deny(path, "absolute path", "absolute")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise _deny(path, "'..' leaves the workspace", "parent")
    if not parts:
        raise _deny(path, "empty path", "empty")
    if parts[0] not in WORKSPACE_ROOTS:
        raise _deny(path, f"'{parts[0]}' is not a workspace root", "root")
    return "/".join(parts)


def _hidden(path: str) -> PolicyError:
    return PolicyError(
        code="policy.resource_hidden",
        message=f"workspace file '{path}' is hidden from this profile",
        hint="the profile's context.include/exclude (or workspace.visibleRoots) hides it",
    )


def _unreadable(rel: str, why: str) -> ContextError:
    return ContextError(code="workspace.file_unreadable", message=f"cannot read {rel}: {why}")


class Workspace:
    """Files of a run, from a directory or an inline ``{"files": {...}}`` map.

    ``visible`` says whether the resource policy shows a workspace path (all, by default);
    ``allow_hardlinks`` admits regular files with more than one link.
    """

    def __init__(
        self,
        directory: Path | None = None,
        files: dict[str, str] | None = None,
        *,
        visible: Callable[[str], bool] | None = None,
        allow_hardlinks: bool = False,
    ) -> None:
        self.directory = directory
        self._files = {safe_relpath(k): v for k, v in (files or {}).items()}
        self._visible = visible or (lambda _path: True)
        self.allow_hardlinks = allow_hardlinks

    def real_relpath(self, path: str) -> str:
        """The workspace path a file really is (symlinks resolved), checked: inside the
        path's root, a valid workspace path, visible. Reads nothing."""
        rel = safe_relpath(path)
        if not self._visible(rel):
            raise _hidden(rel)
        if self.directory is None:
            return rel
        base = self.directory.resolve()
        root = base / rel.split("/")[0]
        try:
            target = Path(os.path.realpath(self.directory / rel))
        except (OSError, ValueError, RuntimeError) as exc:
            raise _unreadable(rel, str(exc)) from None
        if target != root and root not in target.parents:
            raise _deny(path, "a symlink resolves outside its workspace root", "symlink")
        real = safe_relpath(target.relative_to(base).as_posix())
        if real != rel and not self._visible(real):
            raise _hidden(real)
        return real

    def read(self, path: str) -> str:
        """The text of one workspace file (UTF-8), after every check of the module docstring."""
        real = self.real_relpath(path)
        if self.directory is None:
            if real in self._files:
                return self._files[real]
            raise ContextError(code="workspace.file_not_found", message=f"no workspace file {real}")
        try:
            fd = _open_beneath(self.directory.resolve(), real)
        except (FileNotFoundError, NotADirectoryError):  # a file where a folder would be
            raise ContextError(
                code="workspace.file_not_found", message=f"no workspace file {real}"
            ) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                why = "a symlink appeared on the checked path (or loops)"
                raise _deny(path, why, "symlink") from None
            raise _unreadable(real, exc.strerror or str(exc)) from None
        try:
            self._check_file(path, real, os.fstat(fd))  # before it becomes a file object
            admit(self.directory / real, fd)  # confined (apc serve): under the roots
        except BaseException:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise _too_large(real)
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _unreadable(real, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None

    def _check_file(self, path: str, real: str, info: os.stat_result) -> None:
        if not stat.S_ISREG(info.st_mode):
            raise _unreadable(real, "not a regular file")
        if info.st_nlink > 1 and not self.allow_hardlinks:
            raise _deny(
                path,
                "the file has other hard links, which can reach outside the workspace",
                "hardlink",
            )
        if info.st_size > MAX_FILE_BYTES:
            raise _too_large(real)

    def tree(self, roots: tuple[str, ...] = WORKSPACE_ROOTS) -> list[str]:
        """Every file :meth:`read` would accept under the given roots, as sorted paths
        (symlinks, hidden and dot files, hard links and invalid names left out)."""
        if self.directory is None:
            return sorted(p for p in self._files if p.split("/")[0] in roots and self._visible(p))
        out: list[str] = []
        for root in roots:
            base = self.directory / root
            if not base.is_dir() or base.is_symlink():
                continue
            for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if _listable(d))
                rel_dir = Path(dirpath).relative_to(self.directory).as_posix()
                for name in filenames:
                    if _listable(name) and self._admits(dirpath, name, f"{rel_dir}/{name}"):
                        out.append(f"{rel_dir}/{name}")
        return sorted(out)

    def _admits(self, dirpath: str, name: str, rel: str) -> bool:
        try:
            info = os.lstat(os.path.join(dirpath, name))
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return False
        if info.st_nlink > 1 and (not self.allow_hardlinks or confined()):
            return False
        return self._visible(rel)


def _open_beneath(base: Path, real: str) -> int:
    """Open ``base/real`` (a checked real path: no symlinks on it) one component at a time,
    never following a symlink, so that a link swapped in after the check cannot redirect the
    read (ELOOP / ENOTDIR if one did). Falls back to one open where ``dir_fd`` is missing."""
    if os.open not in os.supports_dir_fd:
        return os.open(base / real, _OPEN_FLAGS)
    parts = real.split("/")
    fd = os.open(base, os.O_RDONLY | _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, os.O_RDONLY | _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except NotADirectoryError:  # a file where a folder would be, or a swapped link
                if stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise OSError(errno.ELOOP, "a symlink on the path") from None
                raise
            os.close(fd)
            fd = child
        return os.open(parts[-1], _OPEN_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def _listable(name: str) -> bool:
    return not name.startswith(".") and not _CONTROL_RE.search(name)


def _too_large(rel: str) -> ContextError:
    return ContextError(
        code="workspace.file_too_large",
        message=f"workspace file {rel} is over the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit",
    )
