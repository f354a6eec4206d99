"""What ``bugbout_outcomes`` finds changed in pytest at the end of a session, since the
plugin was imported (its module says what is watched and why): the functions and classes
of pytest's running and reporting modules and of what tests compare with, the builtins'
comparisons, the hook implementations in the package under test, the functions set on
the plugin manager or a hook caller, and bugbout's own hooks.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+,
pytest 3+).
"""

import fnmatch
import itertools
import json
import operator
import os
import sys
import types

from bugbout_shared import code_of, inside, python_level

SOURCE_VARIABLE = "BUGBOUT_SOURCE_DIRS"
TESTS_VARIABLE = "BUGBOUT_TESTS_DIR"
TEST_MODULES = ("test_*.py", "*_test.py", "conftest.py")
PLUGGY = (
    "pluggy",
    "_pytest.vendored_packages.pluggy",
    "pluggy._callers",
    "pluggy._hooks",
    "pluggy._manager",
    "pluggy.callers",
    "pluggy.hooks",
    "pluggy.manager",
)
"""pluggy's modules, vendored or not, in its versions' names: pytest imports its plugin
system before it loads any plugin, so those it runs on are loaded by then, and the
others (another version's names) are not looked for (a module not found is looked for
in every folder it could be in)."""
WATCHED_MODULES = (
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.python",
    "_pytest.main",
    "_pytest.skipping",
    "_pytest.outcomes",
    "_pytest.nodes",
    "_pytest.unittest",
    *PLUGGY,
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

_vars, _list, _map, _getattr, _all, _len = vars, list, map, getattr, all, len
_repeat, _is = itertools.repeat, operator.is_
"""What the watch reads modules with, held as they were when it was imported: code under
test that replaces a builtin (``vars``, ``all``) or ``operator.is_`` does not blind it."""
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
        methods = [m for m in _vars(value).values() if isinstance(m, types.FunctionType)]
        files = {getattr(code_of(m), "co_filename", None) for m in methods}
        return found or (files.pop() if len(files) == 1 else None)
    files = [getattr(code, "co_filename", None) for code in _codes(value)]
    return files[0] if files and all(files) else None


def _holders(value):
    """What ``value``'s code objects are read from (:func:`_codes`): a function, a
    method's function, a property's accessors."""
    if isinstance(value, property):
        return [f for f in (value.fget, value.fset, value.fdel) if f is not None]
    if isinstance(value, type):
        return []
    return [getattr(value, "__func__", value)]


def _snapshot(module):
    """Every function and class of ``module`` and every method and property of its
    classes, with the code objects behind them: what a monkeypatch changes."""
    seen = {}
    for name, value in _list(_vars(module).items()):
        if isinstance(value, CALLABLES):
            seen[name] = (value, _codes(value))
        if isinstance(value, type) and value.__module__ == module.__name__:
            for attribute, member in _list(_vars(value).items()):
                if isinstance(member, CALLABLES):
                    seen[name + "." + attribute] = (member, _codes(member))
    return seen


class _Print(object):
    """A module's namespace, its own classes' and the code of every function they hold,
    as a list of the objects themselves: taken and compared (by identity) in C, so a
    module nothing changed needs no :func:`_snapshot` at the end. It holds them, so no
    object's identity can be reused meanwhile."""

    def __init__(self, module, seen):
        self.module = module
        self.classes = [
            value
            for value in _vars(module).values()
            if isinstance(value, type) and value.__module__ == module.__name__
        ]
        self.holders = [holder for value, _ in seen.values() for holder in _holders(value)]
        self.objects = self.now()

    def now(self):
        namespace = _vars(self.module)
        found = _list(namespace)
        found.extend(namespace.values())
        for klass in self.classes:
            members = _vars(klass)
            found.extend(members)
            found.extend(members.values())
        found.extend(_map(_getattr, self.holders, _repeat("__code__"), _repeat(None)))
        return found

    def same(self):
        """Whether every object is still the one it was."""
        now = self.now()
        return _len(now) == _len(self.objects) and _all(_map(_is, now, self.objects))


def _same(old, new):
    """Whether a snapshot's entry is the object it was, with the same code objects."""
    return old[0] is new[0] and _len(old[1]) == _len(new[1]) and _all(_map(_is, old[1], new[1]))


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
    for name in sorted(_vars(config.hook)):
        caller = getattr(config.hook, name)
        if any(hasattr(caller, a) for a in ("get_hookimpls", "_nonwrappers", "methods")):
            found.append((name, caller))
    return found


class Watch(object):
    """What pytest's watched modules held when it was made, and bugbout's hooks."""

    def __init__(self):
        self.modules = {}
        for name in WATCHED_MODULES:
            if name in PLUGGY and name not in sys.modules:
                continue
            try:
                __import__(name)
            except ImportError:
                continue
            module = sys.modules[name]
            seen = _snapshot(module)
            self.modules[name] = (module, seen, _Print(module, seen))
        self.functions = {}
        self.extra = []

    def changes(self, config):
        """What changed in pytest since import, one sentence each."""
        found = []
        own = _own_directories()
        for name, (module, before, printed) in sorted(self.modules.items()):
            if sys.modules.get(name) is not module:
                found.append("module %s was replaced in sys.modules" % name)
                continue
            if printed.same():
                continue
            after = _snapshot(module)
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
        callers = _callers(config)
        found.extend(_builtin_comparisons())
        found.extend(_foreign_hooks(config, callers))
        found.extend(_overridden(config, callers, own))
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
        if python_level(_vars(klass).get(name))
    ]


