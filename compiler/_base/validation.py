"""The one conversion of pydantic validation errors into diagnostics.

Internal: used by the readers and the profile schema.

Every reader (run context, chat, cards, lorebooks, presets) and the profile schema validate
with pydantic; :func:`diagnostics_from` turns a ``ValidationError`` into diagnostics that name
the JSON path of the bad value (as the input spells it: aliases, indices, no pydantic union
or validator tags) and, for an unknown field, a did-you-mean drawn from the fields of the
object *at that path* (so ``toolResults[0].tol`` suggests ``tool``, not a top-level field).
Which codes the diagnostics carry is the caller's: each error family owns its codes.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Union

from pydantic import BaseModel, ValidationError

from compiler._records import record
from compiler.errors import Diagnostic, did_you_mean

__all__ = ["Codes", "diagnostics_from", "field_candidates", "format_path"]


@record(frozen=True)
class Codes:
    """The codes of one error family: an unknown field, a missing one, a bad value."""

    unknown: str
    missing: str
    invalid: str


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def format_path(parts: Iterable[str | int], prefix: str = "") -> str:
    """``("profiles", 0, "tools", "alow")`` -> ``profiles[0].tools.alow``; odd keys quoted."""
    out = prefix
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(part):
            out += f"[{part!r}]".replace("'", '"')
        else:
            out += f".{part}" if out else part
    return out


def _expand(tp: Any) -> list[Any]:
    """The concrete types behind ``Annotated``, ``Optional`` and unions."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _expand(typing.get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [t for arg in typing.get_args(tp) for t in _expand(arg)]
    return [tp]


def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """Alias and attribute name -> attribute name."""
    out: dict[str, str] = {}
    for name, info in model.model_fields.items():
        out[name] = name
        out[info.alias or name] = name
    return out


def field_candidates(root: type[BaseModel], loc: Iterable[str | int]) -> list[str]:
    """The field names (as the input spells them) of the model(s) found at ``loc``."""
    current: list[Any] = [root]
    for part in loc:
        following: list[Any] = []
        for tp in (t for c in current for t in _expand(c)):
            origin = typing.get_origin(tp)
            if isinstance(part, int) and origin is list:
                following.append(typing.get_args(tp)[0])
            elif isinstance(part, str) and origin is dict:
                following.append(typing.get_args(tp)[1])
            elif isinstance(part, str) and isinstance(tp, type) and issubclass(tp, BaseModel):
                name = _field_names(tp).get(part)
                if name is not None:
                    following.append(tp.model_fields[name].annotation)
        current = following
    names: list[str] = []
    for tp in (t for c in current for t in _expand(c)):
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            names += [info.alias or n for n, info in tp.model_fields.items()]
    return names


_SCALAR_TAGS = frozenset({"str", "int", "float", "bool", "none", "bytes", "dict", "list"})


def _is_tag(part: str | int) -> bool:
    """Whether a part of a pydantic ``loc`` is its tag of a union member or validator
    (``function-after[...]``, ``list[...]``, ``str``), not a key of the data."""
    return isinstance(part, str) and (
        part.startswith(("function-", "literal[")) or "[" in part or part in _SCALAR_TAGS
    )


_UNSEEN = object()
_MAX_AMBIGUOUS = 4  # parts of one loc tried both ways (a key and a tag): 16 walks at most


def _walks(
    loc: list[str | int], data: Any, ambiguous: int = 0
) -> Iterable[tuple[list[str | int], Any]]:
    """Each reading of ``loc`` over ``data`` (its keys and indices, and the node it ends
    at): a part that is a key of the object there and also looks like a tag (a data key
    ``"str"`` where pydantic's ``str`` member of a union failed) is read as the key first,
    then as the tag."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, Mapping) and isinstance(part, str):
            if part not in node and _is_tag(part):
                continue  # a union member's tag, e.g. ``list[...]`` when an object was given
            out.append(part)
            if part not in node:
                break
            if _is_tag(part) and ambiguous < _MAX_AMBIGUOUS:
                for rest, end in _walks(loc[i + 1 :], node[part], ambiguous + 1):
                    yield [*out, *rest], end
                for rest, end in _walks(loc[i + 1 :], node, ambiguous + 1):
                    yield [*out[:-1], *rest], end
                return
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif _is_tag(part):
            continue
        else:
            break
    yield out, node


def _real_loc(loc: list[str | int], data: Any, found: Any = _UNSEEN) -> list[str | int]:
    """The part of a pydantic ``loc`` that names keys and indices of ``data`` (None: the
    loc without pydantic's tags). Where a part may be a key or a tag, the reading that
    ends at the error's input (``found``) wins, else the key's."""
    if data is None:
        return [p for p in loc if not _is_tag(p)]
    walks = list(_walks(loc, data))
    return next((out for out, end in walks if end is found), walks[0][0])


def diagnostics_from(
    exc: ValidationError,
    model: type[BaseModel],
    *,
    codes: Codes,
    data: Any = None,
    prefix: str = "",
    file: str | None = None,
    what: str = "",
) -> list[Diagnostic]:
    """Every error of ``exc`` (from validating ``data`` as ``model``) as a diagnostic.

    ``prefix`` is where ``data`` sits in ``file``; ``what`` names the object in messages
    (``run context``). A custom error type with a dot (``profile.invalid_value``) is its own
    code; its ``ctx["hint"]`` becomes the hint.
    """
    out: list[Diagnostic] = []
    union: tuple[str | None, str] | None = None  # a type error's path and message
    for err in exc.errors(include_url=False):
        loc = _real_loc(list(err["loc"]), data, err.get("input", _UNSEEN))
        path = format_path(loc, prefix) or prefix or None
        kind: str = err["type"]
        field = str(loc[-1]) if loc and isinstance(loc[-1], str) else ""
        where = f" in {what}" if what else ""
        ctx = err.get("ctx") or {}
        hint = ctx.get("hint") if isinstance(ctx, dict) else None
        if kind == "extra_forbidden":
            candidates = field_candidates(model, loc[:-1])
            out.append(
                Diagnostic(
                    code=codes.unknown,
                    message=f"unknown field '{field}'{where}",
                    hint=did_you_mean(field, candidates),
                    path=path,
                    file=file,
                )
            )
            union = None
            continue
        if kind == "missing":
            message = f"missing required field '{field}'{where}"
            out.append(Diagnostic(code=codes.missing, message=message, path=path, file=file))
            union = None
            continue
        message = str(err["msg"])
        merged = union is not None and union[0] == path and kind.endswith("_type")
        if merged and union is not None:  # another member of a union: one message for all
            out.pop()
            message = f"{union[1]}, or {message.removeprefix('Input should be ')}"
        union = (path, message) if kind.endswith("_type") else None
        found = err.get("input")
        if (
            "." not in kind
            and (found is None or isinstance(found, str | int | float | bool))
            and len(repr(found)) <= 60
        ):
            message += f" (found {json.dumps(found)})"
        if field:
            message = f"{what + ' ' if what else ''}field '{field}': {message}"
        code = kind if "." in kind else codes.invalid
        out.append(Diagnostic(code=code, message=message, hint=hint, path=path, file=file))
    return out
