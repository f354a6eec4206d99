"""``bugbout plugins new KIND NAME``: a new plugin package that passes its own tests.

:func:`scaffold` writes an installable package, ``bugbout-NAME/``::

    pyproject.toml              hatchling; the `bugbout` entry point NAME = "bugbout_NAME.plugin"
    README.md                   how to install, select, test and publish it
    src/bugbout_NAME/__init__.py
    src/bugbout_NAME/plugin.py  a small working plugin of KIND, registered by its hook
    tests/conftest.py           loads bugbout's fixtures for plugin authors
    tests/test_plugin.py        the KIND's conformance suite, run on the installed plugin

Each kind's plugin is a minimal one that works as it is, built on bugbout's own helpers,
for its author to change: a judge policy on :mod:`bugbout.core.judging`, a reporter of a
few lines of text, an agent adapter that runs a configured command, and so on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bugbout import __version__
from bugbout.core.errors import ConfigError
from bugbout.core.types import KINDS

NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
"""A normalised plugin name: lowercase words joined by dashes, starting with a letter."""


@dataclass(frozen=True)
class Names:
    """How a new plugin is named in each place."""

    kind: str
    plugin: str
    """The plugin's (and entry point's) name: ``cautious``, ``my-judge``."""

    @property
    def distribution(self) -> str:
        return f"bugbout-{self.plugin}"

    @property
    def module(self) -> str:
        return f"bugbout_{self.plugin.replace('-', '_')}"

    @property
    def title(self) -> str:
        """``my-judge`` → ``MyJudge``: the prefix of the plugin's class names."""
        return "".join(part.capitalize() for part in self.plugin.split("-"))


def normalise(name: str) -> str:
    """``My_Judge`` → ``my-judge``; ``bugbout-cautious`` → ``cautious``; else an error."""
    normal = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")
    normal = normal.removeprefix("bugbout-")
    if not NAME.match(normal):
        raise ConfigError(
            f"{name!r} cannot name a plugin: use letters, digits and dashes, starting with a "
            "letter (e.g. `cautious`, `my-judge`)"
        )
    return normal


def scaffold(kind: str, name: str, directory: Path | None = None) -> Path:
    """Write the package of a new ``kind`` plugin called ``name`` in
    ``directory / bugbout-NAME`` (``directory``: the current one); returns its path."""
    if kind not in TEMPLATES:
        raise ConfigError(f"unknown plugin kind {kind!r}; choose one of {', '.join(TEMPLATES)}")
    names = Names(kind, normalise(name))
    _check_unclaimed(names)
    target = (directory or Path.cwd()).resolve() / names.distribution
    if target.exists():
        raise ConfigError(f"{target} already exists; remove it or choose another --dir or NAME")
    files = render(names)
    _check_class_names(names, files[f"src/{names.module}/plugin.py"])
    for relative, text in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return target


def render(names: Names) -> dict[str, str]:
    """The new package's files by path, relative to the package directory."""
    template = TEMPLATES[names.kind]
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README.replace("__USAGE__", template.usage.strip("\n")),
        "src/__MODULE__/__init__.py": INIT,
        "src/__MODULE__/plugin.py": template.plugin,
        "tests/conftest.py": CONFTEST,
        "tests/test_plugin.py": TEST.replace("__TESTS__", template.tests.strip("\n")),
    }
    return {_fill(path, names): _fill(text, names) for path, text in files.items()}


def _fill(text: str, names: Names) -> str:
    spec = KINDS[names.kind]
    template = TEMPLATES[names.kind]
    values = {
        "__NAME__": names.plugin,
        "__MODULE__": names.module,
        "__DIST__": names.distribution,
        "__TITLE__": names.title,
        "__KIND__": names.kind,
        "__HOOK__": spec.hook,
        "__RECORD__": spec.__name__,
        "__SUITE__": template.suite,
        "__SUMMARY__": template.summary,
        "__BUGBOUT__": __version__,
    }
    for token, value in values.items():
        text = text.replace(token, value)
    return text


