"""What bugbout's pytest plugins share: pytest's hook marks and node ids, code and paths.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+).
"""

import functools
import os
import stat
import types


def code_of(value):
    function = getattr(value, "__func__", value)
    return getattr(function, "__code__", None)


def hookimpl(**options):
    """A hook implementation's options (``hookwrapper=True``, an old-style wrapper: pytest
    3 knows no other), marked as the running pytest understands: before 2.8, as the
    function's attributes."""
    import pytest

    if hasattr(pytest, "hookimpl"):
        return pytest.hookimpl(**options)

    def mark(function):
        for name, value in options.items():
            setattr(function, name, value)
        return function

    return mark


def modern_nodeid(nodeid):
    """``nodeid`` as pytest 4 and later write it: pytest 3 puts a ``()`` between a class
    and its methods."""
    return nodeid.replace("::()::", "::")


def inside(path, directory):
    path = real(path)
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


@functools.lru_cache(maxsize=None)
def real(path):
    """``os.path.realpath(path)``, once a path: a session asks of the same few files
    hundreds of times (a run's hooks, its classes' modules). A file that is no link is
    its folder's real path and its name, and a folder is resolved once: a session's
    files lie in a few folders."""
    folder, name = os.path.split(path)
    if not folder or name in ("", ".", ".."):
        return os.path.realpath(path)
    try:
        linked = stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):  # missing, or not a path the system takes
        return os.path.realpath(path)
    return os.path.realpath(path) if linked else os.path.join(_folder(folder), name)


@functools.lru_cache(maxsize=None)
def _folder(folder):
    return os.path.realpath(folder)


def python_level(member):
    """Whether ``member`` is code the class itself gives (not a builtin's slot)."""
    return member is not None and not isinstance(
        member,
        (types.BuiltinFunctionType, type(object.__eq__), type(str.join), type(None)),
    )
