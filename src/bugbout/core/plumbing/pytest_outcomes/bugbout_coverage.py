"""A pytest plugin that records which files of the package under test each test runs.

bugbout loads it with ``-p bugbout_coverage`` beside ``bugbout_outcomes`` for one run per
task, on the unfixed code: the map it writes says which tests a patch can affect. Like
``bugbout_outcomes`` it is stdlib-only and runs on every Python bugbout supports (3.6+).

Only functions count (a module's or a class's body runs when it is imported, and bugbout
treats a change there as affecting every test). What a test runs is what runs while it
is set up, called and torn down, plus what the fixtures it uses ran when they were set
up (a session fixture runs once, for every test that uses it), plus what ran while its
module, class and directories were collected (a parametrization computed by the package).
Anything else that ran (a plugin, ``conftest.py`` at start-up) is reported as ``outside``.

It traces with ``sys.monitoring`` where Python has it (3.12+: each function is reported
once per test, then switched off until the next), else with ``sys.setprofile``. A test
during which the tracer was removed or replaced is not reported at all: bugbout then
counts it as affected by every patch.

JSON lines go to the file descriptor ``BUGBOUT_COVERAGE_FD``:
``{"file": 3, "path": "src/pkg/core.py"}`` the first time a file is named,
``{"test": nodeid, "files": [3, 5]}`` after each test, ``{"outside": [3]}`` as it grows.
Paths are relative to the rootdir and lie under one of the directories listed in
``BUGBOUT_SOURCE_DIRS`` (a JSON list, relative to the rootdir; the rootdir when empty).
"""

import json
import os
import sys
import threading

from bugbout_impostors import hookimpl, modern_nodeid

FD_VARIABLE = "BUGBOUT_COVERAGE_FD"
SOURCE_VARIABLE = "BUGBOUT_SOURCE_DIRS"
CO_NEWLOCALS = 0x0002
"""Set on the code of functions, lambdas and generators; not on module or class bodies."""


