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

A ``start`` line before each test tells which one was running if pytest dies: it is
written as the test starts, and the test's setup and call lines with its teardown's (two
writes a test, each of whole lines). The node ids in ``BUGBOUT_DESELECT`` (a JSON list:
tests that crashed pytest in an earlier run) are deselected, exactly, and so are those
listed in the file open as ``BUGBOUT_SKIP_FD`` (a JSON list: tests a patch cannot
affect), read and closed on import.

The code under test runs in this process and can defeat any check made here; bugbout's
canary tests are the ground check (see ``bugbout.core.plumbing.tampering.canaries``).

The hooks live in ``bugbout_hooks``, what is watched in pytest in ``bugbout_watch``, and
the impostor probe's module is imported only for a run that probes: pytest parses the
whole source of a module it loads with ``-p`` again in every run, to rewrite its
assertions, so this one holds only its documentation and how the others are loaded.

Those modules come compiled, when bugbout could compile them for this interpreter
(``bugbout.core.plumbing.testruns.plugin_code``): the sealed memory file open as
``BUGBOUT_CODE_FD`` holds their code, which this module reads and closes on import and
uses only when it was made by an interpreter of its own magic number and unmarshals
whole; else they are compiled from source, as any module is. This module has no
assertion for pytest to rewrite: PYTEST_DONT_REWRITE.
"""

import os
import sys

CODE_VARIABLE = "BUGBOUT_CODE_FD"
CODE_FORMAT = b"bugbout-plugin-code 1 "


def _compiled():
    """The code of the plugin's other modules by name, from ``BUGBOUT_CODE_FD`` (read,
    then closed); none without it, when another kind of interpreter compiled it or it
    does not unmarshal (cut short). A descriptor that does not hold bugbout's code (a
    sandbox that numbers descriptors anew) is left as it is."""
    try:
        fd = int(os.environ.get(CODE_VARIABLE, ""))
    except ValueError:
        return {}
    try:
        data = os.pread(fd, os.fstat(fd).st_size, 0)
    except OSError:
        return {}
    if not data.startswith(CODE_FORMAT):
        return {}
    os.close(fd)
    from importlib.util import MAGIC_NUMBER

    parts = data.split(b"\n", 2)
    if len(parts) < 3:
        return {}
    if parts[1] != MAGIC_NUMBER.hex().encode():
        return {}
    import marshal

    try:
        codes = marshal.loads(parts[2])
    except Exception:  # damaged (bugbout checks its digest): compile from source
        return {}
    return codes if isinstance(codes, dict) else {}


class _Compiled(object):
    """Imports the plugin's modules from their compiled code, while this module loads."""

    def __init__(self, codes):
        self.codes = codes

    def find_spec(self, name, path=None, target=None):
        code = self.codes.get(name)
        if code is None:
            return None
        from importlib.util import spec_from_file_location

        return spec_from_file_location(name, code.co_filename, loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.codes[module.__name__], module.__dict__)


_finder = _Compiled(_compiled())
sys.meta_path.insert(0, _finder)
try:
    from bugbout_hooks import *  # noqa: F403  (the hooks this run defines)

    if os.environ.get("BUGBOUT_IMPOSTORS") == "1":  # before any conftest can stand in
        import bugbout_impostors  # noqa: F401
    if os.environ.get("BUGBOUT_COVERAGE_FD"):  # for bugbout_coverage, loaded next
        import bugbout_tracing  # noqa: F401
finally:
    sys.meta_path.remove(_finder)
del _finder
