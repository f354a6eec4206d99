"""The test-runner kind: what bugbout asks of the tool that runs a project's tests.

bugbout never runs a project's tests but through a test runner (``test-runner=pytest``,
the default; a plugin adds another, such as Vitest or Jest). The core gives the runner
the tree, the environment and the confinement; the runner says what a test file is,
runs the tests asked for and reports each one's outcome by its id, and may map which
functions each test runs.

**Test ids.** A test's id is the path of its file relative to the tree, ``::``, then the
runner's own name for the test within the file, stable across runs and the same before
and after a fix: pytest's node id (``tests/test_x.py::TestX::test_y[1]``), or for a
JavaScript runner the file and the test's full title path as its reporter prints it
(``test/sum.test.ts::math > sum > adds``). The core finds a test's file by the first
``::`` (:func:`file_of`) and nothing more: the rest is the runner's.

**Targets.** What a run is asked to run: files or folders relative to the tree (the
repository's suite, the fix's test files, an agent's new test files), never ids; tests
are left out by id (``skip``).

**Tamper evidence.** A run's outcomes must not be the code under test's to rewrite: the
code under test runs in the runner's process, so a runner reads its outcomes from a
channel that process cannot forge unnoticed (pytest's runs write authenticated lines to
an inherited descriptor, plant canary tests that must pass and fail, and check pytest's
own tally) and says ``tampered`` when that evidence does not hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import Environment
from bugbout.core.plumbing.trees.testtree import TestTree
from bugbout.core.store.race_records import FileChange
from bugbout.core.store.records import TestRun
from bugbout.sandbox.network import offline

SEPARATOR = "::"
"""Between a test id's file and the runner's name for the test within it."""


def file_of(test: str) -> str:
    """The file of test id ``test`` (or ``test`` itself when it names a file)."""
    return test.split(SEPARATOR, 1)[0]


def _offline(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
    """The default confinement: the network switched off."""
    return offline(argv)


@dataclass(frozen=True)
class TestRunRequest:
    """One run of a project's tests, as the core asks for it."""

    __test__ = False  # not a pytest class

    environment: Environment
    """Where the tests run: ``environment.command(args, tree, extra_paths)`` is the
    command that runs the project's test tool with ``args``."""
    tree: Path | TestTree
    """The code under test: a folder, or a :class:`TestTree` whose edits are done."""
    targets: tuple[str, ...]
    """The files and folders to run, relative to the tree."""
    project: ProjectSettings
    """The project's settings (its environment variables, ``test-timeout``, ...)."""
    label: str
    """The run's name in its record (``before-1``, ``unfixed``, ``suite``...)."""
    timeout: float
    """Seconds the whole run may take; then it is killed and ``timeout``."""
    confine: Confine = _offline
    """Wraps the runner's command for the tree (and the private folders it may write)."""
    skip: frozenset[str] = frozenset()
    """Test ids not to run: they are left out of the outcomes."""
    hostile: bool = True
    """Whether an agent may have written the tree (its tamper checks are then strongest);
    ``False`` for the maintainers' own code (ground truth)."""


@dataclass(frozen=True)
class TestStyle:
    """How an agent is told to write tests for this runner."""

    __test__ = False  # not a pytest class

    language: str
    """The project's language, as the prompt names it: ``Python``."""
    new_files: str
    """How a new test file is named: ``test_*.py``."""
    example: str
    """An example test file's name: ``test_something.py``."""
    options: str
    """What the test command takes besides paths: ``pytest options``."""
    first_failure: str
    """The option that stops at the first failure: ``-x``."""


