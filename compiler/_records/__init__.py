"""Dataclasses that are cheap to make: the package's ``@record`` in place of ``@dataclass``.

A record is a standard dataclass (``dataclasses.fields``, ``replace``, ``asdict`` and
``is_dataclass`` work on it, and its fields, defaults, ``field(default_factory=...)``,
``field(init=False)``, ``repr=False``, ``compare=False``, ``__post_init__`` and ``slots`` mean
what they mean there); its methods behave as ``@dataclass`` (``frozen`` or not) makes them. What
differs is what making the class costs: Python 3.11's ``@dataclass`` compiles each method it
adds apart (``__init__``, ``__repr__``, ``__eq__``, and a frozen class's ``__hash__``,
``__setattr__`` and ``__delattr__``), about 0.1 ms each, so a frozen dataclass costs ~0.9 ms to
make and the sixty-odd on a compile's path were a tenth of an ``apc compile`` process. A
record compiles only its ``__init__`` (the method instances are made through, kept as fast as
the dataclass's) and shares the others, which read the fields through one
``operator.attrgetter``: ~0.25 ms a class.

Not supported: ``kw_only`` and ``InitVar`` fields (a ``TypeError``), the ``order`` and
``unsafe_hash`` options. ``__dataclass_params__`` describes the dataclass underneath (no
``__init__``, ``__repr__`` or ``__eq__`` of its own, not frozen), so ``@dataclass`` refuses a
frozen subclass of a frozen record: subclass a record with a record or a plain class.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")


class _Factory:
    """The default of an ``__init__`` parameter whose field has a default factory."""

    def __repr__(self) -> str:
        return "<factory>"  # as dataclasses shows it in the signature


_FACTORY = _Factory()


@overload
def record(cls: type[_T], /) -> type[_T]: ...
@overload
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[_T]], type[_T]]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(
    cls: type[_T] | None = None, /, *, frozen: bool = False, slots: bool = False
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """``@dataclass`` (``frozen`` and ``slots`` as there), made without compiling every method."""

    def wrap(cls: type[_T]) -> type[_T]:
        return _make(cls, frozen=frozen, slots=slots)

    return wrap if cls is None else wrap(cls)


def _make(cls: type[_T], *, frozen: bool, slots: bool) -> type[_T]:
    own = cls.__dict__
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    made: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
    fields = dataclasses.fields(made)
    for f in made.__dataclass_fields__.values():
        if f.kw_only is True or isinstance(f.type, dataclasses.InitVar) or "InitVar" in str(f.type):
            raise TypeError(f"{made.__qualname__}.{f.name}: a record takes no kw_only or InitVar")
    _set(made, "__init__", _init(made, fields, frozen=frozen))
    _set(made, "__repr__", _repr([f.name for f in fields if f.repr]))
    compared = [f.name for f in fields if f.compare]
    _set(made, "__eq__", _eq(_key(compared)))
    if frozen:
        hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
        if not explicit_hash:
            made.__hash__ = _hash(_key(hashed))
        names = frozenset(f.name for f in fields)
        _set(made, "__setattr__", _frozen_setattr(made, names))
        _set(made, "__delattr__", _frozen_delattr(made, names))
        if slots:
            _set(made, "__getstate__", _slots_getstate)
            _set(made, "__setstate__", _slots_setstate)
    elif not explicit_hash:
        made.__hash__ = None  # mutable and compared by value, as @dataclass leaves it
    return made  # type: ignore[no-any-return]


def _set(cls: type, name: str, value: object) -> None:
    """Adds a method the class does not define itself (as ``@dataclass`` does)."""
    if name not in cls.__dict__:
        setattr(cls, name, value)


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...], *, frozen: bool) -> object:
    """The class's ``__init__``, compiled: what ``@dataclass`` would write, in one function."""
    names: dict[str, object] = {"_FACTORY": _FACTORY, "_setattr": object.__setattr__}
    params, body = ["self"], []
    for i, f in enumerate(fields):
        if f.default is not dataclasses.MISSING:
            names[f"_d{i}"] = f.default
            value = f"_d{i}"
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_f{i}"] = f.default_factory
            value = f"_f{i}()"
        else:
            value = ""
        if f.init:
            if value.endswith("()"):
                params.append(f"{f.name}=_FACTORY")
                value = f"{value} if {f.name} is _FACTORY else {f.name}"
            else:
                params.append(f"{f.name}={value}" if value else f.name)
                value = f.name
        elif not value:
            continue  # init=False without a default: set by __post_init__
        body.append(
            f"  _setattr(self, {f.name!r}, {value})" if frozen else f"  self.{f.name} = {value}"
        )
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    source = f"def __init__({', '.join(params)}):\n" + ("\n".join(body) or "  pass") + "\n"
    exec(source, names)
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    init.__module__ = cls.__module__
    return init


def _key(names: list[str]) -> Callable[[object], tuple[object, ...]]:
    """The values that make an instance's identity, as a tuple."""
    if len(names) == 1:
        (name,) = names
        return lambda obj: (getattr(obj, name),)
    return attrgetter(*names) if names else lambda obj: ()


def _repr(names: list[str]) -> Callable[[object], str]:
    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _eq(key: Callable[[object], tuple[object, ...]]) -> Callable[[object, object], Any]:
    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[object], tuple[object, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(key(self))

    return __hash__


def _frozen_setattr(cls: type, names: frozenset[str]) -> Callable[[object, str, object], None]:
    """A frozen class's ``__setattr__``: no field of it, nor any attribute of an instance of
    the class itself (a plain subclass may set its own), as ``@dataclass`` writes it."""

    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    return __setattr__


def _frozen_delattr(cls: type, names: frozenset[str]) -> Callable[[object, str], None]:
    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    return __delattr__


def _slots_getstate(self: object) -> list[object]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]  # type: ignore[arg-type]


def _slots_setstate(self: object, state: list[object]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=True):  # type: ignore[arg-type]
        object.__setattr__(self, f.name, value)
