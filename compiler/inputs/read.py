"""The one way the input readers read files and JSON, and turn errors into diagnostics.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.

Every reader turns a broken input into a :class:`~compiler.errors.ContextError` that names the
file and the JSON path inside it; no ``json``, ``pydantic`` or ``OSError`` escapes.

Files (:func:`read_bytes`): only regular files are read (a named pipe, device or directory is
``context.file_unreadable``, found without blocking), and only up to a size limit checked
before the file is read whole (``context.file_too_large``; :data:`MAX_INPUT_BYTES` unless the
reader passes its own).

JSON (:func:`parse_json`) is strict where Python's ``json`` is lenient: ``NaN``,
``Infinity`` and numbers that overflow to them are refused (they would make the request
invalid JSON), integers are at most :data:`MAX_INT_DIGITS` digits, and nesting deeper than Python's
parser goes is refused; each is ``context.invalid_json``. A lone UTF-16 surrogate
(``"\\ud83d"``, what a chat cut mid-emoji holds) cannot be encoded in the request: it is
replaced with U+FFFD, and the reader reports a ``context.lone_surrogate`` warning.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import regex

from compiler._records import record
from compiler.errors import ContextError, Diagnostic, Span
from compiler.inputs.lazy_chat import no_surrogate
from compiler.inputs.sandbox import admit

PathLike = str | os.PathLike[str]
if TYPE_CHECKING:  # pydantic loads on first validation: checking a template needs none
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")
INLINE = "<inline>"

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""The largest JSON input file (run context, chat, preset, lorebook, profile layer)."""
MAX_INT_DIGITS = 100
"""The most digits an integer in JSON input may have (no count or budget needs more)."""

_INT_LIMIT = 10**MAX_INT_DIGITS
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_TEXT_OR_NULL = frozenset({str, type(None)})


@record(frozen=True)
class Parsed:
    """An input already read and parsed (JSON), with the file it came from: what one stage
    passes on so that the next does not read the file again."""

    data: Any
    file: str


def join_path(prefix: str, *parts: str | int) -> str:
    """``join_path("data", "entries", 3, "keys")`` -> ``data.entries[3].keys``."""
    out = prefix
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = part
    return out


def is_file(path: PathLike) -> bool:
    """Whether ``path`` is a regular file; a path the OS cannot take (too long, NUL, a loop)
    is simply not one (``Path.is_file`` raises on some of them)."""
    try:
        return os.path.isfile(path)
    except (OSError, ValueError):
        return False


def lexists(path: PathLike) -> bool:
    """Whether something (even a broken link) is at ``path``; False for a path the OS
    cannot take."""
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


def real_dir(path: PathLike) -> Path | None:
    """``path`` resolved, if it is a directory; None for anything else (missing, a file, a
    name too long, a NUL, a symlink loop)."""
    try:
        real = Path(os.path.realpath(path))
        return real if real.is_dir() else None
    except (OSError, ValueError, RuntimeError):
        return None


def open_input(path: Path) -> BinaryIO:
    """``path`` open for binary reading, if it is a regular file (checked on the opened
    descriptor, without blocking on a pipe); else a ContextError."""

    def fail(code: str, message: str) -> ContextError:
        return ContextError(code=code, message=message, file=str(path))

    admit(path)  # confined (apc serve): refused before it is opened
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise fail("context.file_not_found", f"file not found: {path}") from None
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise fail("context.file_unreadable", f"cannot read {path}: {why}") from None
    except ValueError:  # a NUL in the path
        raise fail("context.file_unreadable", f"not a valid path: {str(path)!r}") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        try:
            admit(path, fd)  # and the file opened, as it really is
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb")
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise fail("context.file_unreadable", f"expected a file, found a directory: {path}")
    raise fail("context.file_unreadable", f"{path} is not a regular file")


_INPUT_LIMIT: ContextVar[int] = ContextVar("apc_max_input_bytes", default=MAX_INPUT_BYTES)


@contextlib.contextmanager
def input_limit(limit: int) -> Iterator[None]:
    """Within: an input file is read up to ``limit`` bytes (a compile's
    ``Limits.max_input_bytes``) unless its reader passes its own limit."""
    token = _INPUT_LIMIT.set(limit)
    try:
        yield
    finally:
        _INPUT_LIMIT.reset(token)


def limit_in_force() -> int:
    """The largest input file read now: :func:`input_limit`'s, else :data:`MAX_INPUT_BYTES`
    (a reader with its own, larger limit takes the lesser of the two)."""
    return _INPUT_LIMIT.get()


