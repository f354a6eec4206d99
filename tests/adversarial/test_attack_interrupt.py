"""Ctrl-C stops spending: a real ``bugbout run`` (real git, real bubblewrap, real pytest,
``command`` contestants that sleep and leave a daemon behind) is sent SIGINT or SIGTERM
mid-race. Nothing new may start, what runs gets ``run.grace`` seconds (a second signal:
none), the killed attempts are stored ``interrupted``, no agent process outlives
bugbout, it exits 130, and the next ``bugbout run`` runs exactly what was left."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bugbout.sandbox.podman import LABEL, Podman
from bugbout.testing import RepositoryBuilder

pytestmark = pytest.mark.slow

PODMAN_STORAGE = "/var/tmp/bugbout-interrupt-tests"
"""Podman's storage for these tests, outside pytest's folders (it holds mounts)."""
STOPPING = "stopping: 2 attempts running (Ctrl-C again to kill them now)"
AGENT = """\
import subprocess, sys, time
from pathlib import Path

delay = float(Path(sys.argv[1]).read_text())
# a daemon of the agent's own: it must die with the agent's sandbox
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[2]])
print("working", flush=True)
time.sleep(delay)
print("done")
"""
BUGS = {
    "add": ("return a - b", "return a + b", "assert add(2, 3) == 5"),
    "mul": ("return a ** b", "return a * b", "assert mul(2, 3) == 6"),
    "sub": ("return b - a", "return a - b", "assert sub(5, 3) == 2"),
}
"""Three bugs, each fixed by its own commit with a test: three tasks."""


def three_bug_repository(path: Path, slow_tests: bool = False) -> RepositoryBuilder:
    """Three tasks; with ``slow_tests`` every pytest run of the project takes 60 s."""
    repo = RepositoryBuilder(path)
    source = "".join(f"def {name}(a, b):\n    {bug}\n\n\n" for name, (bug, _, _) in BUGS.items())
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "ops"\nrequires-python = ">=3.9"\n',
            "src/ops/__init__.py": "",
            "src/ops/core.py": source,
            "tests/test_core.py": "def test_nothing():\n    pass\n",
            **({"tests/conftest.py": "import time\n\ntime.sleep(60)\n"} if slow_tests else {}),
        },
    )
    for number, (name, (buggy, fixed, check)) in enumerate(BUGS.items(), start=1):
        source = source.replace(buggy, fixed, 1)
        repo.commit(
            f"Fix {name} returning the wrong value (#{number})",
            {
                "src/ops/core.py": source,
                f"tests/test_{name}.py": f"from ops.core import {name}\n\n\n"
                f"def test_{name}():\n    {check}\n",
            },
        )
    return repo


class Bout:
    """A repository with two sleeping contestants in two lanes (one attempt each at a
    time, three tasks each), a private ``BUGBOUT_HOME`` and a running ``bugbout run``."""

    def __init__(self, root: Path, grace: float) -> None:
        self.repo = three_bug_repository(root / "repo").path
        self.home = root / "home"
        self.marker = f"bugbout-interrupt-{uuid.uuid4().hex}"
        agents = root / "agents"
        agents.mkdir()
        (agents / "agent.py").write_text(AGENT)
        self.delays = {name: agents / f"{name}.delay" for name in ("slow", "steady")}
        contestants = {
            name: {
                "agent": "command",
                "quota": name,
                "command": [sys.executable, str(agents / "agent.py"), str(delay), self.marker],
            }
            for name, delay in self.delays.items()
        }
        config = {
            "defaults": ["base", "_self_"],
            "project": {"source": "src/ops", "tests": "tests"},
            "issue-sources": {"github": None, "file": None},
            "tasks": {"reruns": 1},
            "run": {"timeout": 300, "grace": grace},
            "contestants": contestants,
        }
        (self.repo / "bugbout.yaml").write_text(json.dumps(config))
        self.process: subprocess.Popen[str] | None = None

    def start(
        self, slow: float, steady: float, sandbox: tuple[str, ...] = ("sandbox=bubblewrap",)
    ) -> subprocess.Popen[str]:
        """``bugbout run`` in a session of its own, as a terminal's foreground job."""
        self.delays["slow"].write_text(str(slow))
        self.delays["steady"].write_text(str(steady))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bugbout", "run", "environment=interpreter", *sandbox],
            cwd=self.repo,
            env={**os.environ, "BUGBOUT_HOME": str(self.home)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        return self.process

    def signal(self, number: int) -> None:
        """What Ctrl-C does: the signal to the foreground process group (the agents run
        in sessions of their own)."""
        assert self.process is not None
        os.killpg(self.process.pid, number)

    def started(self) -> set[Path]:
        """Every attempt started so far: each gets its own folder when it starts."""
        return set((self.home / "attempts").glob("*/*-*"))

    def agents(self) -> list[str]:
        """The live processes of the agents and their daemons."""
        found = subprocess.run(
            ["pgrep", "-f", self.marker], capture_output=True, text=True, check=False
        )
        return found.stdout.split()

    def wait_racing(self, count: int, timeout: float = 300) -> None:
        """Until ``count`` agents run (each with its daemon)."""
        deadline = time.monotonic() + timeout
        while len(self.agents()) < 2 * count:
            assert self.process is not None and self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, "the race did not start"
            time.sleep(0.2)

    def output(self) -> str:
        assert self.process is not None
        if self.process.poll() is None:
            return "(still running)"
        out, err = self.process.communicate()
        return out + err

    def records(self) -> dict[tuple[str, str], dict]:
        """Every stored attempt, by (task, contestant)."""
        folder = self.repo / ".bugbout" / "attempts"
        return {
            (path.parent.parent.name, path.parent.name): json.loads(path.read_text())
            for path in folder.glob("*/*/*.json")
        }


@pytest.fixture
def bout(tmp_path: Path) -> Iterator[Callable[[float], Bout]]:
    """``bout(grace)``; whatever failed, no bugbout and no agent is left behind."""
    made: list[Bout] = []

    def make(grace: float) -> Bout:
        made.append(Bout(tmp_path, grace))
        return made[-1]

    yield make
    for each in made:
        if each.process is not None and each.process.poll() is None:
            os.killpg(each.process.pid, signal.SIGKILL)
            each.process.wait()
        for pid in each.agents():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


def ended(process: subprocess.Popen[str], within: float) -> tuple[int, str, float]:
    """The exit status, stderr and seconds it took, failing after ``within`` seconds."""
    began = time.monotonic()
    try:
        _, err = process.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"bugbout still ran {within} s after the signal:\n{err}")
    return process.returncode, err, time.monotonic() - began


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_starts_nothing_lets_the_grace_run_then_kills(
    bout: Callable[[float], Bout], number: int
) -> None:
    grace = 8.0
    run = bout(grace)
    process = run.start(slow=600, steady=3)
    run.wait_racing(2)
    before = run.started()
    assert len(before) == 2  # one attempt per lane; four more are waiting
    run.signal(number)
    code, err, took = ended(process, within=grace + 30)

    assert code == 130, err
    assert STOPPING in err
    assert grace - 1 < took < grace + 20, took  # waited for the grace, not for the agents
    assert run.started() == before, "an attempt started after the signal"
    assert run.agents() == [], "an agent or its daemon outlived bugbout"
    records = run.records()
    statuses = {key: record["status"] for key, record in records.items()}
    # steady ended within the grace: kept as it ended; slow was killed: interrupted
    assert sorted(statuses.values()) == ["finished", "interrupted"], statuses
    assert all(name in ("slow", "steady") for _, name in statuses)
    (killed,) = [key for key, status in statuses.items() if status == "interrupted"]
    assert killed[1] == "slow"
    assert records[killed]["patch"].get("files", []) == []  # nothing of a killed run is kept
    store = run.repo / ".bugbout"
    assert not (store / "job.json").exists()  # no later stage started
    assert not (store / "matrices").exists()

    if number == signal.SIGTERM:
        return  # the same stop: resuming is checked once, after SIGINT
    # the next run runs the interrupted attempt and the four never started, nothing else
    finished = {key: record for key, record in records.items() if record["status"] == "finished"}
    again = run.start(slow=0, steady=0)
    code, err, _ = ended(again, within=600)
    assert code == 0, err
    after = run.records()
    assert len(after) == 6
    assert {record["status"] for record in after.values()} == {"finished"}
    for key, record in finished.items():
        assert after[key] == record  # never run again
    assert after[killed]["started"] >= records[killed]["started"]
    assert len(run.started()) == 2 + 5


