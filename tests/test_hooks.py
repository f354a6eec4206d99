"""Every hook has a test of its own, ``test_hook_<name>``, checking that bugbout uses a plugin
registered through it (the registration hooks in one real bout of hook_spies.py's spies)."""

from __future__ import annotations

import ast
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bugbout.bout import Bout, Project
from bugbout.core.contract import hookspecs
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    RunSettings,
    TasksSettings,
)
from bugbout.core.judge.judging import JudgeContext
from bugbout.core.plumbing.runtime.executor import make_executor
from bugbout.core.store.store import Store
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix
from hook_spies import (
    FIXER,
    ISSUE_TITLE,
    PROBER,
    SEEN,
    Spies,
    SpyAgent,
    SpyAssignment,
    SpyAuditor,
    SpyBuilder,
    SpyExecutor,
    SpyIssues,
    SpyJudge,
    SpyMiner,
    SpyReporter,
    SpyRunner,
    SpySandbox,
)
from one_bug import one_bug_repository

TESTS_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Bouted:
    """A finished bout with the spies: its repository, store and plugins."""

    repo: Path
    store: Store
    plugins: Plugins
    problems: list[str]

    def stored(self, name: str) -> Any:
        return json.loads(self.store.path(name).read_text())


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Bouted:
    """One whole bout in which every stage is played by a spy plugin."""
    root = tmp_path_factory.mktemp("hooks")
    repo = one_bug_repository(root / "repo")
    settings = BoutSettings(
        project=ProjectSettings(source="src/mid", tests="tests"),
        issue_sources={n: {"issue-source": n} for n in ("spy-issues", "commit")},
        tasks=TasksSettings(reruns=1, timeout=120),
        miner=PluginChoice(name="spy-miner"),
        environment=PluginChoice(name="spy-env"),
        test_runner=PluginChoice(name="spy-runner"),
        sandbox=PluginChoice(name="spy-sandbox"),
        executor=PluginChoice(name="spy-executor"),
        judge=PluginChoice(name="spy-judge"),
        auditor=PluginChoice(name="spy-auditor"),
        reporters={"spy-reporter": {"reporter": "spy-reporter"}},
        run=RunSettings(timeout=60),
        contestant={"fixer": {"agent": "spy-agent", "code": FIXER}},
        examiner={"prober": {"agent": "spy-agent", "code": PROBER, "assignment": "spy-assignment"}},
        root=repo.path,
    )
    plugins = make_plugins(entry_points=False)
    store = Store(settings.store_dir)
    plugins.register(Spies(store), name="spies", distribution="bugbout-spies 1.0")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(root / "home"))
        Bout(Project(settings, plugins)).run()
    return Bouted(repo.path, store, plugins, list(plugins.problems))


@pytest.fixture
def task_id(bout: Bouted) -> str:
    (task,) = bout.stored("tasks.json")["tasks"]
    return str(task["id"])


def attempt(bout: Bouted, task_id: str, name: str) -> dict[str, Any]:
    (record,) = bout.store.path(f"attempts/{task_id}/{name}").glob("*.json")
    return json.loads(record.read_text())


@pytest.mark.slow
def test_the_spies_raise_no_problem(bout: Bouted) -> None:
    assert bout.problems == []
    assert {plugin.distribution for plugin in bout.plugins.all() if "spy" in plugin.name} == {
        "bugbout-spies 1.0"
    }


# -- registration hooks ---------------------------------------------------------------------


@pytest.mark.slow
def test_hook_miners(bout: Bouted) -> None:
    assert isinstance(bout.plugins.create("miner", "spy-miner"), SpyMiner)
    (request,) = SEEN.mined
    assert request.repository == bout.repo
    assert request.project.source == ("src/mid",)
    (task,) = bout.stored("tasks.json")["tasks"]
    assert task["title"] == "Fix middle of even-length lists (#1)"
    assert task["test_files"] == ["tests/test_core.py"]


@pytest.mark.slow
def test_hook_issue_sources(bout: Bouted, task_id: str) -> None:
    assert isinstance(bout.plugins.create("issue-source", "spy-issues"), SpyIssues)
    asked = [request for request in SEEN.asked if request.commit_message]
    assert [request.number for request in asked] == [1]
    assert asked[0].commit_message.startswith("Fix middle of even-length lists (#1)")
    (task,) = bout.stored("tasks.json")["tasks"]
    assert task["issue"]["title"] == ISSUE_TITLE
    assert task["problem_statement"] == f"{ISSUE_TITLE}\n\n`middle([1, 2])` gives 2, not 1.5."