def read_bytes(path: Path, *, limit: int | None = None, what: str = "input") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (None: the input
    limit in force, :data:`MAX_INPUT_BYTES` by default); a missing, unreadable, irregular or
    too large file is a ContextError."""
    if limit is None:
        limit = _INPUT_LIMIT.get()
    with open_input(path) as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise too_large(path, limit, what)
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise ContextError(
                code="context.file_unreadable",
                message=f"cannot read {path}: {exc.strerror}",
                file=str(path),
            ) from None
    if len(data) > limit:  # the file grew while we read it
        raise too_large(path, limit, what)
    return data


def too_large(path: PathLike, limit: int, what: str = "input") -> ContextError:
    """``context.file_too_large`` for ``path`` over ``limit`` bytes."""
    return ContextError(
        code="context.file_too_large",
        message=f"{what} {path} is over the limit of {size_text(limit)}",
        file=str(path),
    )


def size_text(n: int) -> str:
    """``n`` bytes as a limit is said: ``64 MiB``, or ``1000 bytes`` below a MiB."""
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def decode_text(data: bytes, file: str, *, code: str = "context.invalid_json") -> str:
    """UTF-8 text (a leading BOM is dropped); anything else is ``code``."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ContextError(
            code=code,
            message=f"not UTF-8 text (bad byte at offset {exc.start})",
            file=file,
        ) from None


_WARNINGS: ContextVar[list[Diagnostic] | None] = ContextVar("apc_input_warnings", default=None)


@contextlib.contextmanager
def collect_warnings() -> Iterator[list[Diagnostic]]:
    """Collect the warnings every reader reports while the block runs (in this thread or
    task only): ``compile()`` puts them in ``result.warnings``."""
    found: list[Diagnostic] = []
    token = _WARNINGS.set(found)
    try:
        yield found
    finally:
        _WARNINGS.reset(token)


def report(warning: Diagnostic) -> None:
    """A reader's warning, for the active :func:`collect_warnings` (dropped without one)."""
    sink = _WARNINGS.get()
    if sink is not None:
        sink.append(warning)


def parse_json(text: str, file: str, *, line_offset: int = 0, what: str = "JSON") -> Any:
    """Parse JSON text strictly (see the module docstring); a syntax error becomes
    ``context.invalid_json`` with line and column. Lone surrogates are replaced and reported
    (:func:`report`).

    ``line_offset`` shifts reported lines, for one line of a JSONL file.
    """
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_int=_int, parse_float=_float)
    except json.JSONDecodeError as exc:
        line = exc.lineno + line_offset
        span = Span(exc.pos, exc.pos + 1, line, exc.colno, line, exc.colno + 1, file)
        raise ContextError(
            code="context.invalid_json",
            message=f"invalid {what} at line {line}, column {exc.colno}: {exc.msg}",
            file=file,
            span=span,
        ) from None
    except _Refused as exc:
        raise ContextError(
            code="context.invalid_json", message=f"invalid {what}: {exc}", file=file
        ) from None
    except RecursionError:
        raise ContextError(
            code="context.invalid_json", message=f"{what} is nested too deeply", file=file
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        value, count = sanitize(value, file)
        if count:
            report(surrogate_warning(count, file))
    return value


class _Refused(ValueError):
    """A JSON value that parses but that the compiler refuses."""


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(digits)} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _float(digits: str) -> float:
    value = float(digits)
    if not math.isfinite(value):
        raise _Refused(f"the number {digits[:40]} is out of range")
    return value


