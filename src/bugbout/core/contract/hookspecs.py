"""The hook specifications: the whole contract between bugbout and its plugins.

Two families of hooks:

- **registration hooks**, ``bugbout_<kinds>()``, one per plugin kind, each returning
  records (:mod:`bugbout.core.contract.types`) that name a plugin, its factory and its options;
- **lifecycle hooks**, ``bugbout_after_<stage>(record)``, called with the record a
  stage has just written.

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
    from bugbout.core.store.records import Oracle, TaskSet

PROJECT_NAME = "bugbout"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

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
    :class:`bugbout.core.plumbing.test_runner.TestRunner`: what a test file is, the tests
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
    (:class:`bugbout.core.plumbing.executor.Executor`).

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
    """Register auditors, which classify a patch (RESOLVED, regressions, PARTIAL,
    ineffective, empty) against the tests and a fail-on-base baseline.

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
def bugbout_after_mine(tasks: TaskSet) -> None:
    """Called once mining has written ``tasks.json``.

    :param tasks: the mined tasks and the exclusion summary, as stored.

    Example::

        @hookimpl
        def bugbout_after_mine(tasks):
            print(f"{len(tasks.tasks)} tasks from {tasks.examined} commits")
    """


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