def _check_unclaimed(names: Names) -> None:
    """A built-in plugin of the kind with the name would clash with the new one."""
    from bugbout.core.manager import make_plugins

    if names.plugin in make_plugins(entry_points=False).of_kind(names.kind):
        raise ConfigError(
            f"bugbout already has a {names.kind} plugin named {names.plugin!r}; choose another name"
        )


def _check_class_names(names: Names, source: str) -> None:
    """A class named after the plugin must not shadow a name the module imports."""
    import ast

    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom | ast.Import)
        for alias in node.names
    }
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    clashes = sorted(imported & classes)
    if clashes:
        raise ConfigError(
            f"{_article(names.kind)} {names.kind} plugin named {names.plugin!r} would define "
            f"class {clashes[0]}, which the plugin module imports; choose another name"
        )


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def next_steps(kind: str, path: Path) -> str:
    """What to do with a new package, for the command line."""
    return (
        f"created {path} ({_article(kind)} {kind} plugin); next: `pip install -e {path}`, "
        f"`pytest {path / 'tests'}`, then `bugbout plugins` lists it"
    )


# -- the files every kind shares ------------------------------------------------------------

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.24"]
build-backend = "hatchling.build"

[project]
name = "__DIST__"
version = "0.1.0"
description = "__SUMMARY__: a __KIND__ plugin for bugbout"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["bugbout>=__BUGBOUT__"]

[project.optional-dependencies]
test = ["pytest>=8"]

# bugbout loads every module of this entry-point group: this is what makes the plugin
# appear in `bugbout plugins` and selectable by name.
[project.entry-points.bugbout]
__NAME__ = "__MODULE__.plugin"

[tool.hatch.build.targets.wheel]
packages = ["src/__MODULE__"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = ["-ra", "--strict-markers"]

[tool.ruff]
line-length = 100
target-version = "py311"
"""

INIT = '''\
"""__DIST__: __SUMMARY__ (a __KIND__ plugin for bugbout)."""

__version__ = "0.1.0"
'''

CONFTEST = '''\
"""bugbout's fixtures for plugin authors (bugbout_plugins, register_plugin,
fixed_bug_repository, model_server, bugbout_home) and the conformance suites' own."""

pytest_plugins = ["bugbout.testing.fixtures"]
'''

TEST = '''\
"""__DIST__ against bugbout's conformance suite for __KIND__ plugins.

The suite looks the plugin up by name among the installed ones, through the `bugbout`
entry point: install the package first (`pip install -e .`), then run `pytest`.
"""

from __future__ import annotations

__TESTS__
'''

README = """\
# __DIST__

__SUMMARY__: a `__KIND__` plugin for [bugbout](https://github.com/bugbout/bugbout),
named `__NAME__`.

The plugin lives in `src/__MODULE__/plugin.py`: the `__HOOK__()` hook returns a
`__RECORD__` record (its name, its factory and its options model), and the package
publishes that module under the `bugbout` entry-point group in `pyproject.toml`:

```toml
[project.entry-points.bugbout]
__NAME__ = "__MODULE__.plugin"
```

## Install

```console
$ pip install -e .
$ bugbout plugins            # lists: __KIND__  __NAME__  __DIST__ 0.1.0 ...
```

## Use

__USAGE__

## Test

`tests/test_plugin.py` runs bugbout's conformance suite for `__KIND__` plugins
(`bugbout.testing.suites.__SUITE__`) on the installed plugin; add your own tests
next to it. `tests/conftest.py` loads `bugbout.testing.fixtures`.

```console
$ pip install -e '.[test]'
$ pytest
```

## Publish

Build and upload it like any Python package (`python -m build`, `twine upload dist/*`);
whoever installs it next to bugbout gets the `__NAME__` __KIND__ plugin, selectable from
the command line and from `bugbout.yaml` without any YAML of yours.
"""


# -- each kind's plugin ---------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One kind's plugin module, the tests that subclass its suite, and how to select it."""

    suite: str
    summary: str
    plugin: str
    tests: str
    usage: str


SUITE_ONLY = """
from typing import Any, ClassVar

from bugbout.testing.suites import __SUITE__


class Test__TITLE__(__SUITE__):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml
"""

JUDGE = '''\
"""The ``__NAME__`` judge policy: picks a patch only when every independent author's
reproductions pass with it and it changes no repository test at all.

bugbout's judging machinery (:mod:`bugbout.core.judging`) gathers the evidence from the
cross-examination matrix: each author's reproductions (their tests that fail on the
unfixed code), which of them a patch makes pass (a patch's own author never counts),
and the repository tests a patch stops passing. A policy only says which patches it
approves; among the approved, the best supported is picked, and with none bugbout
abstains.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judging import EvidenceJudge, JudgeOptions, PatchEvidence, unanimous_objection


class __TITLE__Policy(EvidenceJudge):
    """Approves a patch that passes every independent reproduction (there must be at
    least one) and keeps every repository test passing that passed before."""

    name = "__NAME__"

    def objection(self, patch: PatchEvidence) -> str | None:
        """Why the policy does not approve ``patch``; ``None`` when it does."""
        unanimous = unanimous_objection(patch)  # no reproduction, a failing one, a breakage
        if unanimous is not None:
            return unanimous
        if patch.breakages:  # even those most other patches share
            changed = [breakage.test for breakage in patch.breakages]
            return f"changes {len(changed)} repository test(s) (e.g. {changed[0]!r})"
        return None


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name="__NAME__",
        factory=__TITLE__Policy,
        options=JudgeOptions,
        description="every independent reproduction passes, no repository test changes",
    )
'''

JUDGE_TESTS = """
from typing import Any, ClassVar

