"""The built-in executors: the local thread pool and Ray (a fake Ray for how it is driven,
a real local Ray instance for where jobs run)."""

from __future__ import annotations

import os
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from bugbout.core import pipeline
from bugbout.core.contract.errors import ConfigError, PluginError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.pipeline import build_contestants
from bugbout.core.plumbing.runtime.executor import Executor, make_executor
from bugbout.core.plumbing.tools import Tools
from bugbout.core.race.contestants import Contestant
from bugbout.core.race.race import Race
from bugbout.core.store.race_records import Attempt, AttemptStatus
from bugbout.core.store.records import Task, TaskIssue
from bugbout.core.store.store import Store
from bugbout.plugins.executors.local import LocalExecutor, LocalOptions
from bugbout.plugins.executors.ray import MISSING, RayExecutor, RayOptions
from bugbout.testing.suites.executors import JobFailed, add, fail, where

TIMEOUT = 60.0


def settings(name: str, **options: Any) -> BoutSettings:
    return BoutSettings(
        project=ProjectSettings(source="src/p"),
        executor=PluginChoice.model_validate({"name": name, **options}),
    )


def packaged(name: str) -> dict[str, Any]:
    text = (resources.files("bugbout.conf") / "executor" / f"{name}.yaml").read_text()
    return dict(yaml.safe_load(text))


# -- selection --------------------------------------------------------------------------------


def test_local_is_the_default(plugins: Plugins) -> None:
    executor = make_executor(BoutSettings(project=ProjectSettings(source="src/p")), plugins)
    assert isinstance(executor, LocalExecutor)
    assert isinstance(executor, Executor)
    assert (executor.name, executor.in_process) == ("local", True)
    assert base_default("executor") == "local"


def base_default(group: str) -> str:
    base = yaml.safe_load((resources.files("bugbout.conf") / "base.yaml").read_text())
    (choice,) = [
        item[group] for item in base["defaults"] if isinstance(item, dict) and group in item
    ]
    return str(choice)


def test_the_packaged_options_are_the_defaults() -> None:
    assert packaged("local") == {"name": "local", "workers": LocalOptions().workers}
    ray = packaged("ray")
    assert ray.pop("name") == "ray"
    assert RayOptions.model_validate(ray) == RayOptions()
    assert set(ray) == {field.alias for field in RayOptions.model_fields.values()}


def test_options_reach_the_executor(plugins: Plugins) -> None:
    executor = make_executor(settings("local", workers=3), plugins)
    assert executor.options.workers == 3  # type: ignore[attr-defined]
    ray = make_executor(
        settings("ray", address="auto", **{"runtime-env": {"env_vars": {"A": "1"}}}),
        plugins,
    )
    assert ray.options == RayOptions(address="auto", runtime_env={"env_vars": {"A": "1"}})  # type: ignore[attr-defined]


def test_num_cpus_with_an_address_is_a_one_line_error(plugins: Plugins) -> None:
    with pytest.raises(ConfigError, match="num-cpus sizes a Ray instance started here") as error:
        make_executor(settings("ray", address="auto", **{"num-cpus": 2}), plugins)
    assert "\n" not in str(error.value)


# -- local ------------------------------------------------------------------------------------


def test_local_runs_jobs_concurrently_up_to_its_workers() -> None:
    workers = 3
    executor = LocalExecutor(LocalOptions(workers=workers))
    together = threading.Barrier(workers, timeout=TIMEOUT)
    lock = threading.Lock()
    running = peak = 0

    def job() -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        try:
            return together.wait()  # returns only once `workers` jobs run at the same time
        finally:
            with lock:
                running -= 1

    try:
        futures = [executor.submit(job) for _ in range(2 * workers)]
        arrivals = sorted(future.result(timeout=TIMEOUT) for future in futures)
    finally:
        executor.close()
    assert arrivals == sorted(2 * list(range(workers)))
    assert peak == workers


def test_local_close_cancels_queued_jobs_and_refuses_new_ones() -> None:
    executor = LocalExecutor(LocalOptions(workers=1))
    started, release = threading.Event(), threading.Event()

    def blocking() -> str:
        started.set()
        release.wait(TIMEOUT)
        return "finished"

    first = executor.submit(blocking)
    assert started.wait(TIMEOUT)
    queued = executor.submit(partial(add, 1, 2))
    closing = threading.Thread(target=executor.close)
    closing.start()
    deadline = time.monotonic() + TIMEOUT
    while not queued.cancelled() and time.monotonic() < deadline:
        time.sleep(0.01)
    release.set()
    closing.join(TIMEOUT)
    assert queued.cancelled()
    assert first.result(timeout=TIMEOUT) == "finished"  # a running job is waited for
    with pytest.raises(RuntimeError, match="closed"):
        executor.submit(where)
    executor.close()


