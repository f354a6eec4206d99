"""A pytest plugin that reports every test's outcome to bugbout, by exact node id.

It is loaded with ``-p bugbout_outcomes`` from a directory put on ``PYTHONPATH``, in
the project's own environment, so it must run on every Python and pytest bugbout
supports (Python 3.6+, pytest 3+): no annotations, f-strings only where 3.6 allows.
Each report is one JSON line written to the file descriptor ``BUGBOUT_OUTCOMES_FD``,
so it works even where the tests may not write files. A ``start`` line before each test
tells which one was running if pytest dies; the node ids in ``BUGBOUT_DESELECT`` (a JSON
list: tests that crashed pytest in an earlier run) are deselected, exactly.
"""

import json
import os

_stream = None


def _emit(record):
    global _stream
    if _stream is None:
        _stream = os.fdopen(int(os.environ["BUGBOUT_OUTCOMES_FD"]), "a", encoding="utf-8")
    _stream.write(json.dumps(record) + "\n")
    _stream.flush()


def _first_line(report):
    text = str(getattr(report, "longrepr", "") or "")
    lines = [line for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("E "):
            return line[1:].strip()[:500]
    return (lines[-1] if lines else "").strip()[:500]


def pytest_runtest_logstart(nodeid, location):
    _emit({"nodeid": nodeid, "when": "start"})


def pytest_collection_modifyitems(config, items):
    names = set(json.loads(os.environ.get("BUGBOUT_DESELECT") or "[]"))
    deselected = [item for item in items if item.nodeid in names]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item.nodeid not in names]


def pytest_runtest_logreport(report):
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    _emit({"nodeid": report.nodeid, "when": report.when, "outcome": outcome})


def pytest_collectreport(report):
    if report.failed:
        _emit(
            {
                "nodeid": report.nodeid,
                "when": "collect",
                "outcome": "error",
                "message": _first_line(report),
            }
        )
