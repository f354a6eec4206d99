"""The stages' ``bugbout_before_<stage>`` / ``bugbout_after_<stage>`` hooks: pluggy calls
them in its own order (``tryfirst``, ``trylast``, wrappers around the rest), a wrapper
sees the stage's records, and one whole bout calls each with its stage's records."""

from __future__ import annotations

import json
import sys
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bugbout import hookimpl
from bugbout.bout import Bout, Project
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.pipeline import mine_tasks
from bugbout.core.store.records import TaskSet
from bugbout.core.store.store import TASKS, Store
from one_bug import AGENTS, one_bug_repository, write_agent


@pytest.fixture
def mining(tmp_path: Path) -> tuple[BoutSettings, Store]:
    """The one-bug repository's settings, with the fix's message as its issue."""
    repo = one_bug_repository(tmp_path / "repo")
    settings = BoutSettings(
        project=ProjectSettings(source="src/mid", tests="tests"),
        issue_sources={"commit": {"issue-source": "commit"}},
        root=repo.path,
    )
    return settings, Store(settings.store_dir)


def test_pluggy_orders_a_stage_hook(mining: tuple[BoutSettings, Store]) -> None:
    """``tryfirst`` first, ``trylast`` last, the latest registered before the earlier,
    and a wrapper around all of them, seeing the tasks as written."""
    settings, store = mining
    calls: list[str] = []

    class Last:
        @hookimpl(trylast=True)
        def bugbout_after_mine(self) -> None:
            calls.append("last")

    class Plain:
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl
        def bugbout_after_mine(self) -> None:
            calls.append(self.name)

    class First:
        @hookimpl(tryfirst=True)
        def bugbout_after_mine(self) -> None:
            calls.append("first")

    class Wrapping:
        @hookimpl(wrapper=True)
        def bugbout_after_mine(self, tasks: TaskSet) -> Generator[None, list[None], list[None]]:
            stored = store.read(TASKS, TaskSet)
            calls.append(f"enter: {len(tasks.tasks)} task, stored {stored == tasks}")
            results = yield
            calls.append("exit")
            return results

    plugins = make_plugins(entry_points=False, kinds=("miner", "issue-source"))
    for name, plugin in [
        ("last", Last()), ("plain-1", Plain("plain-1")), ("first", First()),
        ("wrapping", Wrapping()), ("plain-2", Plain("plain-2")),
    ]:  # fmt: skip
        plugins.register(plugin, name=name)
    mine_tasks(settings, plugins, store)
    assert plugins.problems == []
    assert calls == ["enter: 1 task, stored True", "first", "plain-2", "plain-1", "last", "exit"]


def test_a_raising_implementation_leaves_the_others_called() -> None:
    """One that raises is reported; the others, and the wrapper around them, run."""
    calls: list[str] = []

    class Raising:
        @hookimpl(tryfirst=True)
        def bugbout_before_report(self) -> None:
            raise KeyError("x")

    class Listening:
        @hookimpl
        def bugbout_before_report(self, report: object) -> None:
            calls.append(f"listened to {report}")

    class Wrapping:
        @hookimpl(wrapper=True)
        def bugbout_before_report(self) -> Generator[None, list[None], list[None]]:
            results = yield
            calls.append("wrapped")
            return results

    plugins = make_plugins(builtins=False, entry_points=False)
    plugins.register(Listening(), name="listening")
    plugins.register(Raising(), name="raising", distribution="raisy 1.0")
    plugins.register(Wrapping(), name="wrapping")
    plugins.notify("bugbout_before_report", report="the report")
    assert calls == ["listened to the report", "wrapped"]
    assert plugins.problems == [
        "plugin 'raising' from raisy 1.0: bugbout_before_report() raised KeyError: 'x'"
    ]


def test_a_raising_wrapper_is_reported() -> None:
    """A wrapper that raises after the others ran is reported by name, not raised."""
    calls: list[str] = []

    class Listening:
        @hookimpl
        def bugbout_after_race(self, attempts: list[object]) -> None:
            calls.append(f"{len(attempts)} attempts")

    class Wrapping:
        @hookimpl(wrapper=True)
        def bugbout_after_race(self) -> Generator[None, list[None], list[None]]:
            yield
            raise RuntimeError("wrapper broke\nbadly")

    plugins = make_plugins(builtins=False, entry_points=False)
    plugins.register(Listening(), name="listening")
    plugins.register(Wrapping(), name="wrapping", distribution="wrappy 2.0")
    plugins.notify("bugbout_after_race", attempts=[])
    assert calls == ["0 attempts"]
    assert plugins.problems == [
        "plugin 'wrapping' from wrappy 2.0: bugbout_after_race() raised "
        "RuntimeError: wrapper broke badly"
    ]


