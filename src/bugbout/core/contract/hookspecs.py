"""The hook specifications: the whole contract between bugbout and its plugins.

Two families of hooks:

- **registration hooks**, ``bugbout_<kinds>()``, one per plugin kind, each returning
  records (:mod:`bugbout.core.contract.types`) that name a plugin, its factory and its options;
- **lifecycle hooks**, ``bugbout_before_<stage>(...)`` with a stage's input and
  ``bugbout_after_<stage>(...)`` with the records it has just written, for each stage
  of :data:`STAGES`; pluggy calls them in its own order (``tryfirst``, ``trylast``,
  ``wrapper=True``).

A plugin module implements any of them with ``from bugbout import hookimpl`` and is
published under the ``bugbout`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pathlib import Path

    from bugbout.core.contract.transcript import Step
    from bugbout.core.contract.types import (
        AgentPlugin,
        AssignmentPlugin,
        AuditorPlugin,
        EnvironmentPlugin,
        ExecutorPlugin,
        IssueSourcePlugin,
        JudgePlugin,
        MinerPlugin,
        ReporterPlugin,
        SandboxPlugin,
        TestRunnerPlugin,
    )
    from bugbout.core.report.report import Report
    from bugbout.core.store.race_records import Attempt, Audit
    from bugbout.core.store.records import Oracle, OracleSet, Task, TaskSet
    from bugbout.core.store.verdict_records import Matrix, PatchResolution, Verdict

PROJECT_NAME = "bugbout"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

STAGES = ("mine", "truth", "race", "crossexam", "judge", "score", "audit", "report")
"""The stages, in a bout's order: each has a ``bugbout_before_`` and a ``bugbout_after_``
hook."""
RENAMED_HOOKS = {"bugbout_examiners": "bugbout_assignments"}
"""Registration hooks that were renamed: a plugin that implements the old name is still
collected, into the kind of the new one, with a note to rename it."""


# -- registration hooks -------------------------------------------------------------------


@hookspec
def bugbout_miners() -> Iterable[MinerPlugin]:
    """Register miners, which find replayable fixes in a repository's history.

    A miner's implementation has
    ``mine(request: MiningRequest, titles: TitleLookup | None = None) -> TaskSet``;
    ``titles(number)`` gives a pull request's title from the issue sources, for merges.

    :return: miner records.

    Example::

        @hookimpl
        def bugbout_miners():
            yield MinerPlugin(name="changelog", factory=ChangelogMiner)
    """


@hookspec
def bugbout_issue_sources() -> Iterable[IssueSourcePlugin]:
    """Register issue sources, which turn an issue number into its title and text.

    An issue source's implementation has ``fetch(request: IssueRequest) -> Issue | None``;
    ``None`` means it does not know the issue, and the next source is asked.

    :return: issue source records.

    Example::

        @hookimpl
        def bugbout_issue_sources():
            yield IssueSourcePlugin(name="jira", factory=JiraIssues, options=JiraOptions)
    """


@hookspec
def bugbout_environments() -> Iterable[EnvironmentPlugin]:
    """Register environment builders, which prepare what the project's tests run in.

    An environment builder's implementation has
    ``build(request: EnvironmentRequest) -> Environment``; the environment turns a pytest
    command line and a tree into the command to run (``Environment.command``).

    :return: environment builder records (selected with ``environment=<name>``).

    Example::

        @hookimpl
        def bugbout_environments():
            yield EnvironmentPlugin(name="conda", factory=CondaBuilder, options=CondaOptions)
    """


@hookspec
def bugbout_test_runners() -> Iterable[TestRunnerPlugin]:
    """Register test runners, which run a project's tests and report each one's outcome
    by id (pytest; a JavaScript runner such as Vitest or Jest).

    A test runner's implementation follows
    :class:`bugbout.core.plumbing.testruns.test_runner.TestRunner`: what a test file is, the tests
    a file defines, where the suite is and where agents write tests, a run of chosen
    files with outcomes by id, and the map of which functions each test runs (or
    ``None``: it cannot tell, and every patch runs the whole suite).

    :return: test runner records (selected with ``test-runner=<name>``).

    Example::

        @hookimpl
        def bugbout_test_runners():
            yield TestRunnerPlugin(name="vitest", factory=Vitest, options=VitestOptions)
    """


@hookspec
def bugbout_agents() -> Iterable[AgentPlugin]:
    """Register coding agents, which play contestants (fixing) or examiners (testing).

    :return: agent records (selected with ``contestant=<name>``).

    Example::

        @hookimpl
        def bugbout_agents():
            yield AgentPlugin(name="aider", factory=Aider, options=AiderOptions)
    """


@hookspec
def bugbout_sandboxes() -> Iterable[SandboxPlugin]:
    """Register sandboxes, which confine agents and test runs (no network, writes only
    in their own checkout, the original repository and the store masked).

    :return: sandbox records (selected with ``sandbox=<name>``).

    Example::

        @hookimpl
        def bugbout_sandboxes():
            yield SandboxPlugin(name="firejail", factory=Firejail)
    """


@hookspec
def bugbout_executors() -> Iterable[ExecutorPlugin]:
    """Register executors, which dispatch a bout's jobs (attempts) to workers: threads
    in this process, or processes on a cluster. Quota lanes stay with bugbout.

    An executor's implementation has ``submit(job) -> Future`` and ``close()``
    (:class:`bugbout.core.plumbing.runtime.executor.Executor`).

    :return: executor records (selected with ``executor=<name>``).

    Example::

        @hookimpl
        def bugbout_executors():
            yield ExecutorPlugin(name="dask", factory=DaskExecutor, options=DaskOptions)
    """


@hookspec
def bugbout_assignments() -> Iterable[AssignmentPlugin]:
    """Register assignments (``reproduce``, ``specify``): what an examiner agent is asked
    for, its prompt, and how the tests it writes are validated.

    :return: assignment records, named by an examiner's ``assignment`` option
        (``examiners: {probe: {agent: codex, assignment: specify}}``), or by a map that
        names the plugin and sets its options
        (``assignment: {assignment: edge-cases, scope: ...}``); ``examiner=<name>``
        chooses an examiner, an agent, not an assignment.

    Example::

        @hookimpl
        def bugbout_assignments():
            yield AssignmentPlugin(name="property", factory=PropertyTests)
    """


@hookspec
def bugbout_judges() -> Iterable[JudgePlugin]:
    """Register judge policies, which pick one patch per task, or abstain, from the
    cross-examination matrix.

    :return: judge records (selected with ``judge=<name>``).

    Example::

        @hookimpl
        def bugbout_judges():
            yield JudgePlugin(name="cautious", factory=Cautious)
    """


@hookspec
def bugbout_auditors() -> Iterable[AuditorPlugin]:
    """Register auditors, which classify a patch (resolved, fixed-but-broke,
    partly-fixed, wrong-fix, no-fix) against the tests and a fail-on-base baseline.

    :return: auditor records (selected with ``auditor=<name>``).

    Example::

        @hookimpl
        def bugbout_auditors():
            yield AuditorPlugin(name="gate", factory=Gate)
    """


@hookspec
def bugbout_reporters() -> Iterable[ReporterPlugin]:
    """Register reporters, which render a bout's results.

    :return: reporter records (selected with ``reporter=<name>``).

    Example::

        @hookimpl
        def bugbout_reporters():
            yield ReporterPlugin(name="dashboard", factory=DashboardReporter)
    """


@hookspec(firstresult=True)
def bugbout_transcript(agent: str, logdir: Path) -> list[Step] | None:
    """Read what agent ``agent`` (a harness name, e.g. ``claude-code``) did from its log
    folder: its steps in order, or ``None`` when the plugin does not know the agent. The
    report shows the steps on the task's page; without them, the logs' tail.

    Example::

        @hookimpl
        def bugbout_transcript(agent, logdir):
            if agent != "my-agent":
                return None
            return [Step("final", (logdir / "answer.txt").read_text())]
    """


# -- lifecycle hooks ----------------------------------------------------------------------


@hookspec
def bugbout_before_mine(repository: Path) -> None:
    """Called before mining walks (or reuses the mining of) ``repository``."""


@hookspec
def bugbout_after_mine(tasks: TaskSet) -> None:
    """Called once mining has written ``tasks.json``.

    :param tasks: the mined tasks and the exclusion summary, as stored.

    Example::

        @hookimpl
        def bugbout_after_mine(tasks):
            print(f"{len(tasks.tasks)} tasks from {tasks.examined} commits")
    """


@hookspec
def bugbout_before_truth(tasks: TaskSet) -> None:
    """Called before the ground truth of ``tasks`` is computed or reused."""


@hookspec
def bugbout_after_truth(tasks: TaskSet, oracles: OracleSet) -> None:
    """Called once every task's oracle is in ``oracles.json`` and ``tasks`` say which
    are scored."""


@hookspec
def bugbout_after_oracle(oracle: Oracle) -> None:
    """Called each time a task's ground truth has been computed and stored.

    :param oracle: the task's oracle.

    Example::

        @hookimpl
        def bugbout_after_oracle(oracle):
            if oracle.unstable:
                print(oracle.task_id, "has flaky tests:", oracle.unstable)
    """


@hookspec
def bugbout_before_race(tasks: TaskSet, oracles: OracleSet) -> None:
    """Called before the contestants race on the scored ``tasks``."""


@hookspec
def bugbout_after_race(attempts: list[Attempt]) -> None:
    """Called once the race has ended, with the attempts it ran (not those reused)."""


@hookspec
def bugbout_before_crossexam(task: Task) -> None:
    """Called before ``task``'s test runs (cross-examination, scores, audits) start or
    are found in the store."""


@hookspec
def bugbout_after_crossexam(task: Task, matrix: Matrix) -> None:
    """Called with ``task``'s cross-examination matrix once its test runs are in."""


