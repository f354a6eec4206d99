"""A pytest plugin that records which functions of the package under test each test runs.

bugbout loads it with ``-p bugbout_coverage`` beside ``bugbout_outcomes`` for one run per
task, on the unfixed code: the map it writes says which tests a patch can affect. Like
``bugbout_outcomes`` it is stdlib-only and runs on every Python bugbout supports (3.6+).

A function is its file and its first line (``co_firstlineno``: its first decorator's);
a module's or a class's body is no function (it runs when it is imported, and bugbout
treats a change there as affecting every test). What a test runs is what runs while it
is set up, called and torn down, plus what the fixtures it uses ran when they were set
up (a session fixture runs once, for every test that uses it), plus what ran while its
module, class and directories were collected (a parametrization computed by the
package). Anything else that ran is reported as ``outside``: start-up, a plugin, and
whatever runs while a module of the package is imported, even during a test (what it
computes outlasts that test).

It traces with ``sys.monitoring`` where Python has it (3.12+: each function is reported
once per test, then switched off until the next); before 3.12 the package's modules are
loaded with their functions rewritten to mark themselves (``bugbout_imports``), which
costs a small share of what a profile function would. A test during which the tracer was
removed or replaced is not reported at all: bugbout then counts it as affected by every
patch. So is a test that started a process (from Python 3.8, which reports it to audit
hooks): what runs there is not traced. A module of the package that was imported
without the tracer seeing it (before the plugin started, or by another loader) is
reported as ``untraced``.

JSON lines go to the file descriptor ``BUGBOUT_COVERAGE_FD``:
``{"file": 3, "path": "src/pkg/core.py"}`` the first time a file is named,
``{"function": 8, "file": 3, "line": 12}`` the first time a function is,
``{"test": nodeid, "functions": [8, 9]}`` after each test, ``{"outside": [8]}`` and
``{"untraced": [3]}`` as they grow. Paths are relative to the rootdir and lie under one
of the directories listed in ``BUGBOUT_SOURCE_DIRS`` (a JSON list, relative to the
rootdir; the rootdir when empty).

The hooks live in ``bugbout_tracing``: pytest parses the whole source of a module it
loads with ``-p`` again in every run, so this one holds only its documentation
(``PYTEST_DONT_REWRITE``: it has no assertion to rewrite).
"""

from bugbout_tracing import *  # noqa: F403  (the hooks this run defines)
