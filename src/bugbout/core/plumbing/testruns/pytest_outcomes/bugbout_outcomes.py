"""A pytest plugin that reports every test's outcome to bugbout, by exact node id, and
says whether the code under test meddled with how pytest reports.

It is loaded with ``-p bugbout_outcomes`` from a directory put on ``PYTHONPATH``, in
the project's own environment, so it must run on every Python and pytest bugbout
supports (Python 3.6+, pytest 3+): no annotations, f-strings only where 3.6 allows.

Each report is one JSON line written to the file descriptor ``BUGBOUT_OUTCOMES_FD``, so
it works even where the tests may not write files. bugbout writes a one-line key at the
start of that file; this module reads it and blanks it when it is imported, before
pytest imports any conftest or test module, so the code under test never sees it. Every
line carries its sequence number and an HMAC under that key: lines written by anything
else do not verify. At the end of the session a last line sums up how many reports were
written and what was found changed in pytest since this module was imported:

- a function or class of pytest's running and reporting modules (or of pluggy's), or of
  what tests compare with (``pytest.approx``, ``unittest``'s assertions, ``math``,
  ``operator``, the builtins), that was replaced, or whose code was swapped, or a
  module replaced in ``sys.modules``; a builtin type's comparison given Python code;
- a hook implementation whose code lies in the package under test (under one of the
  directories in ``BUGBOUT_SOURCE_DIRS``, a JSON list relative to the rootdir): the
  package is not a pytest plugin. Its test files are the project's own setup, not code
  under test: a ``conftest.py``, a test module (``test_*.py``, ``*_test.py``) or a file in
  the tests folder (``BUGBOUT_TESTS_DIR``, relative to the rootdir), as the package keeps
  its tests inside it;
- this module's own hook implementations replaced or removed.

With ``BUGBOUT_IMPOSTORS`` set to ``1`` (a run on a patch's edits, where bugbout tells the
patch's classes from the project's), the summary also lists the classes whose values may
equal anything (``bugbout_impostors``); elsewhere nothing reads them and none are kept.

A subtest's report (pytest 9's ``subtests``, the ``pytest-subtests`` plugin) is marked
``subtest``: one test has as many as it has subtests.

With ``BUGBOUT_ROOTDIR`` set (a pytest before 3.5, which takes no ``--rootdir``), the
rootdir is fixed at the working directory before any conftest is loaded. With
``BUGBOUT_DROP_ADDOPTS`` set (a pytest before 3.0, which takes no ``-o``), the ini file's
``addopts`` are taken off the command line before pytest parses it (the early options
among them, ``-p`` and ``--confcutdir``, have been read by then).

A path named on the command line that the project's own run leaves out (a
``conftest.py``'s ``collect_ignore``, ``bugbout_ignored``) is not collected: it is reported
as a ``collect`` line whose outcome is ``ignored``, with why.

A ``start`` line before each test tells which one was running if pytest dies; the node
ids in ``BUGBOUT_DESELECT`` (a JSON list: tests that crashed pytest in an earlier run)
are deselected, exactly, and so are those listed in the file open as ``BUGBOUT_SKIP_FD``
(a JSON list: tests a patch cannot affect), read and closed on import.

The code under test runs in this process and can defeat any check made here; bugbout's
canary tests are the ground check (see ``bugbout.core.plumbing.tampering.canaries``).
"""

import fnmatch
import gc
import hashlib
import hmac
import json
import os
import sys
import types

from bugbout_cache import give_cache
from bugbout_ignored import left_out
from bugbout_impostors import Impostors, code_of, hookimpl, inside, modern_nodeid, python_level

