"""Atomic file writes: a temp file beside the target, fsync, then one rename; and appends
(:func:`append_text`, the journal) under the same rule for what the target may be.

Internal: used by the command line and the profile registry.

Nothing half-written is ever visible at the target; on any failure the target is untouched
and the temp file is removed. The file gets the usual permissions (0666 less the umask), not
the 0600 of a bare temp file.

Only a regular file (or nothing) is replaced: a symlink, named pipe, socket or device node at
the path is refused with ``io.output_not_regular`` and left as it is (a symlink is not
followed: it may point somewhere the user does not expect); a directory is ``code``.
SIGINT (KeyboardInterrupt) and SIGTERM during the write remove the temp file: for the write's
duration SIGTERM raises :class:`Terminated` (when its handler is the default one and this is
the main thread), and the signals are held while the temp file is created and removed.
An append (:func:`append_text`) refuses the same targets, and opens without following a
symlink and without blocking, so a FIFO that appears late is refused too, never waited on.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from compiler.errors import APCError

_NOT_REGULAR = (
    (stat.S_ISLNK, "symlink"),
    (stat.S_ISFIFO, "named pipe"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


class Terminated(BaseException):
    """SIGTERM arrived during an atomic write; the temp file is already removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_target(path: Path, code: str = "io.write_failed") -> None:
    """Raise unless ``path`` is absent or a regular file (see the module docstring)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise APCError(
            code=code, message=f"cannot write {path}: {exc.strerror}", file=str(path)
        ) from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise APCError(code=code, message=f"{path} is a directory", file=str(path))
    kind = next((name for test, name in _NOT_REGULAR if test(mode)), "special file")
    raise APCError(
        code="io.output_not_regular",
        message=f"{path} is a {kind}, not a regular file; it is left as it is",
        file=str(path),
        hint="choose another path, or remove it first",
    )


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` inside the block, if nobody else handles it."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
    ):
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends (where the platform can hold them)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


_NO_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
"""A lone surrogate that ``surrogateescape`` does not map back to a byte."""


def atomic_write_text(path: Path, text: str, *, code: str = "io.write_failed") -> None:
    """Write ``text`` to ``path`` atomically (UTF-8); an OS failure is an APCError with
    ``code``. A name read from bytes that are not UTF-8 (a lone surrogate) is written back
    as those bytes, as standard output writes it; any other lone surrogate as its escape."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte: its escape, alone
        data = _NO_BYTE.sub(lambda m: f"\\u{ord(m[0]):04x}", text).encode(
            "utf-8", "surrogateescape"
        )
    atomic_write_bytes(path, data, code=code)


def atomic_write_bytes(path: Path, data: bytes, *, code: str = "io.write_failed") -> None:
    """Write ``data`` to ``path`` atomically; an OS failure is an APCError with ``code``."""
    import tempfile  # imported on first write: most processes never write a file

    check_target(path, code)
    tmp: str | None = None
    with _sigterm_raises():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with _signals_held():  # a temp file exists exactly when ``tmp`` names it
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
                handle = os.fdopen(fd, "wb")
            with handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
            check_target(path, code)  # again, just before the rename
            os.replace(tmp, path)
        except BaseException as exc:
            if tmp is not None:
                with _signals_held():
                    Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise APCError(
                    code=code, message=f"cannot write {path}: {exc.strerror}", file=str(path)
                ) from None
            raise


def append_text(path: Path, text: str, *, code: str = "io.write_failed") -> None:
    """Append ``text`` (UTF-8) to ``path``, created if absent: only a regular file (or
    nothing) is written, as :func:`atomic_write_bytes` (a symlink, named pipe, socket or
    device is ``io.output_not_regular``, left as it is); an OS failure is ``code``."""
    check_target(path, code)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        check_target(path, code)  # what appeared since the check: a symlink, a FIFO
        raise APCError(
            code=code, message=f"cannot write {path}: {exc.strerror}", file=str(path)
        ) from None
    with os.fdopen(fd, "ab") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO with a reader opens
            handle.close()
            check_target(path, code)
            raise APCError(
                code="io.output_not_regular",
                message=f"{path} is not a regular file; it is left as it is",
                file=str(path),
            )
        try:
            handle.write(text.encode("utf-8"))
        except OSError as exc:
            raise APCError(
                code=code, message=f"cannot write {path}: {exc.strerror}", file=str(path)
            ) from None