from bugbout.core.judging import Judge
from bugbout.testing.suites import __SUITE__
from bugbout.testing.suites.judges import context, matrix


class Test__TITLE__(__SUITE__):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml

    def test_abstains_when_every_fix_changes_a_repository_test(
        self, plugin_under_test: Judge
    ) -> None:
        # one row per test: its outcome on the unfixed code, then with each patch
        sample = matrix(
            ["alpha", "beta"],
            {"exam/test_e.py::repro": "FPP", "suite/test_old.py::old": "PFF"},
        )
        verdict = plugin_under_test.judge(sample, context(sample))
        assert verdict.pick is None, verdict.reason
"""

REPORTER = '''\
"""The ``__NAME__`` reporter: a few lines of plain text about a bout.

A reporter turns bugbout's :class:`~bugbout.core.report.Report` (every figure of the
bout, computed from the store) into text. With a ``filename`` the text is written to
the store (``.bugbout/``); without one it is printed after the bout.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import ReporterPlugin, hookimpl
from bugbout.core.report import Report
from pydantic import BaseModel, ConfigDict


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` reporter."""

    model_config = ConfigDict(extra="forbid")

    filename: str | None = "__NAME__.txt"
    """The file written in the store; ``null`` prints the report instead."""


class __TITLE__Reporter:
    """Each contestant's resolve rate and each judge policy's picks, one line each."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.filename = self.options.filename

    def render(self, report: Report) -> str:
        lines = [f"bugbout: {report.found.scored} scored tasks of {report.found.tasks} found"]
        for agent in report.agents:
            rate = "-" if agent.resolve_rate is None else f"{agent.resolve_rate:.0%}"
            lines.append(f"{agent.contestant}: {agent.resolved}/{agent.scored} resolved ({rate})")
        for policy in report.picking.policies:
            lines.append(
                f"judge {policy.policy}: {policy.picks} picks, {policy.resolved} resolved, "
                f"{policy.abstentions} abstentions"
            )
        return "\\n".join(lines) + "\\n"


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name="__NAME__",
        factory=__TITLE__Reporter,
        options=__TITLE__Options,
        description="a few lines of text: resolve rates and each policy's picks",
    )
'''

AGENT = '''\
"""The ``__NAME__`` agent: bugbout's adapter for a coding agent's command line.

bugbout does everything around the agent (a fresh checkout, the sandbox, the timeout,
the logs, the patch, the scores); the adapter only says how to start it:
:meth:`~bugbout.core.agents.CodingAgent.invocation`. This one runs the configured
``command`` in the checkout, the prompt on its standard input. Adapt ``invocation``
(and ``parse``, for its summary and token usage) to your agent's CLI.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import AgentOptions, AgentPlugin, CodingAgent, Invocation, Session, hookimpl
from pydantic import Field


class __TITLE__Options(AgentOptions):
    """Options of the ``__NAME__`` agent (besides ``model``, ``name``, ``env``, ...)."""

    command: tuple[str, ...] = Field(default=("__NAME__",), min_length=1)
    """The agent's command line: the program (found on ``PATH``) and its arguments."""
    endpoints: tuple[str, ...] = ()
    """The model endpoints it must reach from the sandbox (``https://api.example.com``)."""


class __TITLE__Agent(CodingAgent):
    """Runs ``command`` in the checkout with the prompt on standard input."""

    harness = "__NAME__"
    Options = __TITLE__Options

    @property
    def executable(self) -> str:  # type: ignore[override]
        return str(self.options.command[0])

    def invocation(self, session: Session) -> Invocation:
        argv = [self.command(), *self.options.command[1:]]
        return Invocation(argv, stdin=session.prompt, endpoints=self.options.endpoints)


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name="__NAME__",
        factory=__TITLE__Agent.from_options,
        options=__TITLE__Options,
        description="a coding agent run by its command line, the prompt on standard input",
    )
'''

AUDITOR = '''\
"""The ``__NAME__`` auditor: bugbout's test gate, with a shorter kill report.

An auditor classifies one patch (RESOLVED, regressions, PARTIAL, ineffective, empty)
from test runs bugbout has already made: the gate with the patch and the same gate on
the unfixed code. It runs nothing and never changes a tree. This one delegates the
classification to :func:`bugbout.core.auditing.make_audit`, listing fewer tests.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import AuditorPlugin, hookimpl
from bugbout.core.auditing import AuditRequest, make_audit
from bugbout.core.records import Audit
from pydantic import BaseModel, ConfigDict, Field


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` auditor."""

    model_config = ConfigDict(extra="forbid")

    listed: int = Field(default=10, ge=1)
    """The most tests each section of the kill report lists."""


class __TITLE__Auditor:
    """The gate's verdict and route, with at most ``listed`` tests per section."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()

    def audit(self, request: AuditRequest) -> Audit:
        audit, _ = make_audit(request, auditor=self.name, limit=self.options.listed)
        return audit