FD_VARIABLE = "BUGBOUT_OUTCOMES_FD"
SOURCE_VARIABLE = "BUGBOUT_SOURCE_DIRS"
TESTS_VARIABLE = "BUGBOUT_TESTS_DIR"
ROOTDIR_VARIABLE = "BUGBOUT_ROOTDIR"
ADDOPTS_VARIABLE = "BUGBOUT_DROP_ADDOPTS"
IMPOSTORS_VARIABLE = "BUGBOUT_IMPOSTORS"
TEST_MODULES = ("test_*.py", "*_test.py", "conftest.py")
SUBTEST_REPORTS = ("SubtestReport", "SubTestReport")
"""pytest 9's class of a subtest's report, and the ``pytest-subtests`` plugin's."""
KEY_PREFIX = b"bugbout-key "

WATCHED_MODULES = (
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.python",
    "_pytest.main",
    "_pytest.skipping",
    "_pytest.outcomes",
    "_pytest.nodes",
    "_pytest.unittest",
    "pluggy",
    "_pytest.vendored_packages.pluggy",
    "pluggy._callers",
    "pluggy._hooks",
    "pluggy._manager",
    "pluggy.callers",
    "pluggy.hooks",
    "pluggy.manager",
    "pytest",
    "_pytest.python_api",
    "_pytest.raises",
    "_pytest.assertion.rewrite",
    "_pytest.assertion.util",
    "unittest.case",
    "builtins",
    "operator",
    "math",
)
"""Where pytest makes, reports and logs a test's outcome, and what the tests compare
with (``approx``, ``raises``, ``assertEqual``, ``isclose``, the builtins): the modules
that exist in the running versions are watched."""
GROWING = ("builtins",)
"""Watched modules that may gain names (``gettext.install`` adds ``_``)."""
BUILTINS = (object, int, float, complex, str, bytes, tuple, list, dict, set, frozenset, bool)
COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__")


def _read_key(fd):
    """The key bugbout wrote at the start of the outcome file, blanked once read."""
    try:
        line = os.pread(fd, 256, 0).split(b"\n", 1)[0]
        if not line.startswith(KEY_PREFIX):
            return None
        os.pwrite(fd, b" " * len(line), 0)
    except OSError:  # not a file: the lines go unsigned, and bugbout rejects them
        return None
    return line[len(KEY_PREFIX) :]


CALLABLES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    type,
    classmethod,
    staticmethod,
    property,
)


def _codes(value):
    """The code objects behind a function, method or property (a class: none)."""
    if isinstance(value, property):
        return tuple(code_of(f) for f in (value.fget, value.fset, value.fdel) if f is not None)
    if isinstance(value, type):
        return ()
    return (code_of(value),)


def _origin(value):
    """The file ``value``'s code (a class: its module, else its methods' one file) comes
    from; ``None`` if it has none. (pytest before 3.0 replaces ``AssertionError`` with a
    class of its own that it says is the builtins'.)"""
    if isinstance(value, type):
        found = getattr(sys.modules.get(value.__module__), "__file__", None)
        methods = [m for m in vars(value).values() if isinstance(m, types.FunctionType)]
        files = {getattr(code_of(m), "co_filename", None) for m in methods}
        return found or (files.pop() if len(files) == 1 else None)
    files = [getattr(code, "co_filename", None) for code in _codes(value)]
    return files[0] if files and all(files) else None


def _snapshot(module):
    """Every function and class of ``module`` and every method and property of its
    classes, with the code objects behind them: what a monkeypatch changes."""
    seen = {}
    for name, value in list(vars(module).items()):
        if isinstance(value, CALLABLES):
            seen[name] = (value, _codes(value))
        if isinstance(value, type) and value.__module__ == module.__name__:
            for attribute, member in list(vars(value).items()):
                if isinstance(member, CALLABLES):
                    seen[name + "." + attribute] = (member, _codes(member))
    return seen


def _same(old, new):
    return (
        old[0] is new[0]
        and len(old[1]) == len(new[1])
        and all(a is new[1][i] for i, a in enumerate(old[1]))
    )