# -- ray, driven through a fake ---------------------------------------------------------------


class FakeRay(types.ModuleType):
    """Enough of ``ray`` to see how the executor drives it: jobs run at once, here."""

    def __init__(self, *, initialized: bool = False) -> None:
        super().__init__("ray")
        self.initialized = initialized
        self.inits: list[dict[str, Any]] = []
        self.remotes: list[dict[str, Any]] = []
        self.shutdowns = 0

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **settings: Any) -> None:
        self.inits.append(settings)
        self.initialized = True

    def shutdown(self) -> None:
        self.shutdowns += 1
        self.initialized = False

    def remote(self, **options: Any) -> Callable[[Callable[..., Any]], Any]:
        self.remotes.append(options)
        return lambda function: types.SimpleNamespace(remote=partial(_run_now, function))

    def cancel(self, ref: Any) -> None:
        pass


def _run_now(function: Callable[..., Any], job: Callable[[], Any]) -> Any:
    future: Future[Any] = Future()
    future.set_result(function(job))
    return types.SimpleNamespace(future=lambda: future)


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> FakeRay:
    fake = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    return fake


def test_ray_starts_on_the_first_job_and_stops_what_it_started(fake_ray: FakeRay) -> None:
    executor = RayExecutor(RayOptions(num_cpus=2, runtime_env={"env_vars": {"A": "1"}}))
    assert executor.problem() is None
    assert fake_ray.inits == []  # building it starts nothing
    assert executor.submit(partial(add, 2, 2)).result(timeout=TIMEOUT) == 4
    assert executor.submit(partial(add, 3, 3)).result(timeout=TIMEOUT) == 6
    (init,) = fake_ray.inits
    assert init["address"] is None
    assert init["num_cpus"] == 2
    assert init["runtime_env"] == {"env_vars": {"A": "1"}}
    assert init["include_dashboard"] is False
    assert init["log_to_driver"] is False
    assert fake_ray.remotes == [{"max_retries": 0}]  # a paid attempt is never rerun by Ray
    executor.close()
    executor.close()
    assert fake_ray.shutdowns == 1
    with pytest.raises(RuntimeError, match="closed"):
        executor.submit(where)


def test_ray_joins_a_cluster_without_sizing_it(fake_ray: FakeRay) -> None:
    executor = RayExecutor(RayOptions(address="auto"))
    assert executor.submit(partial(add, 1, 1)).result(timeout=TIMEOUT) == 2
    (init,) = fake_ray.inits
    assert init["address"] == "auto"
    assert "num_cpus" not in init and "runtime_env" not in init
    executor.close()


def test_ray_leaves_a_running_instance_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRay(initialized=True)
    monkeypatch.setitem(sys.modules, "ray", fake)
    executor = RayExecutor()
    assert executor.submit(partial(add, 1, 1)).result(timeout=TIMEOUT) == 2
    executor.close()
    assert (fake.inits, fake.shutdowns, fake.initialized) == ([], 0, True)


