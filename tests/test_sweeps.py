"""Sweeps (``bugbout run -m``) on the example repository with two scripted contestants:
jobs share the store, never run one attempt twice, and run through Hydra's launchers
(sequential, joblib, a local Ray instance).

Agent runs are counted twice over, from what the jobs say (``job.json``) and from what the
agents left behind: every run of an agent gets its own folder under
``$BUGBOUT_HOME/attempts/<task>/<name>-<random>/`` with the prompt it was given.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bugbout.core.store.race_records import Attempt
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.verdict_records import Job
from bugbout.example import build_example

pytestmark = pytest.mark.slow

CONTESTANTS = {"a": "correct", "b": "wrong"}
"""The sweep's contestants and the scripted agent each one runs."""
TASKS = 2
"""Tasks raced (``miner.limit``): enough to count, few enough to be quick."""


def sweep_repository(path: Path) -> Path:
    """The example repository with contestants ``a`` (right fixes) and ``b`` (wrong ones)
    and no examiner, so that every attempt in the store is a contestant's."""
    build_example(path)
    config = path / "bugbout.yaml"
    text = config.read_text()
    text = text[: text.index("\n# The demo's scripted agents")]
    python = json.dumps(sys.executable)
    text += "\ncontestants:\n" + "".join(
        f"  {name}: {{agent: command, command: [{python}, -m, bugbout.example.agents, {role}]}}\n"
        for name, role in CONTESTANTS.items()
    )
    config.write_text(text)
    return path


def bugbout(
    *args: str, cwd: Path, home: Path, env: dict[str, str] | None = None, timeout: int = 900
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "BUGBOUT_HOME": str(home), **(env or {})}
    environment.pop("RAY_ADDRESS", None)  # a local Ray instance, never a cluster around
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd, capture_output=True, text=True, env=environment, timeout=timeout, check=False,
    )  # fmt: skip


def output(result: subprocess.CompletedProcess[str]) -> str:
    return (
        f"exit {result.returncode}\n--- stdout\n{result.stdout[-6000:]}\n--- stderr\n"
        + (result.stderr[-6000:])
    )


def the_sweep(repo: Path) -> tuple[Path, list[Path]]:
    """The only sweep's directory and its job directories, in job order."""
    sweeps = [path for path in (repo / ".bugbout" / "sweeps").iterdir() if path.is_dir()]
    assert len(sweeps) == 1, sweeps
    jobs = sorted(
        (path for path in sweeps[0].iterdir() if path.is_dir() and path.name.isdigit()),
        key=lambda path: int(path.name),
    )
    return sweeps[0], jobs


def raced_tasks(repo: Path) -> list[str]:
    tasks = TaskSet.model_validate_json((repo / ".bugbout" / "tasks.json").read_text())
    return [task.id for task in tasks.tasks if task.scored]


def attempt_records(repo: Path) -> list[Attempt]:
    """Every attempt record in the shared store; each must read as a whole record."""
    records = []
    for path in sorted((repo / ".bugbout" / "attempts").rglob("*.json")):
        records.append(Attempt.model_validate_json(path.read_text()))
    return records


def leftovers(repo: Path) -> list[Path]:
    """Temporary files of interrupted writes (``write_atomic``'s ``.NAME.random``)."""
    return [path for path in (repo / ".bugbout").rglob(".*") if path.name != ".gitignore"]


def agent_runs(home: Path) -> dict[tuple[str, str], int]:
    """How often each (task, contestant) agent actually ran, from its log folders."""
    runs: dict[tuple[str, str], int] = {}
    for prompt in (home / "attempts").glob("*/*/logs/prompt.md"):
        task, folder = prompt.parent.parent.parent.name, prompt.parent.parent.name
        key = (task, folder.rsplit("-", 1)[0])
        runs[key] = runs.get(key, 0) + 1
    return runs


def job_records(jobs: list[Path]) -> list[Job]:
    return [Job.model_validate_json((job / "job.json").read_text()) for job in jobs]


