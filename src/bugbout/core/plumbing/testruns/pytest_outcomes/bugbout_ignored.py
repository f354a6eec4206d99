"""The paths named on pytest's command line that the project's own run leaves out, for
``bugbout_outcomes``.

pytest never asks ``pytest_ignore_collect`` of a path named on its command line: a
``conftest.py`` that leaves a test file out with ``collect_ignore`` (on a Python too old
for it, say) does not leave it out when bugbout names that file. Here each named path is
asked as the project's full run asks it, before pytest collects anything: each directory
from the rootdir down to it, then the path itself, with the conftests in use there. A
path left out is taken off the command line, with why.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+,
pytest 2.7+: ``path`` is a ``py.path`` before pytest 7, ``collection_path`` a
``pathlib`` path since).
"""

import fnmatch
import os
import sys


def left_out(session):
    """Each path on ``session``'s command line its project's full run would not collect,
    relative to the rootdir, with why; those are taken off the command line."""
    config = session.config
    root = str(getattr(config, "rootpath", None) or config.rootdir)
    invoked = getattr(getattr(config, "invocation_params", None), "dir", None)
    here = str(invoked or os.getcwd())
    kept, found, asked, named = [], {}, {}, {}  # a file's tests may be named one by one
    for arg in config.args:
        given = str(arg).split("::", 1)[0]
        if given not in named:
            path = os.path.normpath(os.path.join(here, given))
            where = _ignored(session, root, path, asked)
            name = os.path.relpath(path, root).replace(os.sep, "/")
            named[given] = (name, where and _why(config, root, where))
        name, why = named[given]
        if why:
            found[name] = why
        else:
            kept.append(arg)
    config.args = kept
    return sorted(found.items())


def _ignored(session, root, path, asked):
    """The first of ``path`` and the directories above it, up to the rootdir, that the
    project's hooks ignore; ``None`` when none is (or the hooks fail: pytest then does
    what it does). ``asked`` keeps each path's answer."""
    if not os.path.exists(path) or not path.startswith(root.rstrip(os.sep) + os.sep):
        return None
    parts = os.path.relpath(path, root).split(os.sep)
    try:
        for depth in range(1, len(parts) + 1):
            step = os.path.join(root, *parts[:depth])
            if step not in asked:
                asked[step] = _asks(session, step)
            if asked[step]:
                return step
    except Exception:
        return None
    return None


def _asks(session, path):
    """Whether ``pytest_ignore_collect`` says so of ``path``, asked through the hooks of
    the conftests in use in its directory, as pytest's own walk asks."""
    config = session.config
    directory = os.path.dirname(path)
    modern = "collection_path" in _arguments()
    _load_conftests(config, directory)
    proxy = getattr(session, "gethookproxy", None)
    hook = proxy(_path(directory, modern)) if proxy is not None else config.hook
    name = "collection_path" if modern else "path"
    # pytest 3.0 to 4.5 count each path the hook is asked of as seen, and a path seen
    # again as a duplicate to leave out: what is asked here is forgotten.
    seen = getattr(config.pluginmanager, "_duplicatepaths", None)
    before = set(seen) if seen is not None else set()
    try:
        return bool(hook.pytest_ignore_collect(config=config, **{name: _path(path, modern)}))
    finally:
        if seen is not None:
            seen.clear()
            seen.update(before)


def _arguments():
    """The arguments of the running pytest's ``pytest_ignore_collect`` specification."""
    from _pytest import hookspec

    return _parameters(hookspec.pytest_ignore_collect)


def _parameters(function):
    code = function.__code__
    return code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]


def _path(path, modern):
    if modern:
        import pathlib

        return pathlib.Path(path)
    import py

    return py.path.local(path)


def _load_conftests(config, directory):
    """The conftests of ``directory`` and above, loaded (pytest 8 and later load them only
    as they collect each directory; before, asking for them loads them)."""
    manager = config.pluginmanager
    load = getattr(manager, "_loadconftestmodules", None)
    if load is None:
        return
    import pathlib

    options = {"rootpath": config.rootpath}
    if "consider_namespace_packages" in _parameters(load):  # pytest 8.1 and later
        options["consider_namespace_packages"] = config.getini("consider_namespace_packages")
    load(pathlib.Path(directory), config.getoption("importmode"), **options)


def _why(config, root, path):
    """What leaves ``path`` out (``tests/conftest.py's collect_ignore``: the deepest
    conftest above it whose list names it, or that has a hook for it), on this Python."""
    found = "the project's pytest options or pytest's own rules (norecursedirs)"
    real = os.path.realpath(path)
    for module in _conftests(config):
        directory = os.path.dirname(os.path.realpath(module.__file__))
        if not real.startswith(directory.rstrip(os.sep) + os.sep):
            continue
        listed = [
            os.path.join(directory, str(entry)) for entry in _listed(module, "collect_ignore")
        ]
        globs = [
            os.path.join(directory, str(entry)) for entry in _listed(module, "collect_ignore_glob")
        ]
        if any(os.path.realpath(entry) == real for entry in listed):
            what = "collect_ignore"
        elif any(fnmatch.fnmatch(path, entry) for entry in globs):
            what = "collect_ignore_glob"
        elif callable(getattr(module, "pytest_ignore_collect", None)):
            what = "pytest_ignore_collect"
        else:
            continue
        found = "%s's %s" % (os.path.relpath(module.__file__, root).replace(os.sep, "/"), what)
        break
    return "not collected: %s leaves it out on Python %d.%d, as in the project's own test run" % (
        found,
        sys.version_info[0],
        sys.version_info[1],
    )


def _listed(module, name):
    value = getattr(module, name, None)
    return list(value) if isinstance(value, (list, tuple)) else []


def _conftests(config):
    """The conftest modules pytest loaded, the deepest first."""
    manager = config.pluginmanager
    plugins = manager.get_plugins() if hasattr(manager, "get_plugins") else manager.getplugins()
    found = [
        plugin
        for plugin in plugins
        if os.path.basename(str(getattr(plugin, "__file__", "") or "")).startswith("conftest.py")
    ]
    return sorted(found, key=lambda module: -len(os.path.realpath(module.__file__)))
