"""The hooks of ``bugbout_outcomes`` (its module says what they report, and how), and
the authenticated stream they write: kept apart from the module pytest loads by name,
whose whole source pytest parses again to rewrite its assertions in every run.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+,
pytest 3+).
"""

import gc
import json
import os
import sys

from bugbout_cache import give_cache
from bugbout_failures import brief, briefly
from bugbout_ignored import left_out
from bugbout_shared import hookimpl, modern_nodeid, real
from bugbout_watch import Watch

FD_VARIABLE = "BUGBOUT_OUTCOMES_FD"
ROOTDIR_VARIABLE = "BUGBOUT_ROOTDIR"
ADDOPTS_VARIABLE = "BUGBOUT_DROP_ADDOPTS"
IMPOSTORS_VARIABLE = "BUGBOUT_IMPOSTORS"
SUBTEST_REPORTS = ("SubtestReport", "SubTestReport")
"""pytest 9's class of a subtest's report, and the ``pytest-subtests`` plugin's."""
KEY_PREFIX = b"bugbout-key "
_PLAIN = (str, type(None))
"""An outcome ``_Stream.report`` lays out itself: a string, or none."""
FLUSHED = frozenset(["start", "teardown", "collect"])
"""The lines written as soon as they are made; a test's setup and call wait for its
teardown (or for whatever is written next), so a test costs two writes, not four."""


def _no_default(value):
    raise TypeError("%r is not JSON serializable" % (value,))


def _encoder():
    """``json.dumps(record, sort_keys=True)``: json's C encoder made once, not for every
    line, where Python has it."""
    make = getattr(json.encoder, "c_make_encoder", None)
    try:
        encode = make(
            None, _no_default, json.encoder.encode_basestring_ascii, None, ": ", ", ", True,
            False, True,
        )  # fmt: skip
    except TypeError:  # none, or one that takes other arguments (it is json's own)
        return json.JSONEncoder(sort_keys=True).encode
    return lambda record: "".join(encode(record, 0))


_ENCODE = _encoder()
_STRING = json.encoder.encode_basestring_ascii
"""A string as ``_ENCODE`` writes it (json's C function, where Python has it)."""


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


def _sha256():
    """SHA-256 from the interpreter's own module: ``hashlib`` and ``hmac`` load OpenSSL,
    4 ms of a run's CPU on Python 3.13, which pytest never needs (hashlib's where the
    interpreter was built without its own). Its name is asked first: a module not found
    is looked for in every folder of the path."""
    modern = sys.version_info >= (3, 12)
    for name in ("_sha2", "_sha256") if modern else ("_sha256", "_sha2"):
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256


class _Signer(object):
    """HMAC-SHA256 under a key, as ``hmac`` computes it (RFC 2104): the padded key is
    hashed once, and each line's hashes start from copies."""

    def __init__(self, key):
        sha256 = _sha256()
        if len(key) > 64:
            key = sha256(key).digest()
        key = key + b"\0" * (64 - len(key))
        self.inner = sha256(bytes(bytearray(byte ^ 0x36 for byte in bytearray(key))))
        self.outer = sha256(bytes(bytearray(byte ^ 0x5C for byte in bytearray(key))))

    def hexdigest(self, body):
        inner = self.inner.copy()
        inner.update(body)
        outer = self.outer.copy()
        outer.update(inner.digest())
        return outer.hexdigest()


class _Stream(object):
    """The lines written to the outcome file: each numbered, then signed under the key
    (without a key they go unsigned, and bugbout rejects them)."""

    def __init__(self, fd, key):
        self.fd = fd
        self.signer = _Signer(key) if key is not None else None
        self.sequence = 0
        self.started = False
        self.waiting = []

    def emit(self, record):
        """Write ``record`` (a dict of its own) as one line, whole, before returning; a
        test's setup and call with its teardown (``FLUSHED``)."""
        record["seq"] = self.sequence
        self._add(_ENCODE(record), record.get("when") in FLUSHED or "summary" in record)

    def report(self, nodeid, when, outcome=None, subtest=False):
        """``emit({"nodeid": nodeid, "when": when, "outcome": outcome})`` (no outcome:
        none; a subtest's marked ``"subtest": true``), the line laid out here as
        ``_ENCODE`` lays it out: a test's plain reports, four a test, and a subtest's,
        need no walk of a dictionary. Values that are not strings are left to ``emit``."""
        if type(nodeid) is not str or type(when) is not str or type(outcome) not in _PLAIN:
            record = {"nodeid": nodeid, "when": when}
            if outcome is not None:
                record["outcome"] = outcome
            if subtest:
                record["subtest"] = True
            return self.emit(record)
        marked = ', "subtest": true' if subtest else ""
        if outcome is None:
            body = '{"nodeid": %s, "seq": %d%s, "when": %s}' % (
                _STRING(nodeid), self.sequence, marked, _STRING(when),
            )  # fmt: skip
        else:
            body = '{"nodeid": %s, "outcome": %s, "seq": %d%s, "when": %s}' % (
                _STRING(nodeid), _STRING(outcome), self.sequence, marked, _STRING(when),
            )  # fmt: skip
        return self._add(body, when in FLUSHED)

    def _add(self, body, now):
        """Number, sign and keep the line ``body`` (the record with its sequence number);
        write what is kept ``now``."""
        self.sequence += 1
        line = body.encode("utf-8")
        if self.signer is not None:  # the signature last: the body is the line without it
            line = line[:-1] + b', "mac": "' + self.signer.hexdigest(line).encode() + b'"}'
        self.waiting.append(line + b"\n")
        if now:
            self.flush()

    def flush(self):
        """Write the lines made so far, whole."""
        if not self.started:  # after the key's line bugbout wrote
            os.lseek(self.fd, 0, os.SEEK_END)
            self.started = True
        data = b"".join(self.waiting)
        del self.waiting[:]
        while data:
            data = data[os.write(self.fd, data) :]


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
_stream = _Stream(_fd, _read_key(_fd))
_watch = Watch()
_skipped = _read_skipped()
_probing = os.environ.get(IMPOSTORS_VARIABLE) == "1"  # read before any conftest runs
_impostors = None
del _fd


