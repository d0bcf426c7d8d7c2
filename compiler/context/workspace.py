"""The run's workspace: files under the roots output, scratch, plan, summaries, persist.

:func:`safe_relpath` is the one enforcing function for workspace paths: relative only, no
``..``, no absolute or drive-prefixed paths, no NUL, ``\\`` read as ``/``, and the first
component must be a workspace root. :meth:`Workspace.read` also refuses symlinks that resolve
outside the file's root. Every refusal is ``workspace.path_denied`` and reads nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from compiler.errors import ContextError, PolicyError

ROOTS = ("output", "scratch", "plan", "summaries", "persist")
_DRIVE_RE = re.compile(r"^[A-Za-z]:")


def _deny(path: str, why: str) -> PolicyError:
    return PolicyError(
        code="workspace.path_denied",
        message=f"workspace path {path!r} denied: {why}",
        hint=f"use a relative path under one of the roots: {', '.join(ROOTS)}",
    )


def safe_relpath(path: str) -> str:
    """The normalised ``root/sub/file`` form of a workspace path, or ``workspace.path_denied``."""
    if not path:
        raise _deny(path, "empty path")
    if "\x00" in path:
        raise _deny(path, "NUL byte in path")
    if _DRIVE_RE.match(path):
        raise _deny(path, "drive prefix")
    norm = path.replace("\\", "/")
    if norm.startswith("/") or norm.startswith("~"):
        raise _deny(path, "absolute path")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise _deny(path, "'..' leaves the workspace")
    if not parts:
        raise _deny(path, "empty path")
    if parts[0] not in ROOTS:
        raise _deny(path, f"'{parts[0]}' is not a workspace root")
    return "/".join(parts)


class Workspace:
    """Files of a run, from a directory or an inline ``{"files": {...}}`` map."""

    def __init__(self, directory: Path | None = None, files: dict[str, str] | None = None) -> None:
        self.directory = directory
        self._files = {safe_relpath(k): v for k, v in (files or {}).items()}

    def real_relpath(self, path: str) -> str:
        """The workspace path a file really is, symlinks inside its root resolved.

        Resource visibility is checked on this path too, so a link inside a root cannot
        reach a hidden subtree of it (``scratch/pub -> private``).
        """
        rel = safe_relpath(path)
        if self.directory is None:
            return rel
        base = self.directory.resolve()
        root = base / rel.split("/")[0]
        target = (self.directory / rel).resolve()
        if target != root and root not in target.parents:
            raise _deny(path, "a symlink resolves outside its workspace root")
        return target.relative_to(base).as_posix()

    def read(self, path: str) -> str:
        """The text of one workspace file (UTF-8)."""
        rel = safe_relpath(path)
        if self.directory is None:
            if rel in self._files:
                return self._files[rel]
            raise ContextError(code="workspace.file_not_found", message=f"no workspace file {rel}")
        # The root is not resolved: a symlinked root (or file) pointing elsewhere is denied.
        root = self.directory.resolve() / rel.split("/")[0]
        target = (self.directory / rel).resolve()
        if target != root and root not in target.parents:
            raise _deny(path, "a symlink resolves outside its workspace root")
        if target.exists() and not target.is_file():
            raise ContextError(
                code="workspace.file_unreadable", message=f"{rel} is not a regular file"
            )
        try:
            return target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ContextError(
                code="workspace.file_not_found", message=f"no workspace file {rel}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ContextError(
                code="workspace.file_unreadable", message=f"cannot read workspace file {rel}: {exc}"
            ) from None

    def tree(self, roots: tuple[str, ...] = ROOTS) -> list[str]:
        """Every file under the given roots, as sorted workspace paths (symlinks not followed)."""
        if self.directory is None:
            return sorted(p for p in self._files if p.split("/")[0] in roots)
        out: list[str] = []
        for root in roots:
            base = self.directory / root
            if not base.is_dir() or base.is_symlink():
                continue
            for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                rel_dir = Path(dirpath).relative_to(self.directory).as_posix()
                out.extend(
                    f"{rel_dir}/{f}"
                    for f in filenames
                    if not f.startswith(".") and not os.path.islink(os.path.join(dirpath, f))
                )
        return sorted(out)