class TestRunner(Protocol):
    """What a test-runner plugin's factory returns.

    Every method but :meth:`run` and :meth:`run_with_coverage` is pure (it reads the
    text and paths it is given): mining, the race and the verdicts call them often.
    """

    style: TestStyle
    """How agents are told to name their tests and where they go."""

    def is_test_file(self, path: str) -> bool:
        """Whether ``path`` (relative to the repository, ``/``-separated) is a file the
        runner collects tests from by default (pytest: ``test_*.py``, ``*_test.py``; a
        JavaScript runner: ``*.test.ts``, ``*.spec.js``, files under ``__tests__/``)."""
        ...

    def defined_tests(self, path: str, source: bytes | None) -> dict[str, int | None]:
        """The tests the file ``path`` with text ``source`` defines, found by parsing it,
        by their name within the file (an id without the file and its ``::``), each with
        its number of cases (a parametrised test, an ``.each`` table), ``None`` when that
        cannot be told; empty when it does not parse or ``source`` is ``None``."""
        ...

    def suite_paths(self, tree: Path, tests: str, test_files: Iterable[str]) -> tuple[str, ...]:
        """Where the repository's suite is in ``tree`` (a checkout of a task's unfixed
        code): ``tests`` (``project.tests``) when the tree has it, and the test folder of
        each of ``test_files`` (the fix's) it does not hold; never a path the tree lacks."""
        ...

    def writing_folder(self, suite: Sequence[str], tests: str) -> str:
        """Where an agent is told to write its tests, given the task's suite."""
        ...

    def install_as(self, original: str, author: str, number: int) -> str:
        """Where a copy of an agent's test file ``original`` goes when several authors'
        tests are gathered in one tree: in ``original``'s folder (its configuration still
        applies), named after ``author`` (letters, digits and ``_``) so that the runner
        collects it; ``number`` > 1 makes another name when the first is taken (pytest:
        ``tests/test_x.py`` by ``codex`` → ``tests/test_bb_codex__x.py``, then
        ``tests/test_bb_codex__x_2.py``)."""
        ...

    def script_args(self, environment: Environment, project: ProjectSettings) -> list[str]:
        """The arguments of ``environment.command`` for the script an agent runs its
        tests with: as bugbout's own runs run them (the project's options, its
        configuration set aside as bugbout does), without bugbout's outcome channel."""
        ...

    def run(self, request: TestRunRequest) -> TestRun:
        """Run ``request.targets`` and return every test's outcome by id.

        The run is confined by ``request.confine`` (no network, the tree and a private
        HOME writable), ended after ``request.timeout`` seconds (``timeout``), and says
        ``collection-failed``, ``no-tests``, ``crashed`` or ``tampered`` as those apply;
        ids and messages never hold the tree's absolute path, so runs of one test in two
        trees agree. Raises :class:`~bugbout.core.contract.errors.EnvironmentFailure`
        when the environment's tool is one the runner cannot adapt to (too old), and
        :class:`~bugbout.core.plumbing.testruns.unstarted.TestRunNotStarted` when the run never
        started (the sandbox failed, not the code under test)."""
        ...

    def run_with_coverage(self, request: TestRunRequest) -> tuple[TestRun, list[bytes] | None]:
        """:meth:`run`, with the map of which functions of ``project.source`` each test
        ran: JSON lines (``{"file": 3, "path": "src/pkg/core.py"}`` when a file is first
        named, ``{"function": 8, "file": 3, "line": 12}`` when a function is, by its
        first line; ``{"test": id, "functions": [8, 9]}`` after each test;
        ``{"outside": [8]}`` for functions run outside any test, ``{"untraced": [3]}``
        for files it could not see), one chunk per process, numbered its own way
        (:func:`bugbout.core.plumbing.selection.affected.read_coverage`). ``None``: this runner
        cannot tell, and every patch runs the whole suite."""
        ...

    def suspicious(self, tree: Path, base: Path | None, changes: Sequence[FileChange]) -> list[str]:
        """What a patch's source ``changes`` add that a fix has no reason to contain, one
        line each (``path:line: what``): code that reaches into the runner or the
        language's runtime rather than fixing anything (pytest's: importing pytest,
        ``sys.modules``, ``os._exit``, a ``sitecustomize.py``). ``tree`` is patched,
        ``base`` the tree before the patch (what it already held is the project's own).
        A run with any is ``tampered``: a tripwire beside the run's own evidence."""
        ...

    def changed_functions(self, path: str, before: str, after: str) -> frozenset[int] | None:
        """The first lines of the functions of file ``path``'s text ``before`` that the
        change to ``after`` lies in (the lines the coverage map names functions by);
        ``None`` when some changed line is outside every function (it runs when the file
        is loaded), or the file is not plain code a map can speak for."""
        ...