def pytest_runtest_logstart(nodeid, location):
    _stream.report(modern_nodeid(nodeid), "start")


@hookimpl(tryfirst=True)
def pytest_collection(session):
    for name, why in left_out(session):
        _stream.emit({"nodeid": name, "when": "collect", "outcome": "ignored", "message": why})


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
    _known_to_inspect(kept)


def _known_to_inspect(items):
    """Tell ``inspect`` which module each test module's file is, as its first look for
    a file's module would find (``inspect.getmodule``, which pytest asks when it shows
    a failure's source): a test that fails in its own module then costs no look at every
    loaded module (10 ms on Python 3.13 for the canary that must fail, in a run nothing
    else fails)."""
    import inspect

    modules = {}
    for item in items:
        module = getattr(item, "module", None)
        modules[id(module)] = module
    for module in modules.values():
        path = getattr(module, "__file__", None)
        name = getattr(module, "__name__", None)
        if not isinstance(path, str) or not isinstance(name, str):
            continue
        found = os.path.normcase(os.path.abspath(path))
        inspect.modulesbyfile.setdefault(found, name)
        inspect.modulesbyfile.setdefault(real(found), name)


_briefed = []
"""The items whose failing call's report is being made briefly (``briefly``), until the
next report is logged: a plain hook and that look cost less than a wrapper of every
phase's report."""


@hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    if call.when == "call" and call.excinfo is not None and briefly(item, call):
        _briefed.append(item)


def pytest_runtest_logreport(report):
    while _briefed:  # the report is made: pytest's own way is back
        item = _briefed.pop()
        if vars(item).get("repr_failure") is brief:
            del item.repr_failure
    _log(report)


def _log(report):
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    nodeid = modern_nodeid(report.nodeid)
    subtest = type(report).__name__ in SUBTEST_REPORTS
    if report.failed:
        message = _first_line(report, last=False)
    elif outcome == "skipped":
        message = _skip_reason(report)
    elif type(outcome) is str:  # a plain report: most of a run's
        return _stream.report(nodeid, report.when, outcome, subtest)
    else:
        message = None
    record = {"nodeid": nodeid, "when": report.when, "outcome": outcome}
    if subtest:
        record["subtest"] = True
    if message is not None:
        record["message"] = message
    _stream.emit(record)


def pytest_collectreport(report):
    if report.failed:
        _stream.emit(
            {
                "nodeid": modern_nodeid(report.nodeid),
                "when": "collect",
                "outcome": "error",
                "message": _missing_module(report),
            }
        )
    elif report.skipped and report.nodeid:  # skipped whole: pytest.importorskip, a skip
        _stream.emit(
            {
                "nodeid": modern_nodeid(report.nodeid),
                "when": "collect",
                "outcome": "skipped",
                "message": _skip_reason(report),
            }
        )


def _skip_reason(report):
    """Why a module or a test was skipped: the first line of its skip's reason."""
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
    if _probing:  # only then: the probe's module is not even imported
        from bugbout_impostors import Impostors

        _impostors = Impostors(str(getattr(config, "rootpath", None) or config.rootdir))
        gc.callbacks.append(_impostors.on_collection)
    for hook_name in (
        "pytest_runtest_logstart",
        "pytest_collection",
        "pytest_runtest_logreport",
        "pytest_runtest_makereport",
        "pytest_collectreport",
        "pytest_collection_modifyitems",
        "pytest_sessionfinish",
    ):
        _watch.functions[hook_name] = globals()[hook_name]


def pytest_sessionfinish(session):
    if _probing and (_impostors is None or _impostors.on_collection not in gc.callbacks):
        _watch.extra.append("bugbout's garbage collection callback was removed")
    _stream.emit(
        {
            "summary": {
                "reports": _stream.sequence,
                "changes": _watch.changes(session.config) + _watch.extra,
                "impostors": _impostors.found() if _impostors is not None else [],
            }
        }
    )


__all__ = [name for name in list(globals()) if name.startswith("pytest_")]
"""The hooks this run defines, which ``bugbout_outcomes`` takes."""