def sanitize(value: Any, file: str = INLINE) -> tuple[Any, int]:
    """``value`` (parsed JSON or a caller's objects) with every lone surrogate in its strings
    (keys included) replaced by U+FFFD, and how many strings changed; a NaN or infinite
    float, or an integer over :data:`MAX_INT_DIGITS` digits, is ``context.invalid_json``
    (the same limits as JSON text, whichever way the data comes in). A caller's objects
    come out as plain JSON data either way: lists for tuples, plain dicts with text keys
    (``1`` -> ``"1"``, as ``json.dumps`` writes them; a key of any other type is
    ``context.invalid_json``), never the caller's own (mutable) objects."""
    if isinstance(value, dict | list) and (plain := _plain_json(value)) is not None:
        return plain, 0
    count = 0

    def key(node: Any) -> str:
        if not isinstance(node, str | int | float) and node is not None:
            raise ContextError(
                code="context.invalid_json",
                message=f"an object key of type {type(node).__name__} (JSON keys are text)",
                file=file,
            )
        node = walk(node)  # its limits (a NaN, an integer of too many digits)
        return node if isinstance(node, str) else json.dumps(node)

    def walk(node: Any) -> Any:
        nonlocal count
        if isinstance(node, str):
            node = str.__str__(node)  # a subclass's value as plain text, as json.dumps
            if _SURROGATE.search(node):
                count += 1
                return _SURROGATE.sub("\ufffd", node)
            return node
        if isinstance(node, dict):
            return {key(k): walk(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [walk(item) for item in node]
        if isinstance(node, bool):
            return node
        if isinstance(node, float):
            node = float.__float__(node)
            if not math.isfinite(node):
                raise ContextError(
                    code="context.invalid_json", message=f"{node} is not a JSON number", file=file
                )
        elif isinstance(node, int):
            node = int.__int__(node)
            if abs(node) >= _INT_LIMIT:
                raise ContextError(
                    code="context.invalid_json",
                    message=f"an integer of more than {MAX_INT_DIGITS} digits",
                    file=file,
                )
        return node

    try:
        return walk(value), count
    except RecursionError:
        raise ContextError(
            code="context.invalid_json", message="input is nested too deeply", file=file
        ) from None


_LONG_DIGITS = regex.compile(f"[0-9]{{{MAX_INT_DIGITS + 1}}}")


def _plain_json(value: dict[str, Any] | list[Any]) -> Any:
    """``value`` as plain JSON data (a copy, read back from the C JSON encoder's text) when
    it holds nothing :func:`sanitize` would repair or refuse, else None: checked by the
    encoder and scans of its output, not walked in Python (a long digit run inside a string
    only sends the value down the careful walk)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    if not text.isascii():  # only non-ASCII text can hold a surrogate
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if _LONG_DIGITS.search(text) is not None:
        return None
    try:
        return json.loads(text)
    except RecursionError:
        return None


def plain_messages(items: list[Any]) -> list[dict[str, Any]] | None:
    """A copy of ``items`` when each is a flat ``dict`` of text (or null) values under ASCII
    text keys, with nothing :func:`sanitize` would repair or refuse; else None (then
    :func:`sanitize` walks them). A few C passes over a chat's messages, their keys and
    their values: the bulk of a run context, where the JSON encoder's pass of
    :func:`sanitize` costs several times more."""
    if list(map(type, items)).count(dict) != len(items):
        return None
    keys = list(chain.from_iterable(items))  # every key, each an exact str: no set folds one
    if list(map(type, keys)).count(str) != len(keys) or not all(map(str.isascii, keys)):
        return None
    values = list(chain.from_iterable(map(dict.values, items)))
    types = list(map(type, values))
    if types.count(str) != len(types):
        if not _TEXT_OR_NULL.issuperset(types):
            return None
        values = list(filter(None, values))
    return list(map(dict.copy, items)) if no_surrogate(values) else None


def surrogate_warning(count: int, file: str) -> Diagnostic:
    """The ``context.lone_surrogate`` warning for ``count`` repaired strings of ``file``."""
    return Diagnostic(
        code="context.lone_surrogate",
        message=f"{count} text value(s) held a lone UTF-16 surrogate (text cut mid-character); "
        "replaced with U+FFFD",
        severity="warning",
        file=file,
    )


def load_json_file(path: Path, *, what: str = "input") -> Any:
    """Read and parse one JSON file (see :func:`read_bytes` and :func:`parse_json`)."""
    data = read_bytes(path, what=what)
    return parse_json(decode_text(data, str(path)), str(path))


def resolve(value: PathLike, base_dir: PathLike | None) -> Path:
    """``value`` as a path, relative to ``base_dir`` when it is not absolute."""
    path = Path(value)
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    return path


def expect_object(value: Any, *, code: str, file: str, path: str, what: str) -> dict[str, Any]:
    """``value`` as a JSON object, or a ContextError naming where it was expected."""
    if not isinstance(value, dict):
        raise ContextError(
            code=code,
            message=f"{what} must be a JSON object, found {type_name(value)}",
            file=file,
            path=path or None,
        )
    return value


def type_name(value: Any) -> str:
    """The JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def validate(
    model: type[M],
    data: Mapping[str, Any],
    *,
    code: str,
    file: str,
    prefix: str,
    what: str,
) -> M:
    """``model.model_validate(data)``; the first error becomes a ContextError with ``code``
    (``context.unknown_field`` for an unknown field, with a did-you-mean), converted by the
    one converter, :func:`compiler._base.validation.diagnostics_from`."""
    from pydantic import ValidationError

    from compiler._base.validation import Codes, diagnostics_from

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        codes = Codes(unknown="context.unknown_field", missing=code, invalid=code)
        found = diagnostics_from(
            exc, model, codes=codes, data=data, prefix=prefix, file=file, what=what
        )
        # a misspelt field is also a missing one: the unknown field (with its did-you-mean)
        # says what to fix
        first = next((d for d in found if d.code == codes.unknown), found[0])
        raise ContextError(
            code=first.code, message=first.message, hint=first.hint, file=file, path=first.path
        ) from None