# -- one whole bout ---------------------------------------------------------------------------


@dataclass
class Recorder:
    """Every stage hook's call, in order, with what it was given."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def seen(self, hook: str) -> list[dict[str, Any]]:
        return [given for name, given in self.calls if name == hook]

    def record(self, hook: str, **given: Any) -> None:
        self.calls.append((hook, given))

    @hookimpl
    def bugbout_before_mine(self, repository: Path) -> None:
        self.record("bugbout_before_mine", repository=repository)

    @hookimpl
    def bugbout_after_mine(self, tasks: Any) -> None:
        self.record("bugbout_after_mine", tasks=tasks)

    @hookimpl
    def bugbout_before_truth(self, tasks: Any) -> None:
        self.record("bugbout_before_truth", tasks=tasks)

    @hookimpl
    def bugbout_after_truth(self, tasks: Any, oracles: Any) -> None:
        self.record("bugbout_after_truth", tasks=tasks, oracles=oracles)

    @hookimpl
    def bugbout_before_race(self, tasks: Any, oracles: Any) -> None:
        self.record("bugbout_before_race", tasks=tasks, oracles=oracles)

    @hookimpl
    def bugbout_after_race(self, attempts: Any) -> None:
        self.record("bugbout_after_race", attempts=attempts)

    @hookimpl
    def bugbout_before_crossexam(self, task: Any) -> None:
        self.record("bugbout_before_crossexam", task=task)

    @hookimpl
    def bugbout_after_crossexam(self, task: Any, matrix: Any) -> None:
        self.record("bugbout_after_crossexam", task=task, matrix=matrix)

    @hookimpl
    def bugbout_before_judge(self, task: Any, matrix: Any) -> None:
        self.record("bugbout_before_judge", task=task, matrix=matrix)

    @hookimpl
    def bugbout_after_judge(self, task: Any, verdict: Any) -> None:
        self.record("bugbout_after_judge", task=task, verdict=verdict)

    @hookimpl
    def bugbout_before_score(self, task: Any) -> None:
        self.record("bugbout_before_score", task=task)

    @hookimpl
    def bugbout_after_score(self, task: Any, resolutions: Any) -> None:
        self.record("bugbout_after_score", task=task, resolutions=resolutions)

    @hookimpl
    def bugbout_before_audit(self, task: Any) -> None:
        self.record("bugbout_before_audit", task=task)

    @hookimpl
    def bugbout_after_audit(self, task: Any, audits: Any) -> None:
        self.record("bugbout_after_audit", task=task, audits=audits)

    @hookimpl
    def bugbout_before_report(self, report: Any) -> None:
        self.record("bugbout_before_report", report=report)

    @hookimpl
    def bugbout_after_report(self, report: Any, files: Any) -> None:
        self.record("bugbout_after_report", report=report, files=files)


class JudgeWrapper:
    """A wrapper of the judge's hook: what it saw of the verdict around the others."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @hookimpl(wrapper=True)
    def bugbout_after_judge(self, verdict: Any) -> Generator[None, list[None], list[None]]:
        self.recorder.record("wrapper entered", pick=verdict.pick)
        results = yield
        self.recorder.record("wrapper left", results=results)
        return results


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recorder, list[str]]:
    """The one-bug repository raced whole by a contestant that fixes it, with every stage
    hook recorded; the repository, the recorder and the plugin problems."""
    root = tmp_path_factory.mktemp("stage-hooks")
    repo = one_bug_repository(root / "repo").path
    agent = write_agent(root, "good", AGENTS["good"])
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 60},
        "contestants": {"good": {"agent": "command", "command": [sys.executable, str(agent)]}},
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    project = Project.load(repo, ["environment=interpreter"])
    recorder = Recorder()
    project.plugins.register(recorder, name="recording")
    project.plugins.register(JudgeWrapper(recorder), name="judge-wrapper")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(root / "home"))
        Bout(project).run()
    return repo, recorder, list(project.plugins.problems)


def _stored(repo: Path, name: str) -> Any:
    return json.loads((repo / ".bugbout" / name).read_text())


@pytest.mark.slow
def test_the_stages_call_their_hooks_in_order(bout: tuple[Path, Recorder, list[str]]) -> None:
    _, recorder, problems = bout
    assert problems == []
    stages = [name for name, _ in recorder.calls if name.startswith("bugbout_")]
    assert stages == [
        *("bugbout_before_mine", "bugbout_after_mine", "bugbout_before_truth"),
        *("bugbout_after_truth", "bugbout_before_race", "bugbout_after_race"),
        *("bugbout_before_crossexam", "bugbout_before_score", "bugbout_before_audit"),
        *("bugbout_after_crossexam", "bugbout_before_judge", "bugbout_after_judge"),
        *("bugbout_after_score", "bugbout_after_audit"),
        *("bugbout_before_report", "bugbout_after_report"),
    ]


