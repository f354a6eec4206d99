"""A spy plugin of every kind, each recording what bugbout gave it, and what the hook tests'
agents write on the one-bug repository of one_bug.py."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bugbout import (
    AgentOptions,
    AgentPlugin,
    AssignmentPlugin,
    AuditorPlugin,
    CodingAgent,
    EnvironmentPlugin,
    ExecutorPlugin,
    Invocation,
    IssueSourcePlugin,
    JudgePlugin,
    MinerPlugin,
    ReporterPlugin,
    SandboxPlugin,
    Session,
    TestRunnerPlugin,
    hookimpl,
)
from bugbout.core.audit.auditing import AuditRequest
from bugbout.core.judge.judging import (
    EvidenceJudge,
    JudgeContext,
    JudgeOptions,
    PatchEvidence,
    threshold_objection,
)
from bugbout.core.mine.issues import IssueRequest
from bugbout.core.mine.mining import MiningRequest, TitleLookup
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.testruns.test_runner import TestRunner
from bugbout.core.race.examining import examiner_prompt
from bugbout.core.report.report import Report
from bugbout.core.store.race_records import Audit
from bugbout.core.store.records import Issue, Oracle, OracleSet, Task, TaskSet
from bugbout.core.store.store import ORACLES, TASKS, Store
from bugbout.core.store.verdict_records import Matrix, Verdict
from bugbout.plugins.auditors.gate import Gate
from bugbout.plugins.environments.interpreter import InterpreterBuilder
from bugbout.plugins.executors.local import LocalExecutor, LocalOptions
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.sandbox import Confinement
from one_bug import FIXED

# -- the repository -----------------------------------------------------------------------

ISSUE_TITLE = "middle() of an even-length list is wrong"

FIXER = f"""
from pathlib import Path
Path("src/mid/core.py").write_text({FIXED!r})
print("Fixed middle() for even-length lists.")
"""
PROBER = """
from pathlib import Path
Path("tests/test_probe.py").write_text(
    "from mid.core import middle\\n\\n\\ndef test_even():\\n    assert middle([1, 2]) == 1.5\\n"
)
print("Wrote a reproduction.")
"""


# -- a spy plugin of every kind -------------------------------------------------------------


@dataclass
class Seen:
    """What bugbout handed each spy, in order."""

    mined: list[MiningRequest] = field(default_factory=list)
    asked: list[IssueRequest] = field(default_factory=list)
    built: list[EnvironmentRequest] = field(default_factory=list)
    ran: list[tuple[str, tuple[str, ...], bool]] = field(default_factory=list)
    """Each test run's label, targets and whether it mapped coverage."""
    installed: list[str] = field(default_factory=list)
    scripted: int = 0
    sessions: list[Session] = field(default_factory=list)
    wrapped: list[tuple[list[str], Confinement]] = field(default_factory=list)
    probed: int = 0
    prompted: list[tuple[Task, str, str]] = field(default_factory=list)
    submitted: int = 0
    judged: list[tuple[Matrix, JudgeContext]] = field(default_factory=list)
    audited: list[AuditRequest] = field(default_factory=list)
    rendered: list[Report] = field(default_factory=list)
    after_mine: list[tuple[TaskSet, TaskSet | None]] = field(default_factory=list)
    after_oracle: list[tuple[Oracle, Oracle | None]] = field(default_factory=list)


class SpyMiner:
    def __init__(self, options: Any) -> None:
        self.inner = GitHistoryMiner(GitHistoryOptions())

    def mine(
        self,
        request: MiningRequest,
        titles: TitleLookup | None = None,
        runner: TestRunner | None = None,
    ) -> TaskSet:
        SEEN.mined.append(request)
        return self.inner.mine(request, titles=titles, runner=runner)


class SpyIssues:
    def __init__(self, options: Any) -> None:
        pass

    def fetch(self, request: IssueRequest) -> Issue | None:
        SEEN.asked.append(request)
        if request.number != 1:
            return None
        return Issue(number=1, title=ISSUE_TITLE, body="`middle([1, 2])` gives 2, not 1.5.")


@dataclass(frozen=True)
class SpyEnvironment:
    inner: Any

    @property
    def description(self) -> str:
        return f"spy over {self.inner.description}"

    @property
    def key(self) -> str:
        return str(self.inner.key)

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Any:
        return self.inner.command(args, tree, extra_paths)


class SpyBuilder:
    def __init__(self, options: Any) -> None:
        self.inner = InterpreterBuilder()

    def build(self, request: EnvironmentRequest) -> SpyEnvironment:
        SEEN.built.append(request)
        return SpyEnvironment(self.inner.build(request))


class SpyRunner:
    """The pytest runner, recording what bugbout asks of it."""

    def __init__(self, options: Any) -> None:
        from bugbout.test_runners import create_plugin

        self.inner = create_plugin(TestRunnerPlugin, "pytest")
        self.style = self.inner.style

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def install_as(self, original: str, author: str, number: int) -> str:
        path: str = self.inner.install_as(original, author, number)
        SEEN.installed.append(path)
        return path

    def script_args(self, environment: Any, project: Any) -> list[str]:
        SEEN.scripted += 1
        args: list[str] = self.inner.script_args(environment, project)
        return args

    def run(self, request: Any) -> Any:
        SEEN.ran.append((request.label, request.targets, False))
        return self.inner.run(request)

    def run_with_coverage(self, request: Any) -> Any:
        SEEN.ran.append((request.label, request.targets, True))
        return self.inner.run_with_coverage(request)