@hookimpl
def bugbout_auditors() -> Iterator[AuditorPlugin]:
    yield AuditorPlugin(
        name="__NAME__",
        factory=__TITLE__Auditor,
        options=__TITLE__Options,
        description="the test gate, with a short kill report",
    )
'''

SANDBOX = '''\
"""The ``__NAME__`` sandbox: the platform's sandbox, with confined processes at a lower
CPU priority.

A sandbox wraps a command line so that it runs confined (:class:`Confinement`: its
working directory writable, private places masked, no network unless allowed). This one
delegates the confinement to bugbout's ``auto`` sandbox (bubblewrap on Linux, seatbelt
on macOS) and runs the command under ``nice`` inside it.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import SandboxPlugin, hookimpl
from bugbout.plugins.sandboxes.auto import Auto
from bugbout.sandbox.confinement import Confinement
from pydantic import BaseModel, ConfigDict, Field


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` sandbox."""

    model_config = ConfigDict(extra="forbid")

    niceness: int = Field(default=10, ge=0, le=19)
    """How much lower the confined processes' priority is (``nice -n``)."""


class __TITLE__Sandbox:
    """``auto``'s confinement around ``nice -n NICENESS <command>``."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.inner = Auto()

    def problem(self) -> str | None:
        return self.inner.problem()

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        return self.inner.wrap(["nice", "-n", str(self.options.niceness), *argv], confinement)


@hookimpl
def bugbout_sandboxes() -> Iterator[SandboxPlugin]:
    yield SandboxPlugin(
        name="__NAME__",
        factory=__TITLE__Sandbox,
        options=__TITLE__Options,
        description="the platform's sandbox, at a lower CPU priority",
    )
'''

EXECUTOR = '''\
"""The ``__NAME__`` executor: a pool of processes on this machine.

An executor dispatches a bout's jobs (its attempts) and hands back a future for each;
bugbout itself keeps every quota lane to its limit. These jobs run in other processes,
so ``in_process`` is ``False``: bugbout then submits picklable, self-contained jobs.
Replace the pool with your scheduler's client (Dask, a batch queue, ...).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