@pytest.mark.slow
def test_hook_environments(bout: Bouted, task_id: str) -> None:
    assert isinstance(bout.plugins.create("environment", "spy-env"), SpyBuilder)
    (task,) = bout.stored("tasks.json")["tasks"]
    assert SEEN.built
    assert {request.date for request in SEEN.built} == {task["date"]}
    oracle = bout.stored("oracles.json")[task_id]
    assert oracle["status"] == "ok"
    assert oracle["environment"].startswith("spy over interpreter: Python")
    assert oracle["fail_to_pass"] == ["tests/test_core.py::test_even"]


@pytest.mark.slow
def test_hook_test_runners(bout: Bouted, task_id: str) -> None:
    # ground truth, the examiner's validation, the base run (with its coverage map), the
    # cross-examination's columns and the audit's gate all ran through the chosen runner
    assert isinstance(bout.plugins.create("test-runner", "spy-runner"), SpyRunner)
    labels = [label for label, _, _ in SEEN.ran]
    assert labels[:2] == ["before-1", "after-1"]
    assert ("before-1", ("tests/test_core.py",), False) in SEEN.ran
    assert "unfixed" in labels
    assert [label for label, _, mapped in SEEN.ran if mapped] == ["baseline"]
    assert UNFIXED in labels and "fixer" in labels
    assert "gate" in labels
    assert SEEN.installed[0] == "tests/test_bb_prober__probe.py"
    assert SEEN.scripted == 2  # the contestant's and the examiner's test command
    oracle = bout.stored("oracles.json")[task_id]
    assert oracle["fail_to_pass"] == ["tests/test_core.py::test_even"]


@pytest.mark.slow
def test_hook_agents(bout: Bouted, task_id: str) -> None:
    agent = bout.plugins.create("agent", "spy-agent", {"code": "pass", "model": "m"})
    assert isinstance(agent, SpyAgent)
    assert agent.name == "spy-agent/m"
    fixer = attempt(bout, task_id, "fixer")
    assert (fixer["agent"], fixer["status"]) == ("spy-agent", "finished")
    assert [change["path"] for change in fixer["patch"]["files"]] == ["src/mid/core.py"]
    assert all(ISSUE_TITLE in session.prompt for session in SEEN.sessions)
    assert len(SEEN.sessions) == 2  # the contestant and the examiner
    assert bout.stored("resolutions.json")[task_id]["patches"]["fixer"]["score"] == "resolved"


@pytest.mark.slow
def test_hook_sandboxes(bout: Bouted) -> None:
    assert isinstance(bout.plugins.create("sandbox", "spy-sandbox"), SpySandbox)
    assert SEEN.probed >= 1
    commands = [" ".join(argv) for argv, _ in SEEN.wrapped]
    assert any(FIXER in command for command in commands)  # the agent ran confined
    assert any("-m pytest" in command for command in commands)  # and so did the tests
    assert all(not confinement.network for _, confinement in SEEN.wrapped)
    assert all(confinement.workdir.is_absolute() for _, confinement in SEEN.wrapped)


@pytest.mark.slow
def test_hook_executors(bout: Bouted, task_id: str) -> None:
    # the task's ground truth, every attempt and the task's verdict test runs went
    # through the configured executor
    attempts = list(bout.store.path(f"attempts/{task_id}").glob("*/*.json"))
    assert SEEN.submitted == 1 + len(attempts) + 1
    settings = BoutSettings(
        project=ProjectSettings(source="src/mid"),
        executor=PluginChoice.model_validate({"name": "spy-executor", "workers": 2}),
    )
    executor = make_executor(settings, bout.plugins)
    assert isinstance(executor, SpyExecutor)
    assert executor.inner.options.workers == 2
    before = SEEN.submitted
    try:
        assert executor.submit(lambda: 6 * 7).result(timeout=60) == 42
    finally:
        executor.close()
    assert SEEN.submitted == before + 1


@pytest.mark.slow
def test_hook_assignments(bout: Bouted, task_id: str) -> None:
    assert isinstance(bout.plugins.create("assignment", "spy-assignment"), SpyAssignment)
    ((task, tests, test_command),) = SEEN.prompted
    assert (task.id, tests) == (task_id, "tests")
    assert test_command
    prober = attempt(bout, task_id, "prober")
    examination = prober["examination"]
    assert (prober["role"], examination["assignment"]) == ("examiner", "spy-assignment")
    assert examination["reproductions"] == ["tests/test_probe.py::test_even"]