@pytest.mark.slow
def test_hook_before_mine(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    assert recorder.seen("bugbout_before_mine") == [{"repository": repo}]


@pytest.mark.slow
def test_hook_before_truth(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_before_truth")
    stored = _stored(repo, "tasks.json")["tasks"]
    assert [task.id for task in given["tasks"].tasks] == [task["id"] for task in stored]


@pytest.mark.slow
def test_hook_after_truth(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_after_truth")
    assert given["oracles"].model_dump(mode="json") == _stored(repo, "oracles.json")
    assert [task.scored for task in given["tasks"].tasks] == [True]


@pytest.mark.slow
def test_hook_before_race(bout: tuple[Path, Recorder, list[str]]) -> None:
    _, recorder, _ = bout
    (given,) = recorder.seen("bugbout_before_race")
    (task,) = given["tasks"].tasks
    assert given["oracles"].root[task.id].fail_to_pass == ["tests/test_core.py::test_even"]


@pytest.mark.slow
def test_hook_after_race(bout: tuple[Path, Recorder, list[str]]) -> None:
    _, recorder, _ = bout
    ((attempt,),) = [seen["attempts"] for seen in recorder.seen("bugbout_after_race")]
    assert attempt.contestant == "good" and "half" in attempt.patch.source


@pytest.mark.slow
def test_hook_before_crossexam(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_before_crossexam")
    assert given["task"].id == _stored(repo, "tasks.json")["tasks"][0]["id"]


@pytest.mark.slow
def test_hook_after_crossexam(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_after_crossexam")
    stored = _stored(repo, f"matrices/{given['task'].id}.json")
    assert given["matrix"].model_dump(mode="json") == stored


@pytest.mark.slow
def test_hook_before_judge(bout: tuple[Path, Recorder, list[str]]) -> None:
    _, recorder, _ = bout
    (crossexamined,) = recorder.seen("bugbout_after_crossexam")
    assert recorder.seen("bugbout_before_judge") == [crossexamined]


@pytest.mark.slow
def test_hook_after_judge(bout: tuple[Path, Recorder, list[str]]) -> None:
    """The verdict as written, and the wrapper around the other implementations."""
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_after_judge")
    verdicts = _stored(repo, "verdicts.json")[given["task"].id]
    assert given["verdict"].model_dump(mode="json") == verdicts[given["verdict"].policy]
    around = [name for name, _ in recorder.calls if "judge" in name or "wrapper" in name]
    assert around == [
        "bugbout_before_judge", "wrapper entered", "bugbout_after_judge", "wrapper left",
    ]  # fmt: skip
    assert recorder.seen("wrapper entered") == [{"pick": given["verdict"].pick}]


@pytest.mark.slow
def test_hook_before_score(bout: tuple[Path, Recorder, list[str]]) -> None:
    _, recorder, _ = bout
    assert recorder.seen("bugbout_before_score") == recorder.seen("bugbout_before_crossexam")


@pytest.mark.slow
def test_hook_after_score(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_after_score")
    stored = _stored(repo, "resolutions.json")[given["task"].id]["patches"]
    assert {name: r.model_dump(mode="json") for name, r in given["resolutions"].items()} == stored
    assert given["resolutions"]["good"].score == "resolved"


@pytest.mark.slow
def test_hook_before_audit(bout: tuple[Path, Recorder, list[str]]) -> None:
    _, recorder, _ = bout
    assert recorder.seen("bugbout_before_audit") == recorder.seen("bugbout_before_crossexam")


@pytest.mark.slow
def test_hook_after_audit(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_after_audit")
    stored = _stored(repo, "audits.json")[given["task"].id]
    assert {name: a.model_dump(mode="json") for name, a in given["audits"].items()} == stored


@pytest.mark.slow
def test_hook_before_report(bout: tuple[Path, Recorder, list[str]]) -> None:
    _, recorder, _ = bout
    (given,) = recorder.seen("bugbout_before_report")
    assert [task.id for task in given["report"].tasks] == [
        seen["task"].id for seen in recorder.seen("bugbout_after_judge")
    ]


@pytest.mark.slow
def test_hook_after_report(bout: tuple[Path, Recorder, list[str]]) -> None:
    repo, recorder, _ = bout
    (given,) = recorder.seen("bugbout_after_report")
    assert given["report"] is recorder.seen("bugbout_before_report")[0]["report"]
    assert given["files"] and all((repo / ".bugbout" / name).is_file() for name in given["files"])
