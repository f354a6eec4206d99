"""Injected bugs as tasks: mutants of the current code that the project's own tests catch.

The suite runs once on the commit (``miner.ref``) under the coverage plugin: the tests
that pass there, and which files' functions each runs, are the evidence. Mutations
(:mod:`bugbout.core.mine.mutation`) of those files are tried in an order drawn from
``miner.seed``, each against only the passing tests that ran its file (a test that runs
no function of the file cannot fail on a change inside one). A mutant is kept when some of
them fail and the others pass; one that fails the same tests as a kept mutant and reads
the same is a duplicate.

A kept mutant is written as two commits on a private ref (``refs/bugbout/mutants/``): the
mutant (the commit with the mutation) and its fix (the commit's own tree again). The task
is that fix, so its parent is the mutated code and everything after mining treats it as
any other fix; agents get a tree without history, never the ref.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable

from bugbout.core.contract.errors import BugboutError, EnvironmentFailure
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.mine.mutation import MutantOptions, Mutation, mutations, sample
from bugbout.core.mine.reported import source_lines, statement
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import (
    Environment,
    EnvironmentBuilder,
    EnvironmentRequest,
)
from bugbout.core.plumbing.project.testmodules import is_test_module
from bugbout.core.plumbing.runtime.progress import Progress
from bugbout.core.plumbing.selection.affected import CoverageMap, read_coverage
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.core.store.records import (
    FAILING,
    INJECTED_TIER,
    Outcome,
    RunStatus,
    Task,
    TaskIssue,
    TaskSet,
    TestRun,
)

REF_PREFIX = "refs/bugbout/mutants/"
# Why a tried mutation was left out.
SURVIVED = "survived"
BROKE_THE_RUN = "broke-the-run"
DUPLICATE = "duplicate"
OVER_LIMIT = "over-limit"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "bugbout", "GIT_AUTHOR_EMAIL": "bugbout@localhost",
    "GIT_COMMITTER_NAME": "bugbout", "GIT_COMMITTER_EMAIL": "bugbout@localhost",
}  # fmt: skip
"""Who the mutants' commits say wrote them (their dates are the commit's: the same
mutant is the same commit whenever it is mined)."""


@dataclass(frozen=True)
class SuiteRunner:
    """What a miner that runs the project's tests is given: the bout's environment
    builder and how its test runs are confined."""

    builder: EnvironmentBuilder
    project: ProjectSettings
    home: Path
    confine: Confine
    timeout: float
    """Seconds one pytest process may run."""

    def environment(self, tree: Path, date: str) -> Environment:
        """The environment of ``tree`` (the commit's era is ``date``)."""
        request = EnvironmentRequest(project=self.project, tree=tree, date=date, home=self.home)
        try:
            return self.builder.build(request)
        except EnvironmentFailure as exc:
            raise BugboutError(f"cannot build the environment to mutate in: {exc}") from None

    def run(
        self,
        environment: Environment,
        tree: Path,
        targets: list[str],
        *,
        label: str,
        skip: frozenset[str] = frozenset(),
        coverage: list[bytes] | None = None,
        test_timeout: float | None = None,
    ) -> TestRun:
        project = self.project
        if test_timeout is not None:
            project = project.model_copy(update={"test_timeout": test_timeout})
        return run_tests(
            environment, tree, targets, project=project, label=label, timeout=self.timeout,
            confine=self.confine, skip=skip, coverage=coverage, hostile=False,
        )  # fmt: skip


@runtime_checkable
class TestingMiner(Protocol):
    """A miner that runs the project's tests to find its tasks (``mutants``)."""

    def mine_tested(
        self, request: MiningRequest, runner: SuiteRunner, progress: Progress
    ) -> TaskSet:
        """The tasks found, with how many candidates were examined and left out."""
        ...


@dataclass(frozen=True)
class SuiteReach:
    """The suite on the unmutated commit: which passing tests ran each file."""

    run: TestRun
    reach: dict[str, frozenset[str]]

    @classmethod
    def of(cls, run: TestRun, coverage: CoverageMap) -> SuiteReach:
        passed = {test for test, outcome in run.outcomes.items() if outcome == Outcome.PASSED}
        reach: dict[str, set[str]] = {}
        for test in coverage.tests.keys() & passed:
            for path in coverage.files_of(test):
                reach.setdefault(path, set()).add(test)
        return cls(run, {path: frozenset(tests) for path, tests in reach.items()})


def mine_mutants(
    request: MiningRequest, options: MutantOptions, runner: SuiteRunner, progress: Progress
) -> TaskSet:
    """The mutants of ``options.ref`` the project's tests catch, as tasks."""
    found = TaskSet()
    with (
        Git(request.repository) as git,
        tempfile.TemporaryDirectory(prefix="bugbout-mutants-", dir=_work(runner.home)) as scratch,
    ):
        commit = git.resolve(options.ref or "HEAD")
        date = git.run("log", "-1", "--format=%cI", commit).strip()
        tree = Path(scratch) / "tree"
        git.export(commit, tree)
        environment = runner.environment(tree, date)
        progress.start("running the suite under coverage")
        evidence = _evidence(runner, environment, tree, options.test_timeout)
        progress.finish()
        candidates = sample(
            list(_candidates(tree, request.project, evidence, options)),
            seed=options.seed,
            per_function=options.per_function,
        )
        writer = _Writer(request.repository, commit, date)
        seen: set[tuple[frozenset[str], str]] = set()
        progress.start("validating mutants", total=options.limit)
        for number, mutation in enumerate(candidates):
            if len(found.tasks) == options.limit:
                found.examined += len(candidates) - number
                found.exclude(OVER_LIMIT, len(candidates) - number)
                break
            found.examined += 1
            failing, reason = _validate(
                mutation, runner=runner, environment=environment, tree=tree,
                evidence=evidence, options=options,
            )  # fmt: skip
            key = (frozenset(failing), mutation.normalised() if failing else "")
            if not reason and key in seen:
                reason = DUPLICATE
            if reason:
                found.exclude(reason)
                continue
            seen.add(key)
            task = _task(mutation, failing, evidence, writer, tree)
            found.tasks.append(task)
            progress.advance(f"{task.id} {mutation.path}:{mutation.line}")
        progress.finish()
    return found


def _work(home: Path) -> Path:
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    return work


def _evidence(
    runner: SuiteRunner, environment: Environment, tree: Path, test_timeout: float
) -> SuiteReach:
    """The suite's run under coverage, each test held to ``test_timeout`` as on a mutant
    (one that hangs is not evidence)."""
    chunks: list[bytes] = []
    run = runner.run(
        environment, tree, [runner.project.tests], label="mutants-base", coverage=chunks,
        test_timeout=test_timeout,
    )  # fmt: skip
    if run.status != RunStatus.OK:
        raise BugboutError(
            f"the suite ended {run.status.value} on the commit to mutate ({run.detail[-200:]}); "
            "make it pass there, or set miner.ref to a commit where it does"
        )
    return SuiteReach.of(run, read_coverage(chunks))


def _candidates(
    tree: Path, project: ProjectSettings, evidence: SuiteReach, options: MutantOptions
) -> Iterator[Mutation]:
    """Every mutation of the package's modules that some passing test runs."""
    for path in sorted(evidence.reach):
        if not path.endswith(".py") or is_test_module(path) or path.startswith(project.tests):
            continue
        if not any(PurePosixPath(path).is_relative_to(source) for source in project.source):
            continue
        try:  # bytes, not text: its line endings stay as they are
            text = (tree / path).read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        yield from mutations(path, text, options.operators)


def _validate(
    mutation: Mutation,
    *,
    runner: SuiteRunner,
    environment: Environment,
    tree: Path,
    evidence: SuiteReach,
    options: MutantOptions,
) -> tuple[dict[str, str], str]:
    """The tests that fail on ``mutation``, with their first error line (the others that
    ran its file passing), or why it is left out."""
    reached = evidence.reach[mutation.path]
    targets = sorted({_module(test) for test in reached})
    skip = frozenset(
        test for test in evidence.run.outcomes if _module(test) in targets and test not in reached
    )
    module = tree / mutation.path
    module.write_bytes(mutation.mutated.encode("utf-8"))
    try:
        run = runner.run(
            environment, tree, targets, label="mutant", skip=skip,
            test_timeout=options.test_timeout,
        )  # fmt: skip
    finally:
        module.write_bytes(mutation.original.encode("utf-8"))
    if run.status != RunStatus.OK or run.crashes or run.collection_errors:
        return {}, BROKE_THE_RUN
    failing = sorted(test for test in reached if run.outcomes.get(test) in FAILING)
    if not failing:
        return {}, SURVIVED
    if any(run.outcomes.get(test) != Outcome.PASSED for test in reached.difference(failing)):
        return {}, BROKE_THE_RUN
    return {test: run.failures.get(test, "") for test in failing}, ""


def _module(test: str) -> str:
    return test.split("::", 1)[0]


def _task(
    mutation: Mutation, failing: dict[str, str], evidence: SuiteReach, writer: _Writer, tree: Path
) -> Task:
    """The task of a kept mutant: its fix, whose parent is the mutant."""
    mutant, fix = writer.write(mutation)
    modules = sorted({_module(test) for test in evidence.reach[mutation.path]})
    failing_modules = sorted({_module(test) for test in failing})
    tests = [(tree / name).read_text("utf-8", errors="replace") for name in failing_modules]
    count = len(failing)
    return Task(
        id=Task.id_for(fix),
        tier=INJECTED_TIER,
        sha=fix,
        parent=mutant,
        date=writer.date,
        title=f"{count} test{'s' if count > 1 else ''} failing in {', '.join(failing_modules)}",
        issue=TaskIssue(number=0),
        problem_statement=statement(
            failing,
            withheld=[*mutation.mutated_lines, *source_lines(tests)],
            lead="These tests of the project fail:",
            close="They passed before a recent change to the code. Find the bug and fix it.",
        ),
        source_files=[mutation.path],
        test_files=modules,
        changed_test_files=modules,
    )


class _Writer:
    """Writes kept mutants into the repository as commits on private refs."""

    def __init__(self, repository: Path, commit: str, date: str) -> None:
        self.repository, self.commit, self.date = repository, commit, date
        self.tree = self._git("rev-parse", f"{commit}^{{tree}}")

    def write(self, mutation: Mutation) -> tuple[str, str]:
        """The mutant's commit and its fix's (the commit's tree again), and the ref."""
        mode = self._git("ls-tree", self.commit, "--", mutation.path).split(" ", 1)[0]
        blob = self._git("hash-object", "-w", "--stdin", data=mutation.mutated.encode("utf-8"))
        with tempfile.TemporaryDirectory(prefix="bugbout-index-") as scratch:
            index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            self._git("read-tree", self.commit, env=index)
            self._git("update-index", "--cacheinfo", f"{mode},{blob},{mutation.path}", env=index)
            tree = self._git("write-tree", env=index)
        mutant = self._commit(tree, self.commit, "An injected bug")
        fix = self._commit(self.tree, mutant, "The injected bug's fix")
        self._git("update-ref", f"{REF_PREFIX}{fix[:12]}", fix)
        return mutant, fix

    def _commit(self, tree: str, parent: str, message: str) -> str:
        env = {**_IDENTITY, "GIT_AUTHOR_DATE": self.date, "GIT_COMMITTER_DATE": self.date}
        return self._git("commit-tree", tree, "-p", parent, "-m", message, env=env)

    def _git(self, *args: str, data: bytes | None = None, env: dict[str, str] | None = None) -> str:
        result = subprocess.run(
            ["git", "-C", str(self.repository), *args],
            input=data,
            capture_output=True,
            env={**os.environ, **(env or {})},
            check=False,
        )
        if result.returncode:
            said = result.stderr.decode(errors="replace").strip().splitlines() or [""]
            raise GitError(f"git {args[0]} failed in {self.repository}: {said[-1]}")
        return result.stdout.decode().strip()