@pytest.mark.slow
def test_hook_judges(bout: Bouted, task_id: str, plugins: Plugins) -> None:
    plugins.register(Spies(bout.store), name="spies")
    judge = plugins.create("judge", "spy-judge")
    assert isinstance(judge, SpyJudge)
    repro, kept = "tests/test_bb_prober__probe.py::test_even", "tests/test_core.py::test_odd"
    matrix = Matrix(
        task_id="t1",
        patches=[UNFIXED, "right", "wrong"],
        authors={"prober": [repro], SUITE: [kept]},
        outcomes={
            UNFIXED: {repro: "failed", kept: "passed"},
            "right": {repro: "passed", kept: "passed"},
            "wrong": {repro: "failed", kept: "passed"},
        },
    )
    verdict = judge.judge(matrix, JudgeContext(task_id="t1", examiners={"prober": "reproduce"}))
    assert (verdict.policy, verdict.pick, verdict.approved) == ("spy-judge", "right", ["right"])
    stored = bout.stored("verdicts.json")[task_id]["spy-judge"]
    assert stored["pick"] == "fixer"
    (bout_matrix, context) = SEEN.judged[0]
    assert bout_matrix.task_id == task_id
    assert set(bout_matrix.patches) == {UNFIXED, "fixer"}
    assert context.examiners == {"prober": "spy-assignment"}


@pytest.mark.slow
def test_hook_auditors(bout: Bouted, task_id: str) -> None:
    assert isinstance(bout.plugins.create("auditor", "spy-auditor"), SpyAuditor)
    (request,) = SEEN.audited
    assert request.attempt.contestant == "fixer"
    assert request.oracle is not None and not request.visible_only
    assert request.must_pass == ["tests/test_core.py::test_even"]
    audit = bout.stored("audits.json")[task_id]["fixer"]
    assert (audit["auditor"], audit["verdict"], audit["route"]) == (
        "spy-auditor",
        "resolved",
        "none",
    )


@pytest.mark.slow
def test_hook_reporters(bout: Bouted) -> None:
    assert isinstance(bout.plugins.create("reporter", "spy-reporter"), SpyReporter)
    assert SEEN.rendered
    assert SEEN.rendered[-1].contestants == ["fixer"]
    assert bout.store.path("spy.txt").read_text() == "fixer: 1/1\n"


# -- lifecycle hooks ------------------------------------------------------------------------


@pytest.mark.slow
def test_hook_after_mine(bout: Bouted) -> None:
    ((tasks, stored),) = SEEN.after_mine
    assert stored is not None
    assert tasks == stored  # the task set as written to tasks.json
    assert [task.problem_statement.splitlines()[0] for task in tasks.tasks] == [ISSUE_TITLE]
    assert all(task.scored for task in tasks.tasks)  # ground truth has not run yet


@pytest.mark.slow
def test_hook_after_oracle(bout: Bouted, task_id: str) -> None:
    ((oracle, stored),) = SEEN.after_oracle
    assert stored is not None
    assert oracle == stored  # the oracle as written to oracles.json
    assert oracle.task_id == task_id
    assert oracle.fail_to_pass == ["tests/test_core.py::test_even"]


# -- every hook has a test ------------------------------------------------------------------


def hook_names() -> list[str]:
    """Every hook bugbout defines (each a function marked as a hook specification)."""
    names = [
        name
        for name, value in vars(hookspecs).items()
        if name.startswith("bugbout_") and inspect.isfunction(value)
    ]
    unmarked = [name for name in names if not hasattr(getattr(hookspecs, name), "bugbout_spec")]
    assert not unmarked, f"not marked @hookspec: {unmarked}"
    return names


def defined_tests() -> set[str]:
    """The name of every function defined in the test suite's modules."""
    found: set[str] = set()
    for path in TESTS_DIR.rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.add(node.name)
    return found


def test_every_hook_has_a_test() -> None:
    tests = defined_tests()
    missing = [
        f"test_hook_{name.removeprefix('bugbout_')}"
        for name in hook_names()
        if f"test_hook_{name.removeprefix('bugbout_')}" not in tests
    ]
    assert hook_names()
    assert not missing, "write a test for each hook: " + ", ".join(missing)