class SpyAgentOptions(AgentOptions):
    code: str = ""
    """The Python program the agent runs."""


class SpyAgent(CodingAgent):
    harness = "spy-agent"
    executable = sys.executable
    Options = SpyAgentOptions

    def invocation(self, session: Session) -> Invocation:
        SEEN.sessions.append(session)
        return Invocation([self.command(), "-c", self.options.code], stdin=session.prompt)


class SpySandbox:
    name = "spy-sandbox"

    def __init__(self, options: Any) -> None:
        self.inner = Bubblewrap()

    def problem(self) -> str | None:
        SEEN.probed += 1
        return self.inner.problem()

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        SEEN.wrapped.append((list(argv), confinement))
        return self.inner.wrap(argv, confinement)


class SpyExecutor:
    name = "spy-executor"
    in_process = True

    def __init__(self, options: LocalOptions) -> None:
        self.inner = LocalExecutor(options)

    def problem(self) -> str | None:
        return None

    def submit(self, job: Callable[[], Any]) -> Future[Any]:
        SEEN.submitted += 1
        return self.inner.submit(job)

    def close(self) -> None:
        self.inner.close()


class SpyAssignment:
    name = "spy-assignment"

    def __init__(self, options: Any) -> None:
        pass

    def prompt(self, task: Task, *, tests: str, test_command: str, style: Any) -> str:
        SEEN.prompted.append((task, tests, test_command))
        return examiner_prompt(
            task, tests=tests, test_command=test_command, style=style, scope="Reproduce the bug."
        )

    def must_fail_on_base(self) -> bool:
        return True


class SpyJudge(EvidenceJudge):
    name = "spy-judge"

    def judge(self, matrix: Matrix, context: JudgeContext) -> Verdict:
        SEEN.judged.append((matrix, context))
        return super().judge(matrix, context)

    def objection(self, patch: PatchEvidence) -> str | None:
        return threshold_objection(patch, 0.5)


class SpyAuditor:
    name = "spy-auditor"

    def __init__(self, options: Any) -> None:
        self.inner = Gate()

    def audit(self, request: AuditRequest) -> Audit:
        SEEN.audited.append(request)
        return self.inner.audit(request).model_copy(update={"auditor": self.name})


class SpyReporter:
    name = "spy-reporter"
    filename = "spy.txt"

    def __init__(self, options: Any) -> None:
        pass

    def render(self, report: Report) -> str:
        SEEN.rendered.append(report)
        return "".join(f"{row.contestant}: {row.resolved}/{row.scored}\n" for row in report.agents)


class Spies:
    """One plugin module's worth of hooks: a record of every kind, and both lifecycle hooks."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @hookimpl
    def bugbout_miners(self) -> Iterator[MinerPlugin]:
        yield MinerPlugin(name="spy-miner", factory=SpyMiner)

    @hookimpl
    def bugbout_issue_sources(self) -> Iterator[IssueSourcePlugin]:
        yield IssueSourcePlugin(name="spy-issues", factory=SpyIssues)

    @hookimpl
    def bugbout_environments(self) -> Iterator[EnvironmentPlugin]:
        yield EnvironmentPlugin(name="spy-env", factory=SpyBuilder)

    @hookimpl
    def bugbout_test_runners(self) -> Iterator[TestRunnerPlugin]:
        yield TestRunnerPlugin(name="spy-runner", factory=SpyRunner)

    @hookimpl
    def bugbout_agents(self) -> Iterator[AgentPlugin]:
        yield AgentPlugin(name="spy-agent", factory=SpyAgent.from_options, options=SpyAgentOptions)

    @hookimpl
    def bugbout_sandboxes(self) -> Iterator[SandboxPlugin]:
        yield SandboxPlugin(name="spy-sandbox", factory=SpySandbox)

    @hookimpl
    def bugbout_executors(self) -> Iterator[ExecutorPlugin]:
        yield ExecutorPlugin(name="spy-executor", factory=SpyExecutor, options=LocalOptions)

    @hookimpl
    def bugbout_assignments(self) -> Iterator[AssignmentPlugin]:
        yield AssignmentPlugin(name="spy-assignment", factory=SpyAssignment)

    @hookimpl
    def bugbout_judges(self) -> Iterator[JudgePlugin]:
        yield JudgePlugin(name="spy-judge", factory=SpyJudge, options=JudgeOptions)

    @hookimpl
    def bugbout_auditors(self) -> Iterator[AuditorPlugin]:
        yield AuditorPlugin(name="spy-auditor", factory=SpyAuditor)

    @hookimpl
    def bugbout_reporters(self) -> Iterator[ReporterPlugin]:
        yield ReporterPlugin(name="spy-reporter", factory=SpyReporter)

    @hookimpl
    def bugbout_after_mine(self, tasks: TaskSet) -> None:
        SEEN.after_mine.append((tasks.model_copy(deep=True), self.store.read(TASKS, TaskSet)))

    @hookimpl
    def bugbout_after_oracle(self, oracle: Oracle) -> None:
        stored = self.store.read(ORACLES, OracleSet)
        SEEN.after_oracle.append(
            (oracle.model_copy(deep=True), stored.root.get(oracle.task_id) if stored else None)
        )


SEEN = Seen()
