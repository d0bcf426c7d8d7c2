"""Shared plumbing for the input readers: files, JSON, and error conversion.

Every reader turns a broken input into a :class:`~compiler.errors.ContextError` that names the
file and the JSON path inside it; no ``json``, ``pydantic`` or ``OSError`` escapes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from compiler.errors import ContextError, Span, did_you_mean

PathLike = str | os.PathLike[str]
M = TypeVar("M", bound=BaseModel)
INLINE = "<inline>"


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


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``; a missing or unreadable file is a ContextError."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ContextError(
            code="context.file_not_found", message=f"file not found: {path}", file=str(path)
        ) from None
    except IsADirectoryError:
        raise ContextError(
            code="context.file_unreadable",
            message=f"expected a file, found a directory: {path}",
            file=str(path),
        ) from None
    except OSError as exc:
        raise ContextError(
            code="context.file_unreadable",
            message=f"cannot read {path}: {exc.strerror or exc}",
            file=str(path),
        ) from None


def decode_text(data: bytes, file: str) -> str:
    """UTF-8 text (a leading BOM is dropped); anything else is ``context.invalid_json``."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ContextError(
            code="context.invalid_json",
            message=f"not UTF-8 text (bad byte at offset {exc.start})",
            file=file,
        ) from None


def parse_json(text: str, file: str, *, line_offset: int = 0, what: str = "JSON") -> Any:
    """Parse JSON text; a syntax error becomes ``context.invalid_json`` with line and column.

    ``line_offset`` shifts reported lines, for one line of a JSONL file.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = exc.lineno + line_offset
        span = Span(exc.pos, exc.pos + 1, line, exc.colno, line, exc.colno + 1, file)
        raise ContextError(
            code="context.invalid_json",
            message=f"invalid {what} at line {line}, column {exc.colno}: {exc.msg}",
            file=file,
            span=span,
        ) from None
    except RecursionError:
        raise ContextError(
            code="context.invalid_json", message=f"{what} nested too deeply", file=file
        ) from None


def load_json_file(path: Path) -> Any:
    """Read and parse one JSON file."""
    return parse_json(decode_text(read_bytes(path), str(path)), str(path))


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


def from_validation(
    exc: ValidationError,
    *,
    code: str,
    file: str,
    prefix: str,
    what: str,
    known: Iterable[str] = (),
    data: Any = None,
) -> ContextError:
    """The first pydantic error as a ContextError with the JSON path of the bad value.

    An ``extra_forbidden`` error becomes ``context.unknown_field`` with a did-you-mean hint
    drawn from ``known``. With ``data`` (the validated input), pydantic's union and
    validator tags (``uid.int``) are cut from the path: it stops where the input does.
    """
    err = exc.errors(include_url=False)[0]
    loc = _real_loc(list(err["loc"]), data)
    path = join_path(prefix, *loc)
    field = str(loc[-1]) if loc else ""
    if err["type"] == "extra_forbidden":
        return ContextError(
            code="context.unknown_field",
            message=f"unknown field '{field}' in {what}",
            hint=did_you_mean(field, list(known)),
            file=file,
            path=path,
        )
    msg = str(err["msg"])
    if err["type"] == "missing":
        msg = "required field is missing"
    else:
        found = err.get("input")
        if (found is None or isinstance(found, str | int | float | bool)) and len(
            repr(found)
        ) <= 60:
            msg += f" (found {json.dumps(found)})"
    names = [p for p in loc if isinstance(p, str)]
    where = f"{what} field '{names[-1]}'" if names else what
    return ContextError(code=code, message=f"{where}: {msg}", file=file, path=path or None)


def _real_loc(loc: list[str | int], data: Any) -> list[str | int]:
    """The part of a pydantic ``loc`` that names keys and indices of ``data``."""
    if data is None:
        return [p for p in loc if not (isinstance(p, str) and p.startswith("function-"))]
    out: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, Mapping) and isinstance(part, str):
            out.append(part)
            if part not in node:
                break
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif isinstance(part, str) and (part.startswith("function-") or "[" in part):
            continue
        else:
            break
    return out


def validate(
    model: type[M],
    data: Mapping[str, Any],
    *,
    code: str,
    file: str,
    prefix: str,
    what: str,
) -> M:
    """``model.model_validate(data)`` with the error converted by :func:`from_validation`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        known = [f.alias or name for name, f in model.model_fields.items()]
        raise from_validation(
            exc, code=code, file=file, prefix=prefix, what=what, known=known, data=data
        ) from None