def check_shared_store(repo: Path, home: Path, contestants: list[str]) -> list[Job]:
    """Every job reported, the store holds one attempt per task and contestant, each run
    once; returns the jobs' records (in job order)."""
    _, jobs = the_sweep(repo)
    for job in jobs:
        assert (job / "report.json").is_file(), f"{job} has no report.json"
        assert (job / "job.json").is_file(), f"{job} has no job.json"
    tasks = raced_tasks(repo)
    assert len(tasks) == TASKS
    records = attempt_records(repo)
    assert sorted((r.task_id, r.contestant) for r in records) == sorted(
        (task, name) for task in tasks for name in contestants
    )
    assert all(record.status == "finished" for record in records), [
        (record.contestant, record.status, record.error) for record in records
    ]
    assert agent_runs(home) == {(task, name): 1 for task in tasks for name in contestants}
    assert not leftovers(repo)
    done = job_records(jobs)
    assert sum(job.attempts_run for job in done) == len(tasks) * len(contestants)
    for job in done:
        (name,) = job.contestants
        assert sorted(a.task_id for a in job.attempts) == sorted(tasks), job
        assert {a.contestant for a in job.attempts} == {name}
        assert all((repo / ".bugbout" / a.path).is_file() for a in job.attempts)
    return done


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return sweep_repository(tmp_path / "tally")