class _Recorder(object):
    """Files run, by context: the running test, a fixture's setup, a collector."""

    def __init__(self, fd):
        self.stream = os.fdopen(fd, "a", encoding="utf-8")
        self.codes = {}
        """code object -> index of its file, or -1 (not a function)"""
        self.filenames = {}
        """``co_filename`` -> index"""
        self.names = []
        """index -> ``co_filename``"""
        self.paths = {}
        """index -> path relative to the rootdir (``None``: not in the package)"""
        self.current = set()
        self.outside = set()
        self.sent_outside = set()
        self.stack = []
        self.fixtures = {}
        self.collectors = {}
        self.root = None
        self.sources = []
        self.monitor = None
        self.profile = None

    def index(self, code):
        """The index of a function's file (``-1`` for a module or class body)."""
        if not code.co_flags & CO_NEWLOCALS:
            self.codes[code] = -1
            return -1
        name = code.co_filename
        found = self.filenames.get(name)
        if found is None:
            found = self.filenames[name] = len(self.names)
            self.names.append(name)
        self.codes[code] = found
        return found

    def enter(self, context):
        self.stack.append(self.current)
        self.current = context
        self.restart()

    def leave(self):
        self.current = self.stack.pop() if self.stack else self.outside
        self.restart()

    def restart(self):
        if self.monitor is not None:
            sys.monitoring.restart_events()

    def intact(self):
        """Whether the tracer is still the one installed."""
        if self.monitor is not None:
            tool, events = self.monitor
            monitoring = sys.monitoring
            return monitoring.get_tool(tool) == "bugbout" and monitoring.get_events(tool) == events
        return sys.getprofile() is self.profile

    def ensure(self):
        """Put the tracer back if the code under test removed it (a test that ran with
        it removed has not been reported)."""
        if self.intact():
            return
        if self.monitor is not None:
            tool, events = self.monitor
            if sys.monitoring.get_tool(tool) == "bugbout":
                sys.monitoring.set_events(tool, events)
            return
        threading.setprofile(self.profile)
        sys.setprofile(self.profile)

    def start(self):
        self.current = self.outside
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:
            tool = next((t for t in range(6) if monitoring.get_tool(t) is None), None)
            if tool is not None:
                self._monitor(monitoring, tool)
                return
        codes, index, recorder = self.codes, self.index, self

        def profile(frame, event, arg):
            if event == "call":
                code = frame.f_code
                found = codes.get(code)
                if found is None:
                    found = index(code)
                if found >= 0:
                    recorder.current.add(found)

        self.profile = profile
        threading.setprofile(profile)
        sys.setprofile(profile)

    def _monitor(self, monitoring, tool):
        codes, index, recorder, disable = self.codes, self.index, self, monitoring.DISABLE

        def started(code, offset):
            found = codes.get(code)
            if found is None:
                found = index(code)
            if found >= 0:
                recorder.current.add(found)
            return disable

        monitoring.use_tool_id(tool, "bugbout")
        monitoring.register_callback(tool, monitoring.events.PY_START, started)
        monitoring.set_events(tool, monitoring.events.PY_START)
        self.monitor = (tool, monitoring.events.PY_START)

    def stop(self):
        if self.monitor is not None:
            sys.monitoring.set_events(self.monitor[0], 0)
            sys.monitoring.free_tool_id(self.monitor[0])
        elif sys.getprofile() is self.profile:
            sys.setprofile(None)
            threading.setprofile(None)

    def configure(self, rootdir):
        self.root = os.path.realpath(rootdir)
        relative = json.loads(os.environ.get(SOURCE_VARIABLE) or "[]") or ["."]
        self.sources = [os.path.realpath(os.path.join(self.root, path)) for path in relative]

    def named(self, indices):
        """The indices that are files of the package, each announced once."""
        found = []
        for number in sorted(indices):
            if number not in self.paths:
                self.paths[number] = self._relative(number)
                if self.paths[number] is not None:
                    self.emit({"file": number, "path": self.paths[number]})
            if self.paths[number] is not None:
                found.append(number)
        return found

    def _relative(self, number):
        if self.root is None:
            return None
        path = os.path.realpath(self.names[number])
        if not any(
            path == source or path.startswith(source.rstrip(os.sep) + os.sep)
            for source in self.sources
        ):
            return None
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def emit(self, record):
        self.stream.write(json.dumps(record, sort_keys=True) + "\n")
        self.stream.flush()

    def report_outside(self):
        new = self.outside - self.sent_outside
        if new:
            self.sent_outside |= new
            files = self.named(new)
            if files:
                self.emit({"outside": files})


def _recorder_or_none():
    """The recorder, tracing; ``None`` when the descriptor cannot be written (a container
    it was not passed into): nothing is recorded, and bugbout runs every test."""
    try:
        recorder = _Recorder(int(os.environ.get(FD_VARIABLE, "")))
    except (OSError, ValueError):
        return None
    recorder.start()
    return recorder


_recorder = _recorder_or_none()


def pytest_configure(config):
    if _recorder is not None:
        _recorder.configure(str(getattr(config, "rootpath", None) or config.rootdir))


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
    recorder.ensure()
    recorder.report_outside()
    own = set()
    recorder.stack = []
    recorder.enter(own)
    intact = recorder.intact()
    try:
        yield
    finally:
        intact = intact and recorder.intact()
        recorder.leave()
    if intact:
        recorder.emit(
            {"test": modern_nodeid(item.nodeid), "files": recorder.named(_used(item, own))}
        )


def _used(item, own):
    """What ``item`` ran: its own phases, its fixtures' setups, its collectors."""
    files = set(own)
    info = getattr(item, "_fixtureinfo", None)
    for definitions in getattr(info, "name2fixturedefs", {}).values():
        for definition in definitions:
            found = _recorder.fixtures.get(id(definition))
            if found is not None and found[0] is definition:
                files |= found[1]
    for node in item.listchain():
        files |= _recorder.collectors.get(node.nodeid, set())
    return files


def pytest_sessionfinish(session):
    if _recorder is not None:
        _recorder.report_outside()


def pytest_unconfigure(config):
    if _recorder is not None:
        _recorder.stop()