@hookspec
def bugbout_before_judge(task: Task, matrix: Matrix) -> None:
    """Called before the judge decides ``task`` on ``matrix``."""


@hookspec
def bugbout_after_judge(task: Task, verdict: Verdict) -> None:
    """Called with the judge's verdict on ``task`` (an abstention when it crashed).

    Example::

        @hookimpl(wrapper=True)
        def bugbout_after_judge(task, verdict):
            started = time.monotonic()
            yield  # the other implementations run here
            print(task.id, verdict.pick or "abstained", time.monotonic() - started)
    """


@hookspec
def bugbout_before_score(task: Task) -> None:
    """Called before ``task``'s patches are scored against its hidden tests."""


@hookspec
def bugbout_after_score(task: Task, resolutions: dict[str, PatchResolution]) -> None:
    """Called with the score of each of ``task``'s patches, by attempt."""


@hookspec
def bugbout_before_audit(task: Task) -> None:
    """Called before ``task``'s patches are audited."""


@hookspec
def bugbout_after_audit(task: Task, audits: dict[str, Audit]) -> None:
    """Called with the audits of ``task``'s patches, by attempt (empty when the auditor
    audited none)."""


@hookspec
def bugbout_before_report(report: Report) -> None:
    """Called before the reporters render ``report``."""


@hookspec
def bugbout_after_report(report: Report, files: list[str]) -> None:
    """Called once the reporters have written ``files`` (names in the output store)."""
