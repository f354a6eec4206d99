"""The hooks of ``bugbout_coverage`` (its module says what they record, and how): kept
apart from the module pytest loads by name, whose whole source pytest parses again to
rewrite its assertions in every run.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+).
"""

import builtins
import json
import os
import sys

from bugbout_imports import MARKS, Finder
from bugbout_shared import hookimpl, inside, modern_nodeid

FD_VARIABLE = "BUGBOUT_COVERAGE_FD"
SOURCE_VARIABLE = "BUGBOUT_SOURCE_DIRS"
CO_NEWLOCALS = 0x0002
"""Set on the code of functions, lambdas and generators; not on module or class bodies."""
SPAWNS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
     "os.forkpty", "pty.spawn"}
)  # fmt: skip
"""Audit events of a process started: what runs there, no tracer of this one sees."""


class _Package(object):
    """The package's files (paths relative to the rootdir) and functions, numbered."""

    def __init__(self, root):
        self.root = root
        relative = json.loads(os.environ.get(SOURCE_VARIABLE) or "[]") or ["."]
        self.sources = [os.path.realpath(os.path.join(root, path)) for path in relative]
        self.paths = {}
        """file name as Python has it -> path relative to the rootdir, or ``None``"""
        self.numbers = {}
        """(path, line) -> number"""
        self.functions = []
        """number -> (path, line)"""

    def path(self, filename):
        """``filename``'s path relative to the rootdir, ``None`` outside the package."""
        found = self.paths.get(filename, 0)
        if found == 0:
            found = None
            if filename and filename.endswith(".py"):
                real = os.path.realpath(filename)
                if any(inside(real, source) for source in self.sources):
                    found = os.path.relpath(real, self.root).replace(os.sep, "/")
            self.paths[filename] = found
        return found

    def number(self, path, line):
        key = (path, line)
        found = self.numbers.get(key)
        if found is None:
            found = self.numbers[key] = len(self.functions)
            self.functions.append(key)
        return found


class _Monitor(object):
    """``sys.monitoring`` (3.12+): each function's start and resumption, once per context."""

    def __init__(self, recorder, tool):
        self.recorder, self.tool = recorder, tool
        self.sees_all = True
        monitoring = sys.monitoring
        self.events = monitoring.events.PY_START | monitoring.events.PY_RESUME
        package, codes, disable = recorder.package, {}, monitoring.DISABLE

        def started(code, offset):
            found = codes.get(code)
            if found is None:
                path = package.path(code.co_filename) if code.co_flags & CO_NEWLOCALS else None
                found = -1 if path is None else package.number(path, code.co_firstlineno)
                codes[code] = found
            if found >= 0:
                recorder.current.add(found)
            return disable

        monitoring.use_tool_id(tool, "bugbout")
        monitoring.register_callback(tool, monitoring.events.PY_START, started)
        monitoring.register_callback(tool, monitoring.events.PY_RESUME, started)
        monitoring.set_events(tool, self.events)

    def flush(self, context):
        pass

    def switched(self):
        sys.monitoring.restart_events()

    def intact(self):
        monitoring = sys.monitoring
        return (
            monitoring.get_tool(self.tool) == "bugbout"
            and monitoring.get_events(self.tool) == self.events
        )

    def ensure(self):
        if sys.monitoring.get_tool(self.tool) == "bugbout":
            sys.monitoring.set_events(self.tool, self.events)

    def stop(self):
        sys.monitoring.set_events(self.tool, 0)
        sys.monitoring.free_tool_id(self.tool)


class _Marks(object):
    """Before 3.12: the functions the rewritten modules marked, gathered at each switch."""

    def __init__(self, finder):
        self.marks = getattr(builtins, MARKS)
        self.finder = finder
        self.blank = bytes()
        self.sees_all = False
        """Whether it sees the functions of modules other loaders load (it does not)."""

    def flush(self, context):
        """Add what was marked to ``context``, and clear the marks."""
        marks = self.marks
        at = marks.find(1)
        if at < 0:
            return
        while at >= 0:
            context.add(at)
            at = marks.find(1, at + 1)
        if len(self.blank) != len(marks):
            self.blank = bytes(len(marks))
        marks[:] = self.blank

    def switched(self):
        pass

    def intact(self):
        return getattr(builtins, MARKS, None) is self.marks and self.finder in sys.meta_path

    def ensure(self):
        setattr(builtins, MARKS, self.marks)
        if self.finder not in sys.meta_path:
            sys.meta_path.insert(0, self.finder)

    def stop(self):
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)


