"""Atomic file writes: a temp file beside the target, fsync, then one rename.

Nothing half-written is ever visible at the target; on any failure the target is untouched
and the temp file is removed. The file gets the usual permissions (0666 less the umask), not
the 0600 of a bare temp file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from compiler.errors import APCError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str, *, code: str = "io.write_failed") -> None:
    """Write ``text`` to ``path`` atomically; an OS failure is an APCError with ``code``."""
    if path.is_dir():
        raise APCError(code=code, message=f"{path} is a directory", file=str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise APCError(
            code=code, message=f"cannot write {path}: {exc.strerror}", file=str(path)
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise APCError(
                code=code, message=f"cannot write {path}: {exc.strerror}", file=str(path)
            ) from None
        raise