@pytest.mark.parametrize(
    ("number", "sandbox"),
    [
        (signal.SIGINT, "bubblewrap"),
        (signal.SIGTERM, "bubblewrap"),
        pytest.param(signal.SIGINT, "podman", marks=pytest.mark.skipif(
            shutil.which("podman") is None and not os.environ.get("BUGBOUT_REQUIRE_PODMAN"),
            reason="podman is not installed (set BUGBOUT_REQUIRE_PODMAN=1 to fail instead)",
        )),
    ],
    ids=["SIGINT", "SIGTERM", "SIGINT-podman"],
)  # fmt: skip
def test_a_second_signal_kills_at_once(
    bout: Callable[[float], Bout], number: int, sandbox: str
) -> None:
    run = bout(600)
    options = ("sandbox=podman", f"+sandbox.storage={PODMAN_STORAGE}")
    process = run.start(600, 600, options if sandbox == "podman" else ("sandbox=bubblewrap",))
    run.wait_racing(2)
    before = run.started()
    run.signal(number)
    time.sleep(2)
    assert process.poll() is None  # the grace is long: still waiting for the agents
    run.signal(number)
    code, err, took = ended(process, within=30)

    assert code == 130, err
    assert STOPPING in err
    assert took < 20, took
    assert run.started() == before
    assert run.agents() == []
    statuses = {key: record["status"] for key, record in run.records().items()}
    assert sorted(name for _, name in statuses) == ["slow", "steady"]  # one per lane
    assert set(statuses.values()) == {"interrupted"}, statuses
    if sandbox == "podman":  # the killed runs' containers are removed
        podman = Podman(run.home, storage=Path(PODMAN_STORAGE))
        listed = podman.cli("ps", "--all", "--format", "json", "--filter", f"label={LABEL}")
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout or "[]") == []


