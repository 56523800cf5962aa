"""Modules a parsing library imports but a run seldom uses, loaded on their first use (#30).

feedparser and Beautiful Soup import ``chardet`` (an encoding guesser: podarchive declares
its encodings, and turns feedparser's guessing off) and bs4 imports ``soupsieve`` (CSS
selectors, which podarchive never uses) at import time: about 11 and 7 MB of every process
that parses, measured on CPython 3.11. feedparser's ``http`` module (its URL fetching, never
used: podarchive gives it bytes) and the standard library's ``xml.sax.saxutils`` (which needs
it to open a URL) import ``urllib.request``, hence ``http.client`` and ``ssl``: 3.4 MB more
of every worker process (#30). :func:`defer` puts a stand-in in their place: the
library's ``import`` succeeds as before, and the first read of an attribute the stand-in
lacks imports the real module and makes the stand-in its copy; nothing behaves differently.

(``importlib.util.LazyLoader`` would not do on 3.11: the import statement itself reads the
lazy module's ``__spec__``, which loads it.)
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

#: What the parsing libraries import and podarchive does not use on its own paths.
SELDOM_USED = ("chardet", "soupsieve", "feedparser.http", "urllib.request")
#: Packages that import nothing, imported by :func:`defer` to hold a stand-in of theirs as an
#: attribute, for ``import urllib.request`` then ``urllib.request.x``. Others (feedparser)
#: must not be imported first: their own ``from . import http`` finds the stand-in in
#: ``sys.modules``, and :func:`attach` makes it their attribute once they are imported.
_EMPTY_PACKAGES = ("urllib",)


class Deferred(types.ModuleType):
    """A module's stand-in that imports it on the first read of an attribute it lacks."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr != "__path__":
            raise AttributeError(attr)  # dunder probes (copy, pickle, inspect) load nothing
        name = self.__name__
        if sys.modules.get(name) is self:
            del sys.modules[name]
        real = importlib.import_module(name)
        self.__dict__.update(real.__dict__)
        return getattr(real, attr)


def defer(*names: str) -> list[str]:
    """Put a :class:`Deferred` stand-in for each of ``names`` (a submodule's package is not
    imported for it), unless it is imported already or not installed; the names deferred
    now. A package's ``from . import name`` finds the stand-in in ``sys.modules``."""
    deferred = []
    for name in names:
        if name in sys.modules:
            continue
        spec = _spec(name)
        if spec is None:
            continue
        stand_in = Deferred(name)
        stand_in.__spec__ = spec
        sys.modules[name] = stand_in
        package, _, child = name.rpartition(".")
        if package in _EMPTY_PACKAGES:  # ``import a.b`` then reads ``a.b``: the stand-in
            setattr(importlib.import_module(package), child, stand_in)
        deferred.append(name)
    return deferred


def attach(package: types.ModuleType) -> None:
    """Make the deferred submodules of ``package`` (just imported) its attributes, as an
    import of them would have."""
    for name, module in list(sys.modules.items()):
        parent, _, child = name.rpartition(".")
        if isinstance(module, Deferred) and parent == package.__name__:
            package.__dict__.setdefault(child, module)


def _spec(name: str) -> importlib.machinery.ModuleSpec | None:
    """Where ``name`` would be imported from, without importing its package."""
    package, _, _ = name.rpartition(".")
    if not package:
        return importlib.util.find_spec(name)
    parent = _spec(package)
    if parent is None or parent.submodule_search_locations is None:
        return None
    return importlib.machinery.PathFinder.find_spec(name, parent.submodule_search_locations)