class _Recorder(object):
    """Functions run, by context: the running test, a fixture's setup, a collector."""

    def __init__(self, fd, root):
        self.stream = os.fdopen(fd, "a", encoding="utf-8")
        self.package = _Package(root)
        self.outside = set()
        self.current = self.outside
        self.stack = []
        self.fixtures = {}
        self.collectors = {}
        self.files = {}
        """path -> its number in the records"""
        self.announced = 0
        self.sent_outside = set()
        self.untraced = set()
        self.modules = 0
        self.early = self._package_modules()
        """Files of the package imported before tracing started."""
        self.means = None
        self.finder = None
        self.spawned = False
        """Whether the running test started a process (seen from Python 3.8 on)."""

    def start(self):
        monitoring = getattr(sys, "monitoring", None)
        tool = None
        if monitoring is not None:
            tool = next((t for t in range(6) if monitoring.get_tool(t) is None), None)
        package = self.package
        number = None
        if tool is None:

            def number(filename, line):
                found = package.number(package.path(filename), line)
                marks = getattr(builtins, MARKS)
                if found >= len(marks):
                    marks.extend(bytes(found + 1024 - len(marks)))
                return found

        self.finder = Finder(
            lambda filename: package.path(filename) is not None, self.importing, self.leave, number
        )
        self.finder.install()
        self.means = _Monitor(self, tool) if tool is not None else _Marks(self.finder)
        if hasattr(sys, "addaudithook"):
            recorder = self

            def spawning(event, args):
                if event in SPAWNS:
                    recorder.spawned = True

            sys.addaudithook(spawning)

    def importing(self):
        self.enter(self.outside)

    def enter(self, context):
        self.means.flush(self.current)
        self.stack.append(self.current)
        self.current = context
        self.means.switched()

    def leave(self):
        self.means.flush(self.current)
        self.current = self.stack.pop() if self.stack else self.outside
        self.means.switched()

    def _package_modules(self):
        found = set()
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str):
                path = self.package.path(filename)
                if path is not None:
                    found.add((path, filename))
        return found

    def report_untraced(self):
        """The package's files imported without the tracer seeing them, as they appear."""
        if len(sys.modules) == self.modules:
            return
        self.modules = len(sys.modules)
        new = {path for path, _ in self.early}
        if not self.means.sees_all:
            loaded = self.finder.loaded
            new |= {path for path, name in self._package_modules() if name not in loaded}
        new -= self.untraced
        if new:
            self.untraced |= new
            self.emit({"untraced": [self._file(path) for path in sorted(new)]})

    def _file(self, path):
        found = self.files.get(path)
        if found is None:
            found = self.files[path] = len(self.files)
            self.emit({"file": found, "path": path})
        return found

    def named(self, numbers):
        """``numbers``, each function announced once."""
        functions = self.package.functions
        while self.announced < len(functions):
            path, line = functions[self.announced]
            self.emit({"function": self.announced, "file": self._file(path), "line": line})
            self.announced += 1
        return sorted(numbers)

    def emit(self, record):
        self.stream.write(json.dumps(record, sort_keys=True) + "\n")
        self.stream.flush()

    def report_outside(self):
        self.means.flush(self.current)
        self.report_untraced()
        new = self.outside - self.sent_outside
        if new:
            self.sent_outside |= new
            self.emit({"outside": self.named(new)})


def _recorder_or_none():
    """The recorder, tracing; ``None`` when the descriptor cannot be written (a container
    it was not passed into): nothing is recorded, and bugbout runs every test."""
    try:
        recorder = _Recorder(int(os.environ.get(FD_VARIABLE, "")), os.getcwd())
    except (OSError, ValueError):
        return None
    recorder.start()
    return recorder


_recorder = _recorder_or_none()


def pytest_configure(config):
    global _recorder
    rootdir = os.path.realpath(str(getattr(config, "rootpath", None) or config.rootdir))
    if _recorder is not None and rootdir != os.path.realpath(_recorder.package.root):
        _recorder.means.stop()  # paths would not be the rootdir's: no map, every test runs
        _recorder = None


def _within(files):
    """Record what runs until the wrapped hook returns into ``files``."""
    _recorder.enter(files)
    try:
        yield
    finally:
        _recorder.leave()


@hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if _recorder is None:
        yield
        return
    for step in _within(_recorder.collectors.setdefault(collector.nodeid, set())):
        yield step


@hookimpl(hookwrapper=True, optionalhook=True)
def pytest_fixture_setup(fixturedef, request):
    if _recorder is None:
        yield
        return
    found = _recorder.fixtures.setdefault(id(fixturedef), (fixturedef, set()))
    for step in _within(found[1]):
        yield step


@hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    recorder = _recorder
    if recorder is None:
        yield
        return
    recorder.means.ensure()
    recorder.report_outside()
    own = set()
    recorder.stack = []
    recorder.spawned = False
    recorder.enter(own)
    intact = recorder.means.intact()
    try:
        yield
    finally:
        intact = intact and recorder.means.intact()
        recorder.leave()
    recorder.report_untraced()
    if intact and not recorder.spawned:
        functions = recorder.named(_used(item, own))
        recorder.emit({"test": modern_nodeid(item.nodeid), "functions": functions})


def _used(item, own):
    """What ``item`` ran: its own phases, its fixtures' setups, its collectors."""
    found = set(own)
    info = getattr(item, "_fixtureinfo", None)
    for definitions in getattr(info, "name2fixturedefs", {}).values():
        for definition in definitions:
            fixture = _recorder.fixtures.get(id(definition))
            if fixture is not None and fixture[0] is definition:
                found |= fixture[1]
    for node in item.listchain():
        found |= _recorder.collectors.get(node.nodeid, set())
    return found


def pytest_sessionfinish(session):
    if _recorder is not None:
        _recorder.report_outside()


def pytest_unconfigure(config):
    if _recorder is not None:
        _recorder.means.stop()


__all__ = [name for name in list(globals()) if name.startswith("pytest_")]
"""The hooks this run defines, which ``bugbout_coverage`` takes."""