def _own_directories():
    """The directories (or, for a one-file module, the file) of pytest's and pluggy's own
    code: changes made from there are pytest's (plugins such as ``legacypath`` add to its
    classes as they configure). pytest before 5.4 is a module ``pytest.py`` beside every
    other distribution: its folder is not pytest's."""
    found = []
    for name in ("_pytest", "pytest", "pluggy"):
        module = sys.modules.get(name)
        location = getattr(module, "__file__", None)
        if location:
            package = os.path.basename(location).startswith("__init__.")
            found.append(os.path.realpath(os.path.dirname(location) if package else location))
    return found


class _Function(object):
    """A hook implementation of pytest before 2.8: only its function."""

    def __init__(self, function):
        self.function = function


def _hookimpls(caller):
    """A hook caller's implementations (pluggy before 0.6, vendored in pytest before 3.3,
    keeps them in two lists; pytest before 2.8 keeps the functions)."""
    if hasattr(caller, "get_hookimpls"):
        return caller.get_hookimpls()
    if hasattr(caller, "_nonwrappers"):
        return list(caller._nonwrappers) + list(caller._wrappers)
    return [_Function(function) for function in caller.methods]


def _callers(config):
    """Each hook's name and caller, from ``config.hook``."""
    found = []
    for name in sorted(vars(config.hook)):
        caller = getattr(config.hook, name)
        if any(hasattr(caller, a) for a in ("get_hookimpls", "_nonwrappers", "methods")):
            found.append((name, caller))
    return found


class _Watch(object):
    """What this module saw when it was imported, and the reports it wrote since."""

    def __init__(self, fd, key):
        self.fd = fd
        self.key = key
        self.stream = None
        self.sequence = 0
        self.modules = {}
        for name in WATCHED_MODULES:
            try:
                __import__(name)
            except ImportError:
                continue
            module = sys.modules[name]
            self.modules[name] = (module, _snapshot(module))
        self.functions = {}
        self.extra = []

    def emit(self, record):
        if self.stream is None:
            self.stream = os.fdopen(self.fd, "a", encoding="utf-8")
        record = dict(record, seq=self.sequence)
        self.sequence += 1
        line = json.dumps(record, sort_keys=True)
        if self.key is not None:  # the signature last: the body is the line without it
            mac = hmac.new(self.key, line.encode("utf-8"), hashlib.sha256).hexdigest()
            line = line[:-1] + ', "mac": "' + mac + '"}'
        self.stream.write(line + "\n")
        self.stream.flush()

    def changes(self, config):
        """What changed in pytest since import, one sentence each."""
        found = []
        for name, (module, before) in sorted(self.modules.items()):
            if sys.modules.get(name) is not module:
                found.append("module %s was replaced in sys.modules" % name)
                continue
            after = _snapshot(module)
            own = _own_directories()
            pytests = set()  # classes pytest replaced: the old one's members are gone
            for attribute in sorted(set(before) | set(after)):
                old, new = before.get(attribute), after.get(attribute)
                if new is None:
                    if attribute.split(".", 1)[0] not in pytests:
                        found.append("%s.%s was removed" % (name, attribute))
                    continue
                if (old is not None and _same(old, new)) or (old is None and name in GROWING):
                    continue
                origin = _origin(new[0])
                if origin is not None and any(inside(origin, d) for d in own):
                    pytests.update([attribute] if isinstance(new[0], type) else [])
                else:
                    found.append(
                        "%s.%s was %s from %s"
                        % (
                            name,
                            attribute,
                            "added" if old is None else "replaced",
                            origin or "code without a file",
                        )
                    )
        found.extend(_builtin_comparisons())
        found.extend(_foreign_hooks(config))
        found.extend(_overridden(config, own))
        for hook_name, function in sorted(self.functions.items()):
            caller = getattr(config.hook, hook_name, None)
            impls = _hookimpls(caller) if caller is not None else []
            if not any(impl.function is function for impl in impls):
                found.append("bugbout's %s hook was removed or replaced" % hook_name)
        return found


