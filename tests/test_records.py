"""``@record`` (podarchive.core.records) behaves as ``@dataclass(frozen=True, slots=True)``.

Every record of the modules that use it is compared with the same class body built by the
real dataclass decorator: fields, signature, ``__match_args__``, and what instances do
(equality, hashing, repr, pickling, copies, ``replace``, the frozen errors) (#30).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from podarchive.core import types as real
from podarchive.core.records import record

#: The modules whose frozen dataclasses are records.
MODULES = (
    "podarchive.core.types",
    "podarchive.rules.media",
    "podarchive.rules.push",
    "podarchive.update.files",
    "podarchive.update.pages",
    "podarchive.update.media_feed",
)
IMPORT = "from podarchive.core.records import record\n"


def _records(name: str) -> list[str]:
    module = importlib.import_module(name)
    return [
        f"{name}:{attribute}"
        for attribute, value in vars(module).items()
        if isinstance(value, type)
        and dataclasses.is_dataclass(value)
        and value.__module__ == name
        and value.__setattr__ is real.FeedState.__setattr__  # a record, not a plain dataclass
    ]


RECORDS = [entry for name in MODULES for entry in _records(name)]
_references: dict[str, types.ModuleType] = {}


def _reference(name: str) -> types.ModuleType:
    """Module ``name`` with each @record a real ``@dataclass(frozen=True, slots=True)``."""
    if name not in _references:
        text = Path(importlib.import_module(name).__file__ or "").read_text(encoding="utf-8")
        source = text.replace(
            IMPORT,
            "from dataclasses import dataclass\nrecord = dataclass(frozen=True, slots=True)\n",
        )
        assert source != text
        module = types.ModuleType(f"reference_{name.replace('.', '_')}")
        sys.modules[module.__name__] = module  # dataclass reads the module of string annotations
        try:
            exec(compile(source, f"{module.__name__}.py", "exec"), module.__dict__)
        finally:
            del sys.modules[module.__name__]
        _references[name] = module
    return _references[name]


def _values(cls: type, tag: str) -> dict[str, Any]:
    return {f.name: f"{f.name}-{tag}" for f in dataclasses.fields(cls)}


def _shape(cls: type) -> list[tuple[Any, ...]]:
    return [
        (f.name, f.default, f.default_factory, f.compare, f.repr, f.hash, f.init, f.kw_only)
        for f in dataclasses.fields(cls)
    ]


def test_every_type_is_a_record_and_compared() -> None:
    assert len(RECORDS) >= 37
    assert {"podarchive.core.types:FeedState", "podarchive.update.media_feed:MediaFeed"} <= set(
        RECORDS
    )
    assert "podarchive.rules.media:Budget" not in RECORDS  # a plain (mutable) dataclass


@pytest.mark.parametrize("entry", RECORDS)
def test_a_record_is_what_dataclass_makes(entry: str) -> None:
    module, name = entry.split(":")
    mine = getattr(importlib.import_module(module), name)
    theirs = getattr(_reference(module), name)
    assert _shape(mine) == _shape(theirs)
    assert str(inspect.signature(mine)) == str(inspect.signature(theirs))
    assert mine.__match_args__ == theirs.__match_args__
    assert (mine.__slots__, mine.__doc__) == (theirs.__slots__, theirs.__doc__)
    assert not hasattr(mine(**_values(mine, "a")), "__dict__")
    one, same, other = (mine(**_values(mine, t)) for t in ("a", "a", "b"))
    ref_one, ref_other = theirs(**_values(theirs, "a")), theirs(**_values(theirs, "b"))
    assert repr(one) == repr(ref_one)
    assert (one == same, one == other, one != other) == (True, ref_one == ref_other, True)
    assert one.__eq__(ref_one) is NotImplemented  # another class: never equal
    assert hash(one) == hash(same) == hash(ref_one)
    for twin in (pickle.loads(pickle.dumps(one)), copy.copy(one), copy.deepcopy(one)):
        assert (twin == one, twin is one) == (True, False)
    first = dataclasses.fields(mine)[0].name
    changed = dataclasses.replace(one, **{first: "new"})
    assert getattr(changed, first) == "new"
    assert dataclasses.astuple(one) == dataclasses.astuple(ref_one)
    for attempt in (lambda o: setattr(o, first, 1), lambda o: delattr(o, first)):
        with pytest.raises(dataclasses.FrozenInstanceError) as got:
            attempt(one)
        with pytest.raises(dataclasses.FrozenInstanceError) as expected:
            attempt(ref_one)
        assert str(got.value) == str(expected.value)


def test_defaults_and_factories_are_dataclass_s() -> None:
    assert real.FetchResult("u", "v", 304).headers == {}
    a, b = real.FetchResult("u", "v", 304), real.FetchResult("u", "v", 304)
    assert a.headers is not b.headers  # a new dict each
    assert real.Enclosure("u") == real.Enclosure("u", None, None)
    # fields left out of comparison are left out of equality and hashing
    notes = real.PageNotes("h", "t", (), "x", method="a")
    assert notes == real.PageNotes("h", "t", (), "x", method="b")
    assert hash(real.PageHow("m", "e", 0.5)) != hash(real.PageHow("n", "e", 0.5))


def test_record_refuses_what_it_would_build_differently() -> None:
    class NoDoc:
        a: int

    class WithPostInit:
        """Doc."""

        a: int

        def __post_init__(self) -> None: ...

    class KeywordOnly:
        """Doc."""

        a: int = dataclasses.field(kw_only=True)

    for cls in (NoDoc, WithPostInit, KeywordOnly):
        with pytest.raises(TypeError):
            record(cls)