from bugbout import ExecutorPlugin, hookimpl
from pydantic import BaseModel, ConfigDict, Field

R = TypeVar("R")


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` executor."""

    model_config = ConfigDict(extra="forbid")

    workers: int = Field(default=2, ge=1)
    """The most jobs running at once, one process each."""


class __TITLE__Executor:
    """Runs each job in one of ``workers`` processes, started on the first job."""

    name = "__NAME__"
    in_process = False

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.pool: ProcessPoolExecutor | None = None
        self.closed = False
        self.lock = threading.Lock()  # submit() is called from several threads

    def problem(self) -> str | None:
        return None

    def submit(self, job: Callable[[], R]) -> Future[R]:
        with self.lock:
            if self.closed:
                raise RuntimeError("the __NAME__ executor is closed")
            if self.pool is None:
                spawn = multiprocessing.get_context("spawn")  # fresh processes, no forked threads
                self.pool = ProcessPoolExecutor(self.options.workers, mp_context=spawn)
            return self.pool.submit(job)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            pool, self.pool = self.pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


@hookimpl
def bugbout_executors() -> Iterator[ExecutorPlugin]:
    yield ExecutorPlugin(
        name="__NAME__",
        factory=__TITLE__Executor,
        options=__TITLE__Options,
        description="a pool of processes on this machine",
    )
'''

ENV = '''\
"""The ``__NAME__`` environment: an existing Python interpreter, with variables set for
the project's tests.

An environment builder prepares what a task's tests run in, once per project era, and
the environment turns a pytest command line into the exact command to run. This one
delegates to bugbout's ``interpreter`` builder and adds ``variables`` to every command.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from bugbout import Command, EnvironmentPlugin, EnvironmentRequest, hookimpl
from bugbout.core.environment import Environment
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterOptions
from pydantic import BaseModel, ConfigDict, Field


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` environment."""

    model_config = ConfigDict(extra="forbid")

    python: str | None = None
    """The interpreter (a path or a command); by default the one bugbout runs on."""
    variables: dict[str, str] = Field(default_factory=dict)
    """Environment variables for every test run, e.g. ``{TZ: UTC}``."""


class __TITLE__Environment:
    """The interpreter's environment, with the variables added."""

    def __init__(self, inner: Environment, variables: dict[str, str]) -> None:
        self.inner = inner
        self.variables = variables

    @property
    def description(self) -> str:
        return f"__NAME__: {self.inner.description}"

    @property
    def key(self) -> str:
        return self.inner.key

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        command = self.inner.command(args, tree, extra_paths)
        return command.model_copy(update={"env": {**command.env, **self.variables}})


class __TITLE__Builder:
    """Builds the interpreter's environment and wraps it."""

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.inner = InterpreterBuilder(InterpreterOptions(path=self.options.python))

    def build(self, request: EnvironmentRequest) -> __TITLE__Environment:
        return __TITLE__Environment(self.inner.build(request), dict(self.options.variables))


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="__NAME__",
        factory=__TITLE__Builder,
        options=__TITLE__Options,
        description="an existing Python interpreter, with variables for the tests",
    )
'''

MINER = '''\
"""The ``__NAME__`` miner: fixes from the git history, limited to some directories.

A miner walks a repository's history and returns the fixes agents will replay, newest
first, with how much it examined and why it left the rest out. This one delegates to
bugbout's ``git-history`` miner and keeps only the fixes whose source changes lie under
``paths``.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import MinerPlugin, MiningRequest, TaskSet, hookimpl
from bugbout.core.mining import TitleLookup
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from pydantic import BaseModel, ConfigDict

OUTSIDE_PATHS = "outside-paths"
"""Why a fix was left out: it changes source files outside ``paths``."""


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` miner."""

    model_config = ConfigDict(extra="forbid")

    paths: tuple[str, ...] = ()
    """Directories of the repository; a fix counts when every source file it changes lies
    under one of them (every fix counts when empty)."""