def _builtin_comparisons():
    """Comparisons of the builtins given Python code (through their type's dictionary,
    which only a walk of the interpreter's objects reaches)."""
    return [
        "builtins.%s.%s was replaced" % (klass.__name__, name)
        for klass in BUILTINS
        for name in COMPARISONS
        if python_level(vars(klass).get(name))
    ]


def _overridden(config, own):
    """Functions set on the plugin manager or a hook caller itself (not on their class)
    by anything but pytest's and pluggy's own code: how a hook call can be diverted."""
    found = []
    holders = [("pluginmanager", config.pluginmanager)] + _callers(config)
    for label, holder in holders:
        for attribute, value in _attributes(holder):
            if not isinstance(value, (types.FunctionType, types.MethodType)):
                continue
            origin = _origin(getattr(value, "__func__", value))
            if origin is None or not any(inside(origin, d) for d in own):
                found.append(
                    "%s.%s was set to code from %s" % (label, attribute, origin or "nowhere")
                )
    return found


def _attributes(holder):
    """An object's own attributes, in its ``__dict__`` and its classes' ``__slots__``."""
    names = set(getattr(holder, "__dict__", {}))
    for klass in type(holder).__mro__:
        slots = vars(klass).get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
    found = []
    for name in sorted(names):
        try:
            found.append((name, object.__getattribute__(holder, name)))
        except AttributeError:
            continue
    return found


def _foreign_hooks(config):
    """Hook implementations whose code lies in the package under test."""
    relative = json.loads(os.environ.get(SOURCE_VARIABLE) or "[]")
    if not relative:
        return []
    root = str(getattr(config, "rootpath", None) or config.rootdir)
    sources = [os.path.realpath(os.path.join(root, path)) for path in relative]
    tests = os.path.realpath(os.path.join(root, os.environ.get(TESTS_VARIABLE) or "tests"))
    found = []
    for hook_name, caller in _callers(config):
        for impl in _hookimpls(caller):
            code = code_of(impl.function)
            module = sys.modules.get(getattr(impl.function, "__module__", None) or "")
            files = [getattr(code, "co_filename", "") or "", getattr(module, "__file__", "") or ""]
            if code is None:
                files.append("(no Python code)")
            if all(_is_test_file(f, tests) for f in files if f):
                continue
            if any(f and (f.startswith("(") or any(inside(f, s) for s in sources)) for f in files):
                found.append(
                    "%s is implemented in the package under test (%s)"
                    % (hook_name, next(f for f in files if f))
                )
    return found


def _is_test_file(path, tests):
    """Whether bugbout classes ``path`` as a test file (as its miner does): a conftest,
    a test module, or a file in the tests folder ``tests``."""
    if path.startswith("("):
        return False
    name = os.path.basename(path)
    return inside(path, tests) or any(fnmatch.fnmatchcase(name, p) for p in TEST_MODULES)