def test_ray_that_cannot_start_is_a_one_line_error(
    fake_ray: FakeRay, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(**settings: Any) -> None:
        raise ConnectionError("Could not find any running Ray instance.\nPlease start one.")

    monkeypatch.setattr(fake_ray, "init", refuse)
    executor = RayExecutor(RayOptions(address="auto"))
    with pytest.raises(PluginError) as error:
        executor.submit(where)
    assert str(error.value) == "cannot start Ray (auto): Could not find any running Ray instance."


def test_without_ray_the_problem_is_one_line(
    monkeypatch: pytest.MonkeyPatch, plugins: Plugins
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without ray sees
    executor = RayExecutor()
    assert executor.problem() == MISSING == "ray is not installed: pip install 'bugbout[ray]'"
    with pytest.raises(PluginError, match=r"^ray is not installed: pip install 'bugbout\[ray\]'$"):
        executor.submit(where)
    executor.close()
    with pytest.raises(PluginError) as error:
        make_executor(settings("ray"), plugins)
    assert str(error.value) == f"executor 'ray': {MISSING}"


# -- ray, for real ----------------------------------------------------------------------------


def meet(directory: str, name: str, parties: int) -> tuple[int, bool]:
    """Leaves a mark in ``directory`` and waits for ``parties`` marks: whether the jobs ran
    at the same time, and in which process."""
    Path(directory, name).write_text(str(os.getpid()))
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if len(os.listdir(directory)) >= parties:
            return os.getpid(), True
        time.sleep(0.05)
    return os.getpid(), False


@pytest.fixture
def this_module_by_value() -> Iterator[None]:
    """Ray's workers cannot import this test module: its jobs travel by value."""
    from ray import cloudpickle

    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        cloudpickle.unregister_pickle_by_value(module)


@pytest.mark.slow
@pytest.mark.usefixtures("this_module_by_value")
def test_ray_runs_jobs_in_ray_worker_processes(tmp_path: Path) -> None:
    import ray

    assert not ray.is_initialized()
    executor = RayExecutor(RayOptions(num_cpus=2))
    try:
        assert executor.in_process is False
        pair = [executor.submit(partial(meet, str(tmp_path), name, 2)) for name in "ab"]
        met = [future.result(timeout=TIMEOUT) for future in pair]
        assert ray.is_initialized()
        assert [together for _, together in met] == [True, True]  # both ran at once
        pids = {pid for pid, _ in met}
        assert len(pids) == 2 and os.getpid() not in pids  # in two Ray workers, not here
        assert ray.cluster_resources()["CPU"] == 2
        with pytest.raises(JobFailed, match=r"^remote failure$"):
            executor.submit(partial(fail, "remote failure")).result(timeout=TIMEOUT)
        assert executor.submit(partial(add, 20, 22)).result(timeout=TIMEOUT) == 42
    finally:
        executor.close()
    assert not ray.is_initialized()  # it started Ray, so it stopped it
    executor.close()


# -- the race, when a worker fails ------------------------------------------------------------


class FailingExecutor:
    """Runs nothing: every job's future holds a worker's death, after ``before`` runs."""

    name = "failing"
    in_process = False

    def __init__(self, before: Callable[[], None] = lambda: None) -> None:
        self.before = before

    def problem(self) -> str | None:
        return None

    def submit(self, job: Callable[[], Any]) -> Future[Any]:
        self.before()
        future: Future[Any] = Future()
        future.set_exception(ConnectionError("the worker died"))
        return future

    def close(self) -> None:
        pass


def lost_attempt(
    tmp_path: Path, plugins: Plugins, before: Callable[[Race, Task, Contestant], None]
) -> tuple[Race, Task, Contestant, list[Attempt]]:
    """One attempt raced on an executor whose worker dies (after ``before``)."""
    bout = BoutSettings(
        project=ProjectSettings(source="src/p"),
        sandbox=PluginChoice(name="none"),
        environment=PluginChoice(name="interpreter"),
        contestant={"solo": {"agent": "command", "command": ["true"]}},
        root=tmp_path,
    )
    race = pipeline.race(bout, plugins, Tools.build(bout, plugins, Store(tmp_path / ".bugbout")))
    (contestant,) = build_contestants(bout, plugins)
    task = Task(
        id="t", sha="s", parent="p", date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
    )  # fmt: skip
    executor = FailingExecutor(lambda: before(race, task, contestant))
    finished: list[Attempt] = []
    race._run_lane("command", [(task, contestant, None)], None, finished, executor)  # type: ignore[arg-type]
    return race, task, contestant, finished


def test_an_attempt_whose_worker_dies_is_recorded_as_an_infra_error(
    tmp_path: Path, plugins: Plugins
) -> None:
    race, task, contestant, finished = lost_attempt(tmp_path, plugins, lambda *_: None)
    stored = race.store.read(contestant.path(task), Attempt)
    assert stored is not None and stored.status == AttemptStatus.INFRA_ERROR
    assert "the executor lost the attempt: ConnectionError: the worker died" in (stored.error or "")
    assert finished == [stored]
    assert race.ran == {contestant.path(task)}


def test_a_worker_dying_after_storing_its_attempt_keeps_the_record(
    tmp_path: Path, plugins: Plugins
) -> None:
    def store_finished(race: Race, task: Task, contestant: Contestant) -> None:
        record = Attempt(
            task_id=task.id, contestant=contestant.name, role="contestant",
            key=contestant.key(task), agent="command", status=AttemptStatus.FINISHED,
            started="2024-01-01T00:00:00+00:00",
        )  # fmt: skip
        race.store.write(contestant.path(task), record)

    race, task, contestant, finished = lost_attempt(tmp_path, plugins, store_finished)
    stored = race.store.read(contestant.path(task), Attempt)
    assert stored is not None and stored.status == AttemptStatus.FINISHED  # not overwritten
    assert finished == []