def test_hydra_launchers_and_bugbouts_presets_compose(repo: Path, tmp_path: Path) -> None:
    """Hydra's own launcher groups are found beside bugbout's search path, and so are the
    presets bugbout ships (ray-local, ray-cluster, slurm)."""
    for plugin in ("joblib", "ray", "submitit"):
        pytest.importorskip(f"hydra_plugins.hydra_{plugin}_launcher")
    targets = {
        "basic": "hydra._internal.core_plugins.basic_launcher.BasicLauncher",
        "joblib": "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher",
        "ray": "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher",
        "ray-local": "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher",
        "ray-cluster": "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher",
        "submitit_local": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher",
        "submitit_slurm": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher",
        "slurm": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher",
    }
    for launcher, target in targets.items():
        result = bugbout(
            "run", f"hydra/launcher={launcher}", "--cfg", "hydra", "--package", "hydra.launcher",
            cwd=repo, home=tmp_path / "home",
        )  # fmt: skip
        assert result.returncode == 0, output(result)
        assert f"_target_: {target}" in result.stdout, output(result)
        if launcher == "ray-local":
            assert "include_dashboard: false" in result.stdout
        if launcher == "slurm":
            assert "timeout_min: 1440" in result.stdout
    result = bugbout(
        "run", "hydra/launcher=ray-local", "hydra.launcher.ray.init.num_cpus=2", "--cfg",
        "hydra", "--package", "hydra.launcher", cwd=repo, home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 0, output(result)
    assert "num_cpus: 2" in result.stdout
    assert not (repo / ".bugbout" / "sweeps").exists()


def test_sweep_over_contestants_and_judges_runs_each_attempt_once(
    repo: Path, tmp_path: Path
) -> None:
    """`bugbout run -m contestant=a,b judge=majority,strict`: 4 jobs, one summary, tasks x 2
    attempts in the store, and the second judge's jobs run no agent."""
    home = tmp_path / "home"
    result = bugbout(
        "run", "-m", "contestant=a,b", "judge=majority,strict", f"miner.limit={TASKS}",
        cwd=repo, home=home,
    )  # fmt: skip
    assert result.returncode == 0, output(result)
    sweep, jobs = the_sweep(repo)
    assert [job.name for job in jobs] == ["0", "1", "2", "3"]
    done = check_shared_store(repo, home, list(CONTESTANTS))
    assert [(job.contestants, job.judge) for job in done] == [
        (["a"], "majority"),
        (["a"], "strict"),
        (["b"], "majority"),
        (["b"], "strict"),
    ]
    for first, second in (done[0:2], done[2:4]):
        assert first.attempts_run == TASKS and first.attempts_reused == 0
        assert second.attempts_run == 0 and second.attempts_reused == TASKS
        assert {a.path for a in first.attempts} == {a.path for a in second.attempts}
    for job, record in zip(jobs, done, strict=True):
        report = json.loads((job / "report.json").read_text())
        assert report["contestants"] == record.contestants
    for name in ("summary.md", "summary.json", "summary.html"):  # base.yaml's callback
        assert (sweep / name).is_file(), sorted(p.name for p in sweep.iterdir())
    assert f"sweep summary: {sweep / 'summary.html'}" in result.stdout, output(result)
    assert not (repo / "outputs").exists()
    assert not (repo / "multirun").exists()

    again = bugbout(
        "run", "-m", "contestant=a,b", "judge=majority,strict", f"miner.limit={TASKS}",
        cwd=repo, home=home,
    )  # fmt: skip
    assert again.returncode == 0, output(again)
    assert agent_runs(home) == {(task, n): 1 for task in raced_tasks(repo) for n in CONTESTANTS}


def add_task_without_ground_truth(repo: Path) -> None:
    """A last fix whose tests import a module that does not exist: they cannot be
    collected after the fix, so its ground truth is an environment error, every time."""
    (repo / "tests" / "test_mode.py").write_text(
        "import tally.missing\n\n\ndef test_mode():\n"
        "    assert tally.missing.mode([1, 1, 2]) == 1\n"
    )
    stats = repo / "src" / "tally" / "stats.py"
    stats.write_text(stats.read_text() + "\n\ndef mode(values):\n    return max(values)\n")
    date = "@1800000000 +0000"  # after every commit of the example
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for role in ("AUTHOR", "COMMITTER"):
        env |= {f"GIT_{role}_NAME": "Maintainer", f"GIT_{role}_EMAIL": "m@example.invalid"}
    for args in (["add", "--all"], ["commit", "--quiet", "-m", "Fix mode of ties (#12)"]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True)


def test_a_judge_only_sweep_runs_each_agent_and_each_test_once(repo: Path, tmp_path: Path) -> None:
    """`bugbout run -m judge=majority,strict`: the second job runs no agent and no pytest.
    It takes the attempts, the evidence and the ground truth from the first job, even a
    ground truth that is an environment error; the next bout tries that one again."""
    add_task_without_ground_truth(repo)
    home = tmp_path / "home"
    limit = f"tasks.limit={TASKS + 1}"
    title = "reporters.html.title=Swept"  # an option no packaged default sets: no `+`
    result = bugbout(
        "run", "-m", "contestant=a", "judge=majority,strict", limit, title, cwd=repo, home=home
    )
    assert result.returncode == 0, output(result)
    _, jobs = the_sweep(repo)
    assert all("<title>Swept</title>" in (job / "report.html").read_text() for job in jobs)
    first, second = job_records(jobs)
    oracles = OracleSet.model_validate_json((repo / ".bugbout" / "oracles.json").read_text())
    assert sorted(oracle.status for oracle in oracles.root.values()) == [
        "environment-error", "ok", "ok",
    ]  # fmt: skip
    assert (first.attempts_run, first.truths_made, first.truths_reused) == (TASKS, TASKS + 1, 0)
    assert first.evidence_made > 0 and first.evidence_reused == 0
    assert (second.attempts_run, second.evidence_made, second.truths_made) == (0, 0, 0)
    assert (second.attempts_reused, second.truths_reused) == (TASKS, TASKS + 1)
    assert second.evidence_reused == first.evidence_made
    assert agent_runs(home) == {(task, "a"): 1 for task in raced_tasks(repo)}

    again = bugbout("run", "contestant=a", limit, cwd=repo, home=home)
    assert again.returncode == 0, output(again)
    later = Job.model_validate_json((repo / ".bugbout" / "job.json").read_text())
    assert (later.truths_made, later.truths_reused, later.attempts_run) == (1, TASKS, 0)


def test_model_sweep_keeps_one_attempt_per_setting(repo: Path, tmp_path: Path) -> None:
    """A model sweep (`contestant.NAME.model=x,y`; `+` since `a` sets no model) stores an
    attempt per model under one contestant's name, never mixing them up."""
    home = tmp_path / "home"
    models = "+contestant.a.model=small,large"
    result = bugbout(
        "run", "-m", "contestant=a", models, f"miner.limit={TASKS}", cwd=repo, home=home
    )
    assert result.returncode == 0, output(result)
    _, jobs = the_sweep(repo)
    done = job_records(jobs)
    assert len(done) == 2
    assert {a.path for a in done[0].attempts}.isdisjoint(a.path for a in done[1].attempts)
    assert len(attempt_records(repo)) == 2 * TASKS
    assert sum(agent_runs(home).values()) == 2 * TASKS


def ray_processes(marker: str) -> list[int]:
    """Processes whose command line names ``marker`` (this test's Ray session folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in command:
            found.append(int(entry.name))
    return found


def test_sweep_on_a_local_ray_instance(repo: Path, tmp_path: Path) -> None:
    """The same sweep with Hydra's Ray launcher on a Ray instance of its own: every result
    in the shared store, no attempt run twice, and Ray gone when the sweep ends."""
    pytest.importorskip("hydra_plugins.hydra_ray_launcher")
    home = tmp_path / "home"
    user_home = tmp_path / "user"  # Ray writes ~/.ray/auth_token
    user_home.mkdir()
    session = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's sockets live here
    try:
        result = bugbout(
            "run", "-m", "contestant=a,b", "judge=majority,strict", f"miner.limit={TASKS}",
            "hydra/launcher=ray-local", "hydra.launcher.ray.init.num_cpus=2",
            f"+hydra.launcher.ray.init._temp_dir={session}",
            cwd=repo, home=home,
            env={"HOME": str(user_home), "RAY_USAGE_STATS_ENABLED": "0"},
        )  # fmt: skip
        assert result.returncode == 0, output(result)
        assert "_run_job pid=" in result.stdout + result.stderr  # the jobs ran in Ray workers
    finally:
        left = ray_processes(session)
        for pid in left:  # ours: started for this session folder
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert not left, f"Ray processes still running after the sweep: {left}"
    done = check_shared_store(repo, home, list(CONTESTANTS))
    assert sorted((job.contestants[0], job.judge) for job in done) == [
        ("a", "majority"), ("a", "strict"), ("b", "majority"), ("b", "strict"),
    ]  # fmt: skip
    for name in CONTESTANTS:
        pair = [job for job in done if job.contestants == [name]]
        assert sum(job.attempts_run for job in pair) == TASKS, pair


def test_two_jobs_racing_one_store_run_each_attempt_once(repo: Path, tmp_path: Path) -> None:
    """Two jobs at once (joblib, two workers), one contestant, two judges: whichever job
    gets to an attempt first runs it, the other waits and reuses it; no record is torn."""
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    home = tmp_path / "home"
    result = bugbout(
        "run", "-m", "contestant=a", "judge=majority,strict", f"miner.limit={TASKS}",
        "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", cwd=repo, home=home,
    )  # fmt: skip
    assert result.returncode == 0, output(result)
    done = check_shared_store(repo, home, ["a"])
    assert sorted(job.judge for job in done) == ["majority", "strict"]
    assert sum(job.attempts_reused for job in done) == TASKS
    assert len(attempt_records(repo)) == TASKS


def test_a_job_failing_in_a_worker_fails_the_sweep_and_is_named_in_its_summary(
    repo: Path, tmp_path: Path
) -> None:
    """A job that fails in a joblib worker: the sweep exits 1, the other job reports, the
    summary lists the failed one with its reason."""
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    result = bugbout(
        "run", "-m", "contestant=a", "judge=majority,nope-not-a-key", f"miner.limit={TASKS}",
        "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", cwd=repo, home=tmp_path / "home",
    )  # fmt: skip
    assert "no such judge" in result.stderr, output(result)  # checked before any job runs
    assert result.returncode == 2

    result = bugbout(
        "run", "-m", "contestant=a", "run.timeout=60,-1", f"miner.limit={TASKS}",
        "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", cwd=repo, home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 1, output(result)
    sweep, jobs = the_sweep(repo)
    assert (jobs[0] / "report.json").is_file()
    assert "run.timeout" in (jobs[1] / "error.txt").read_text()
    summary = json.loads((sweep / "summary.json").read_text())
    failed = [job for job in summary["jobs"] if job["status"] == "failed"]
    assert [job["name"] for job in failed] == ["1"]
    assert "run.timeout" in failed[0]["reason"]


def test_a_sweep_may_choose_sets_of_contestants(repo: Path, tmp_path: Path) -> None:
    result = bugbout(
        "run", "-m", "contestant=[a,b],[a]", f"miner.limit={TASKS}",
        cwd=repo, home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 0, output(result)
    _, jobs = the_sweep(repo)
    assert [sorted(job.contestants) for job in job_records(jobs)] == [["a", "b"], ["a"]]
    assert sum(job.attempts_run for job in job_records(jobs)) == TASKS * 2