def _first_line(report, last=True):
    """The report's error line (an ``E`` line: the last for a collection error, the first
    for a failing test), else its last line; at most 500 characters."""
    text = str(getattr(report, "longrepr", "") or "")
    lines = [line for line in text.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    if errors:
        return (errors[-1] if last else errors[0])[:500]
    return (lines[-1] if lines else "").strip()[:500]


def _missing_module(report):
    """A collection error's first line; for a missing module, with the file that imports
    it (``... No module named 'yaml' (tests/base.py:3)``), relative to the rootdir."""
    message = _first_line(report)
    if "No module named" not in message:
        return message
    frames = [
        line.split(": in ", 1)[0]
        for line in str(getattr(report, "longrepr", "") or "").splitlines()
        if ".py:" in line and ": in " in line and not line.startswith(" ")
    ]
    if not frames:
        return message
    where = frames[-1]
    here = os.getcwd() + os.sep
    return "%s (%s)" % (message, where[len(here) :] if where.startswith(here) else where)


def _read_skipped():
    """The node ids listed in the file ``BUGBOUT_SKIP_FD`` names (none when unreadable)."""
    try:
        fd = int(os.environ.get("BUGBOUT_SKIP_FD", ""))
    except ValueError:
        return frozenset()
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        with os.fdopen(fd, "rb") as stream:
            names = json.loads(stream.read().decode("utf-8") or "[]")
    except (OSError, ValueError):
        return frozenset()
    return frozenset(name for name in names if isinstance(name, str))


_fd = int(os.environ[FD_VARIABLE])
_watch = _Watch(_fd, _read_key(_fd))
_skipped = _read_skipped()
_probing = os.environ.get(IMPOSTORS_VARIABLE) == "1"  # read before any conftest runs
_impostors = None
del _fd


def pytest_runtest_logstart(nodeid, location):
    _watch.emit({"nodeid": modern_nodeid(nodeid), "when": "start"})


@hookimpl(tryfirst=True)
def pytest_collection(session):
    for name, why in left_out(session):
        _watch.emit({"nodeid": name, "when": "collect", "outcome": "ignored", "message": why})


def pytest_collection_modifyitems(config, items):
    names = _skipped | set(json.loads(os.environ.get("BUGBOUT_DESELECT") or "[]"))
    kept, deselected, seen = [], [], set()
    for item in items:  # pytest before 3.10 collects a file named twice twice
        name = modern_nodeid(item.nodeid)
        if name in names:
            deselected.append(item)
        elif name not in seen:
            seen.add(name)
            kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = kept


def pytest_runtest_logreport(report):
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    record = {"nodeid": modern_nodeid(report.nodeid), "when": report.when, "outcome": outcome}
    if type(report).__name__ in SUBTEST_REPORTS:
        record["subtest"] = True
    if report.failed:
        record["message"] = _first_line(report, last=False)
    _watch.emit(record)


def pytest_collectreport(report):
    if report.failed:
        _watch.emit(
            {
                "nodeid": modern_nodeid(report.nodeid),
                "when": "collect",
                "outcome": "error",
                "message": _missing_module(report),
            }
        )
    elif report.skipped and report.nodeid:  # skipped whole: pytest.importorskip, a skip
        _watch.emit(
            {
                "nodeid": modern_nodeid(report.nodeid),
                "when": "collect",
                "outcome": "skipped",
                "message": _skip_reason(report),
            }
        )


def _skip_reason(report):
    """Why a module was skipped as a whole: the first line of its skip's reason."""
    longrepr = report.longrepr
    text = str(longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr)
    text = text[len("Skipped: ") :] if text.startswith("Skipped: ") else text
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


if os.environ.get(ROOTDIR_VARIABLE):  # only then: a hook pytest 3.5 and later need not run

    def pytest_load_initial_conftests(early_config):
        import py

        early_config.rootdir = py.path.local(os.getcwd())


if os.environ.get(ADDOPTS_VARIABLE):  # only then: pytest 8 has no such hook

    def pytest_cmdline_preparse(config, args):
        addopts = list(config.getini("addopts"))
        if args[: len(addopts)] == addopts:
            del args[: len(addopts)]


@hookimpl(tryfirst=True)
def pytest_configure(config):
    global _impostors
    give_cache(config)  # before any plugin configures: pytest-randomly reads it then
    if _probing:
        _impostors = Impostors(str(getattr(config, "rootpath", None) or config.rootdir))
        gc.callbacks.append(_impostors.on_collection)
    for hook_name in (
        "pytest_runtest_logstart",
        "pytest_collection",
        "pytest_runtest_logreport",
        "pytest_collectreport",
        "pytest_collection_modifyitems",
        "pytest_sessionfinish",
    ):
        _watch.functions[hook_name] = globals()[hook_name]


def pytest_sessionfinish(session):
    if _probing and (_impostors is None or _impostors.on_collection not in gc.callbacks):
        _watch.extra.append("bugbout's garbage collection callback was removed")
    _watch.emit(
        {
            "summary": {
                "reports": _watch.sequence,
                "changes": _watch.changes(session.config) + _watch.extra,
                "impostors": _impostors.found() if _impostors is not None else [],
            }
        }
    )