class __TITLE__Miner:
    """``git-history``'s fixes, those outside ``paths`` left out."""

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.history = GitHistoryMiner(GitHistoryOptions())

    def mine(self, request: MiningRequest, titles: TitleLookup | None = None) -> TaskSet:
        found = self.history.mine(request, titles)
        kept = [task for task in found.tasks if all(map(self.inside, task.source_files))]
        if len(kept) < len(found.tasks):
            found.exclude(OUTSIDE_PATHS, len(found.tasks) - len(kept))
        return found.model_copy(update={"tasks": kept})

    def inside(self, path: str) -> bool:
        if not self.options.paths:
            return True
        return any(path.startswith(d.rstrip("/") + "/") for d in self.options.paths)


@hookimpl
def bugbout_miners() -> Iterator[MinerPlugin]:
    yield MinerPlugin(
        name="__NAME__",
        factory=__TITLE__Miner,
        options=__TITLE__Options,
        description="git-history, limited to fixes under some directories",
    )
'''

ISSUE_SOURCE = '''\
"""The ``__NAME__`` issue source: issues kept as Markdown files in the repository.

An issue source turns the number a fix names into the issue's title and text, which
become the task's problem statement; it returns ``None`` for an issue it does not know,
and bugbout asks the next source. This one reads ``DIRECTORY/<number>.md``: the first
line is the title (a leading ``#`` is dropped), the rest the body. Replace ``fetch``
with a call to your tracker's API (raise ``IssueSourceUnavailable`` when it is down).
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import Issue, IssueRequest, IssueSourcePlugin, hookimpl
from pydantic import BaseModel, ConfigDict


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` issue source."""

    model_config = ConfigDict(extra="forbid")

    directory: str = "issues"
    """The directory of the issue files, relative to the repository."""


class __TITLE__Issues:
    """Issue ``N`` is the file ``DIRECTORY/N.md``."""

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()

    def fetch(self, request: IssueRequest) -> Issue | None:
        path = request.repository / self.options.directory / f"{request.number}.md"
        if not path.is_file():
            return None
        title, _, body = path.read_text(encoding="utf-8").partition("\\n")
        return Issue(number=request.number, title=title.lstrip("#").strip(), body=body.strip())


@hookimpl
def bugbout_issue_sources() -> Iterator[IssueSourcePlugin]:
    yield IssueSourcePlugin(
        name="__NAME__",
        factory=__TITLE__Issues,
        options=__TITLE__Options,
        description="issues as Markdown files in the repository (option: directory)",
    )
'''

EXAMINER = '''\
"""The ``__NAME__`` examiner assignment: reproductions, edge cases included.

An examiner is an agent that writes tests from the issue alone and fixes nothing; its
assignment is the prompt it receives and what its tests must do on the unfixed code.
Tests that must fail there are reproductions: they cross-examine every contestant's
patch. This one asks for the reported case and its neighbouring edge cases, through
bugbout's shared examiner prompt (:func:`bugbout.core.examining.examiner_prompt`).
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import ExaminerPlugin, Task, hookimpl
from bugbout.core.examining import examiner_prompt
from pydantic import BaseModel, ConfigDict

SCOPE = (
    "Write tests for the behaviour the issue reports and for its edge cases (empty, "
    "smallest and largest inputs, boundaries): each must fail on the code as it is now "
    "and pass once the issue is fixed."
)


class __TITLE__Options(BaseModel):
    """Options of the ``__NAME__`` assignment."""

    model_config = ConfigDict(extra="forbid")

    scope: str = SCOPE
    """What the examiner is asked to test."""


class __TITLE__Assignment:
    """Reproductions of the issue and its edge cases: each must fail on the unfixed code."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()

    def prompt(self, task: Task, *, tests: str, test_command: str) -> str:
        return examiner_prompt(
            task, tests=tests, test_command=test_command, scope=self.options.scope
        )

    def must_fail_on_base(self) -> bool:
        return True


@hookimpl
def bugbout_examiners() -> Iterator[ExaminerPlugin]:
    yield ExaminerPlugin(
        name="__NAME__",
        factory=__TITLE__Assignment,
        options=__TITLE__Options,
        description="reproductions of the issue and its edge cases",
    )
