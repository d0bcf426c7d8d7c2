"""``@record`` behaves as ``@dataclass``: the same class built both ways, from random field
lists, gives equal constructions, comparisons, hashes, reprs, errors, copies and pickles."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler._records import record

VALUES = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.tuples(st.integers(0, 2)))

# a field: (has a default?, default or factory, init, repr, compare)
FIELD = st.tuples(
    st.sampled_from(["none", "default", "factory"]),
    VALUES,
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


Spec = list[tuple[str, Any, bool, bool, bool]]


def _spec(fields: Spec) -> Spec:
    """Fields in an order a dataclass takes: the ones __init__ needs first."""
    out = []
    for kind, value, init, shown, compared in fields:
        if kind == "none" and not init:
            kind = "default"  # init=False without a default would be left unset
        out.append((kind, value, init, shown, compared))
    return sorted(out, key=lambda f: f[0] != "none" or not f[2])


def _build(spec: Spec, make: Any) -> type:
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
    for i, (kind, value, init, shown, compared) in enumerate(spec):
        name = f"f{i}"
        namespace["__annotations__"][name] = "object"
        if kind == "default":
            namespace[name] = dataclasses.field(
                default=value, init=init, repr=shown, compare=compared
            )
        elif kind == "factory":
            namespace[name] = dataclasses.field(
                default_factory=lambda v=value: [v], init=init, repr=shown, compare=compared
            )
        else:
            namespace[name] = dataclasses.field(repr=shown, compare=compared)
    return make(type("Thing", (), namespace))  # type: ignore[no-any-return]


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as exc:
        return ("error", type(exc))


@settings(max_examples=150, deadline=None)
@given(
    fields=st.lists(FIELD, max_size=5),
    frozen=st.booleans(),
    slots=st.booleans(),
    args=st.lists(VALUES, max_size=5),
    other=st.lists(VALUES, max_size=5),
)
def test_a_record_behaves_as_a_dataclass(
    fields: list[Any], frozen: bool, slots: bool, args: list[Any], other: list[Any]
) -> None:
    spec = _spec(fields)
    ours = _build(spec, record(frozen=frozen, slots=slots))
    theirs = _build(spec, dataclasses.dataclass(frozen=frozen, slots=slots))
    assert dataclasses.is_dataclass(ours)
    assert [f.name for f in dataclasses.fields(ours)] == [
        f.name for f in dataclasses.fields(theirs)
    ]
    needed = sum(1 for kind, _, init, _, _ in spec if kind == "none" and init)
    a, b = _outcome(lambda: ours(*args)), _outcome(lambda: theirs(*args))
    assert a[0] == b[0]
    if a[0] == "error":
        assert len(args) < needed or len(args) > sum(1 for f in spec if f[2])
        return
    x, y = a[1], b[1]
    assert repr(x) == repr(y)
    assert dataclasses.asdict(x) == dataclasses.asdict(y)
    x2, y2 = _outcome(lambda: ours(*other)), _outcome(lambda: theirs(*other))
    if x2[0] == "ok":
        assert (x == x2[1]) == (y == y2[1])
    assert (x == 1) == (y == 1)
    assert _outcome(lambda: hash(x))[0] == _outcome(lambda: hash(y))[0]
    if frozen and _outcome(lambda: hash(x))[0] == "ok" and x2[0] == "ok" and x == x2[1]:
        assert hash(x) == hash(x2[1])
    assert repr(copy.copy(x)) == repr(x)
    assert repr(copy.deepcopy(x)) == repr(x)
    if all(f[2] for f in spec):
        assert dataclasses.replace(x) == x
    if spec:  # last: these change x and y where they are not frozen
        assert _outcome(lambda: setattr(x, "f0", 9))[0] == _outcome(lambda: setattr(y, "f0", 9))[0]
        assert _outcome(lambda: delattr(x, "f0"))[0] == _outcome(lambda: delattr(y, "f0"))[0]


@record(frozen=True, slots=True)
class Point:
    """A module-level record, so that pickle finds it."""

    x: int
    y: int = 0


@record
class Counter:
    hits: int = 0
    seen: list[str] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.hits += 1


def test_frozen_records_pickle_and_refuse_changes() -> None:
    p = Point(1, 2)
    assert pickle.loads(pickle.dumps(p)) == p
    assert {p: "a"}[Point(1, 2)] == "a"
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    assert dataclasses.replace(p, y=5) == Point(1, 5)
    assert Point.__init__.__qualname__ == "Point.__init__"


def test_a_plain_subclass_of_a_frozen_record_sets_its_own_attributes() -> None:
    class Labelled(Point):
        def __init__(self, x: int, label: str) -> None:
            super().__init__(x)
            self.label = label

    p = Labelled(1, "a")
    assert (p.x, p.label) == (1, "a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2  # type: ignore[misc]


def test_post_init_and_fresh_factories() -> None:
    a, b = Counter(), Counter()
    a.seen.append("x")
    assert (a.hits, b.seen) == (1, [])
    with pytest.raises(TypeError):
        hash(a)


def test_what_a_record_does_not_take() -> None:
    with pytest.raises(TypeError, match="kw_only"):

        @record
        class Keyed:
            x: int = dataclasses.field(kw_only=True)

    with pytest.raises(TypeError, match="InitVar"):

        @record
        class Passed:
            x: dataclasses.InitVar[int]