def _overridden(config, callers, own):
    """Functions set on the plugin manager or a hook caller itself (not on their class)
    by anything but pytest's and pluggy's own code: how a hook call can be diverted."""
    found = []
    holders = [("pluginmanager", config.pluginmanager)] + callers
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
        slots = _vars(klass).get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
    found = []
    for name in sorted(names):
        try:
            found.append((name, object.__getattribute__(holder, name)))
        except AttributeError:
            continue
    return found


def _foreign_hooks(config, callers):
    """Hook implementations whose code lies in the package under test (``callers``: each
    hook's name and caller)."""
    relative = json.loads(os.environ.get(SOURCE_VARIABLE) or "[]")
    if not relative:
        return []
    root = str(getattr(config, "rootpath", None) or config.rootdir)
    sources = [os.path.realpath(os.path.join(root, path)) for path in relative]
    tests = os.path.realpath(os.path.join(root, os.environ.get(TESTS_VARIABLE) or "tests"))
    found = []
    judged = {}  # most hooks of a session are implemented by the same few files
    for hook_name, caller in callers:
        for impl in _hookimpls(caller):
            code = code_of(impl.function)
            module = sys.modules.get(getattr(impl.function, "__module__", None) or "")
            files = (
                str(getattr(code, "co_filename", "") or ""),
                str(getattr(module, "__file__", "") or ""),
            ) + (("(no Python code)",) if code is None else ())
            if files not in judged:
                judged[files] = _in_package(files, tests, sources)
            if judged[files]:
                found.append(
                    "%s is implemented in the package under test (%s)"
                    % (hook_name, next(f for f in files if f))
                )
    return found


def _in_package(files, tests, sources):
    """Whether a hook whose code and module lie in ``files`` is the package's: none of
    them a test file, one of them in the package (or with no Python code)."""
    if all(_is_test_file(f, tests) for f in files if f):
        return False
    return any(f and (f.startswith("(") or any(inside(f, s) for s in sources)) for f in files)


def _is_test_file(path, tests):
    """Whether bugbout classes ``path`` as a test file (as its miner does): a conftest,
    a test module, or a file in the tests folder ``tests``."""
    if path.startswith("("):
        return False
    name = os.path.basename(path)
    return inside(path, tests) or any(fnmatch.fnmatchcase(name, p) for p in TEST_MODULES)
