"""Lazy re-exports for bugbout's public modules (``bugbout``, ``bugbout.judges``, ...).

A public module names each of its names' defining modules and gets a module
``__getattr__`` that imports one the first time the name is used, so importing the
public module itself loads nothing of the pipeline.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    module: str, exports: Mapping[str, str], renamed: Mapping[str, str] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of public module ``module``.

    ``exports`` maps each public name to ``"defining.module"`` (the same name there) or
    ``"defining.module:other_name"``; ``renamed`` maps old names to new ones, still
    importable with a ``DeprecationWarning``.
    """
    old_names = dict(renamed or {})

    def __getattr__(name: str) -> Any:
        """Import a public name's module the first time the name is used."""
        if name in old_names:
            import warnings

            new = old_names[name]
            warnings.warn(f"{name} is now {new}; import that", DeprecationWarning, stacklevel=2)
            return __getattr__(new)
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        defining, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(defining), attribute or name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__


def moved(old: str, public: str, private: str) -> Callable[[str], Any]:
    """Warn that module ``old`` was removed, and return its ``__getattr__``: a name comes
    from the public module that replaces it, else from the private one it became."""
    import warnings

    warnings.warn(
        f"{old} is private and gone; import {public}, the stable API", DeprecationWarning, 3
    )

    def __getattr__(name: str) -> Any:
        for module in (public, private):
            found = importlib.import_module(module)
            if hasattr(found, name):
                return getattr(found, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}; see {public}")

    return __getattr__
