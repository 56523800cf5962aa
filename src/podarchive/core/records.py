"""``@record``: ``@dataclass(frozen=True, slots=True)``, built at about half the cost. Leaf.

CPython 3.11's dataclass compiles each method it writes from source on its own: six
compilations a frozen class, most of a millisecond, paid at every start-up for each of the
thirty-odd types of :mod:`podarchive.core.types` (#30: a third of what a cron run of
unchanged feeds spends importing podarchive). :func:`record` lets the dataclass machinery do
what costs little (fields, ``__slots__``, ``__match_args__``: it writes no method then) and
writes the same six methods as one compiled source: ``__init__``, ``__repr__``, ``__eq__``
and ``__hash__`` over the compared fields, ``__setattr__``/``__delattr__`` raising
:class:`dataclasses.FrozenInstanceError`, and the pickling state of a frozen slotted
dataclass. :func:`dataclasses.fields`, :func:`~dataclasses.replace` and
:func:`~dataclasses.asdict` work as on any dataclass; ``tests/test_records.py`` holds the
two to the same behaviour. What dataclass would do differently it refuses: keyword-only
fields or fields left out of ``__init__``, ``__post_init__``, a class without a docstring
(dataclass would make one from the signature), a field named ``self``, subclassing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, cast, dataclass_transform

T = TypeVar("T")


class _Factory:
    """The default of a field with a default_factory: make one (shown as dataclass shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: type[T]) -> type[T]:
    """``cls`` as ``@dataclass(frozen=True, slots=True)`` makes it, its methods compiled once."""
    if not cls.__doc__ or hasattr(cls, "__post_init__") or cls.__bases__ != (object,):
        raise TypeError(f"{cls.__name__}: @record needs a docstring, no __post_init__, no base")
    made: Any = dataclasses.dataclass(slots=True, init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(made)
    if any(f.kw_only or not f.init or f.name == "self" for f in fields):
        raise TypeError(f"{cls.__name__}: @record takes positional __init__ fields only")
    scope: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    for name, fn in _methods(fields, scope).items():
        fn.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, fn)
    made.__setattr__, made.__delattr__ = _frozen_setattr, _frozen_delattr
    made.__getstate__, made.__setstate__ = _getstate, _setstate
    return cast("type[T]", made)


def _methods(
    fields: tuple[dataclasses.Field[Any], ...], scope: dict[str, Any]
) -> dict[str, Callable[..., Any]]:
    """The four methods dataclass writes from source (as it writes them), compiled together."""
    params, sets = ["self"], []
    for f in fields:
        value = f.name
        if f.default is not dataclasses.MISSING:
            scope[f"_dflt_{f.name}"] = f.default
            params.append(f"{f.name}=_dflt_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_make_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_FACTORY")
            value = f"_make_{f.name}() if {f.name} is _FACTORY else {f.name}"
        else:
            params.append(f.name)
        sets.append(f"    _set(self, {f.name!r}, {value})\n")
    shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields if f.repr)
    compared = [f.name for f in fields if f.compare]
    mine = "".join(f"self.{name}," for name in compared)
    theirs = "".join(f"other.{name}," for name in compared)
    source = (
        f"def __init__({', '.join(params)}):\n{''.join(sets) or '    pass'}\n"
        f'def __repr__(self):\n    return self.__class__.__qualname__ + f"({shown})"\n'
        "def __eq__(self, other):\n"
        "    if other.__class__ is self.__class__:\n"
        f"        return ({mine}) == ({theirs})\n"
        "    return NotImplemented\n"
        f"def __hash__(self):\n    return hash(({mine}))\n"
    )
    exec(source, scope)  # noqa: S102 - our own source, from the class's field names
    scope["__init__"].__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return {name: scope[name] for name in ("__init__", "__repr__", "__eq__", "__hash__")}