def test_a_signal_during_ground_truth_starts_no_test_run_and_stores_no_killed_one(
    tmp_path: Path,
) -> None:
    repo = three_bug_repository(tmp_path / "repo", slow_tests=True).path
    home = tmp_path / "home"
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/ops", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "tasks": {"reruns": 1, "jobs": 2},
        "run": {"grace": 3},
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    process = subprocess.Popen(
        [sys.executable, "-m", "bugbout", "tasks", "environment=interpreter", "sandbox=bubblewrap"],
        cwd=repo, env={**os.environ, "BUGBOUT_HOME": str(home)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip

    def test_runs() -> set[str]:  # pytest processes on the bout's trees
        pattern = f"--rootdir {home}"
        found = subprocess.run(
            ["pgrep", "-f", "--", pattern], capture_output=True, text=True, check=False
        )
        return set(found.stdout.split())

    try:
        deadline = time.monotonic() + 300
        while len(before := test_runs()) < 2:  # two tasks' test runs (tasks.jobs)
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGINT)
        signalled, since_boot, started = time.monotonic(), _uptime(), {}
        while process.poll() is None and time.monotonic() < signalled + 60:
            for pid in test_runs() - before:
                started.setdefault(pid, _started(pid))
            time.sleep(0.05)
        took = time.monotonic() - signalled
        code, err, _ = ended(process, within=1)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert code == 130, err
    # one or both tasks' runs had started (pgrep also counts a run's sandbox process)
    assert re.search(r"stopping: (1 task|2 tasks) running \(Ctrl-C again to kill them now\)", err)
    assert took < 3 + 37, took  # the grace (and a loaded machine), not the 60 s runs
    # a run decided on before the signal may still be starting: a moment's slack
    late = {pid for pid, at in started.items() if at is not None and at > since_boot + 0.5}
    assert not late, "a test run started after the signal"
    assert test_runs() == set()
    oracles = repo / ".bugbout" / "oracles.json"
    stored = json.loads(oracles.read_text()) if oracles.exists() else {}
    assert stored == {}, "a killed test run was stored as ground truth"


def test_a_stop_kills_what_a_ray_worker_runs(tmp_path: Path) -> None:
    """With ``executor=ray`` the agents run in Ray's workers: the kill cancels their jobs,
    and each worker kills the process group it started at once."""
    pytest.importorskip("ray")
    from bugbout.core.plumbing.confinement.process import run_logged
    from bugbout.core.plumbing.runtime.stopping import Interrupted, Stop
    from bugbout.plugins.executors.ray import RayExecutor, RayOptions

    marker = f"bugbout-interrupt-{uuid.uuid4().hex}"
    job = functools.partial(
        run_logged,
        [sys.executable, "-c", "import time; time.sleep(600)", marker],
        cwd=tmp_path, env=dict(os.environ), stdin=None, timeout=900,
        stdout=tmp_path / "out.log", stderr=tmp_path / "err.log", limit=1000,
    )  # fmt: skip

    def alive() -> list[str]:
        found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
        return found.stdout.split()

    messages: list[str] = []
    executor = RayExecutor(RayOptions(num_cpus=1))
    try:
        with Stop(grace=0, notify=messages.append).installed() as stop:
            future = stop.executor(executor, "attempt").submit(job)
            deadline = time.monotonic() + 300
            while not alive():
                assert not future.done() and time.monotonic() < deadline, future
                time.sleep(0.2)
            stop.kill()
            with pytest.raises(Interrupted):
                future.result(timeout=60)
            deadline = time.monotonic() + 30
            while alive() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert alive() == [], "the worker left its agent running"
    finally:
        executor.close()
        for pid in alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    assert messages[0] == "stopping: 1 attempt running (Ctrl-C again to kill them now)"


def _uptime() -> float:
    """Seconds since the machine booted (the clock of /proc's process start times)."""
    return float(Path("/proc/uptime").read_text().split()[0])


def _started(pid: str) -> float | None:
    """When process ``pid`` started, in seconds since boot; ``None`` once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")