'''

ISSUE_SOURCE_TESTS = """
from pathlib import Path
from typing import Any, ClassVar

from bugbout import IssueRequest
from bugbout.testing.suites import __SUITE__


class Test__TITLE__(__SUITE__):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml

    def test_reads_an_issue_file(self, plugin_under_test: Any, tmp_path: Path) -> None:
        (tmp_path / "issues").mkdir()
        (tmp_path / "issues" / "7.md").write_text("# Crash on empty input\\n\\nIt crashes.\\n")
        issue = plugin_under_test.fetch(IssueRequest(number=7, repository=tmp_path))
        assert (issue.number, issue.title, issue.body) == (7, "Crash on empty input", "It crashes.")
        assert plugin_under_test.fetch(IssueRequest(number=8, repository=tmp_path)) is None
"""

TEMPLATES: dict[str, Template] = {
    "miner": Template(
        "MinerSuite",
        "Fixes from the git history, limited to some directories",
        MINER,
        SUITE_ONLY,
        """\
```console
$ bugbout tasks miner=__NAME__ '+miner.paths=[src/mypkg/core]'
```

or in `bugbout.yaml`:

```yaml
miner: {name: __NAME__, paths: [src/mypkg/core]}
```""",
    ),
    "issue-source": Template(
        "IssueSourceSuite",
        "Issues kept as Markdown files in the repository",
        ISSUE_SOURCE,
        ISSUE_SOURCE_TESTS,
        """\
Name it among the issue sources bugbout asks, in order, in `bugbout.yaml`:

```yaml
tasks:
  issue-sources: [__NAME__, github, commit]
issue-source:
  __NAME__: {directory: docs/issues}
```""",
    ),
    "env": Template(
        "EnvironmentSuite",
        "An existing Python interpreter, with variables for the tests",
        ENV,
        SUITE_ONLY,
        """\
```console
$ bugbout tasks env=__NAME__ '+env.variables={TZ: UTC}'
```""",
    ),
    "agent": Template(
        "AgentSuite",
        "An adapter for a coding agent's command line",
        AGENT,
        SUITE_ONLY,
        """\
Define contestants that use it in `bugbout.yaml`:

```yaml
contestants:
  mine: {agent: __NAME__, command: [__NAME__, --yes], endpoints: ["https://api.example.com"]}
```

then `bugbout run contestant=mine`.""",
    ),
    "sandbox": Template(
        "SandboxSuite",
        "The platform's sandbox, at a lower CPU priority",
        SANDBOX,
        SUITE_ONLY,
        """\
```console
$ bugbout run sandbox=__NAME__ +sandbox.niceness=15
```""",
    ),
    "executor": Template(
        "ExecutorSuite",
        "A pool of processes on this machine",
        EXECUTOR,
        SUITE_ONLY,
        """\
```console
$ bugbout run executor=__NAME__ +executor.workers=4
```

Each quota lane still runs at most its quota of attempts at once (`run.quotas`).""",
    ),
    "examiner": Template(
        "ExaminerSuite",
        "Reproductions of the issue and its edge cases",
        EXAMINER,
        SUITE_ONLY,
        """\
Give an examiner agent this assignment in `bugbout.yaml`:

```yaml
examiners:
  edges: {agent: codex, assignment: __NAME__}
```""",
    ),
    "judge": Template(
        "JudgeSuite",
        "A cautious judge policy",
        JUDGE,
        JUDGE_TESTS,
        """\
```console
$ bugbout run judge=__NAME__
```

The verdicts (`.bugbout/verdicts.json`) and the reports then show the `__NAME__` policy.""",
    ),
    "auditor": Template(
        "AuditorSuite",
        "The test gate with a short kill report",
        AUDITOR,
        SUITE_ONLY,
        """\
```console
$ bugbout run auditor=__NAME__ +auditor.listed=5
```""",
    ),
    "reporter": Template(
        "ReporterSuite",
        "A tiny plain-text report",
        REPORTER,
        SUITE_ONLY,
        """\
```console
$ bugbout run 'reporters=[terminal,__NAME__]'   # writes .bugbout/__NAME__.txt
$ bugbout report --format __NAME__
```""",
    ),
}
"""Each kind's template, in the order of :data:`bugbout.core.types.KINDS`."""
