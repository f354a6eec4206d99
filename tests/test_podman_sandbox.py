"""The ``podman`` sandbox, for real: the attacks the other sandboxes face
(tests/test_sandbox_*.py, run here against podman), what its command line passes on, a
whole bout with ``sandbox=podman``, and no container left behind however a run ends. Its
conformance suite runs in tests/test_conformance.py.

Without podman these fail, unless the run allows skipping podman (``--allow-skip
podman``); a broken podman fails them always.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import components
from bugbout.core.plumbing.confinement.confine import readable_paths
from bugbout.core.plumbing.confinement.process import run_logged
from bugbout.core.store.race_records import Score
from bugbout.core.store.store import RESOLUTIONS, Store
from bugbout.core.store.verdict_records import ResolutionSet
from bugbout.plugins.sandboxes.podman import PodmanSandbox, PodmanSandboxOptions
from bugbout.sandbox.confinement import Confinement
from bugbout.sandbox.podman import LABEL, Podman
from bugbout.testing.model_server import ModelServer, Say, Script, Shell
from one_bug import AGENTS, attempts, one_bug_repository, write_agent

# The attacks of tests/test_sandbox_{files,processes,network}.py, collected again in this
# module, where the fixtures below give them the podman sandbox (``bwrap`` names the
# sandbox under attack in the tests written for bubblewrap alone).
from test_sandbox_files import (  # noqa: F401
    test_a_link_in_the_checkout_does_not_reach_a_masked_file,
    test_a_masked_directory_inside_the_checkout_stays_hidden,
    test_bugbout_home_shows_only_the_way_to_what_is_exposed,
    test_control_without_masks_the_same_commands_read_every_secret,
    test_home_and_a_masked_file_are_hidden,
    test_no_secret_anywhere_in_the_world_is_readable,
    test_symlinked_paths_are_resolved,
    test_the_checkout_and_the_logs_are_writable,
    test_the_original_repository_is_hidden,
    test_the_readable_environment_can_be_read_not_changed,
    test_the_store_cannot_be_listed_or_read,
    test_writes_anywhere_else_fail_and_leave_nothing,
)
from test_sandbox_network import (  # noqa: F401
    test_a_host_socket_in_a_writable_directory_is_reachable_without_network,
    test_host_services_are_reachable_with_network,
    test_host_services_are_unreachable_without_network,
    test_loopback_works_inside_without_network,
)
from test_sandbox_processes import (  # noqa: F401
    test_a_workdir_under_tmp_stays_the_real_one,
    test_every_process_of_the_sandbox_dies_with_it,
    test_masks_cannot_be_unmounted_even_as_root,
    test_no_host_process_is_visible,
    test_the_sandbox_has_no_controlling_terminal,
    test_tmp_is_private,
)

pytestmark = pytest.mark.requires("podman")

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}


STORAGE = f"/var/tmp/bugbout-podman-sandbox-tests{os.environ.get('PYTEST_XDIST_WORKER', '')}"
"""Podman's storage for these tests, outside pytest's temporary folders: it holds mounts
that pytest could not remove. One per pytest-xdist worker: the tests that count their
containers must not see another worker's."""


def _podman() -> PodmanSandbox:
    sandbox = PodmanSandbox(PodmanSandboxOptions(storage=STORAGE))
    problem = sandbox.problem()
    assert problem is None, problem  # installed (or required) but broken: a failure
    return sandbox


@pytest.fixture
def sandbox() -> PodmanSandbox:
    return _podman()


@pytest.fixture
def bwrap() -> PodmanSandbox:
    return _podman()


def containers() -> list[dict[str, Any]]:
    """bugbout's sandbox containers in these tests' storage."""
    podman = Podman(Path(os.environ["BUGBOUT_HOME"]), storage=Path(STORAGE))
    listed = podman.cli("ps", "--all", "--format", "json", "--filter", f"label={LABEL}=sandbox")
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout or "[]"))


def _gone(timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not containers():
            return True
        time.sleep(0.2)
    return False


# -- what the wrapped command line does ----------------------------------------------------


def test_the_environment_is_exactly_the_callers(sandbox: PodmanSandbox, tmp_path: Path) -> None:
    os.environ["BUGBOUT_TEST_LEAK"] = "leaked"  # in bugbout's environment, not the caller's
    try:
        argv = sandbox.wrap(["/usr/bin/env"], Confinement(workdir=tmp_path))
        result = subprocess.run(
            argv,
            cwd=tmp_path,
            env={**ENV, "AGENT_KEY": "own key", "MULTI": "a\nb=c"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        del os.environ["BUGBOUT_TEST_LEAK"]
    assert result.returncode == 0, result.stderr
    assert "AGENT_KEY=own key\n" in result.stdout and "MULTI=a\nb=c\n" in result.stdout
    assert "BUGBOUT_TEST_LEAK" not in result.stdout and "CONTAINERS_CONF" not in result.stdout


WRITE_TO_FD = (
    "import os, sys\n"
    "print('got', sys.stdin.readline().strip())\n"
    "os.write(int(os.environ['FD']), b'outcome\\n')\n"
)


def test_standard_input_and_passed_descriptors_reach_the_process(
    sandbox: PodmanSandbox, tmp_path: Path
) -> None:
    """A test run's outcomes come back on a descriptor named by a variable."""
    read_end, write_end = os.pipe()
    spare = os.open(os.devnull, os.O_RDONLY)  # a gap below the passed descriptor
    # a free number well above the gap (dup2 to a fixed one could replace an open one)
    high = fcntl.fcntl(write_end, fcntl.F_DUPFD, max(read_end, write_end, spare) + 10)
    os.close(write_end)
    os.close(spare)
    try:
        argv = sandbox.wrap(
            [sys.executable, "-c", WRITE_TO_FD],
            # the interpreter may live under /tmp (nox's venv), which the sandbox hides
            Confinement(workdir=tmp_path, readable=readable_paths([sys.executable])),
        )
        result = subprocess.run(
            argv,
            cwd=tmp_path,
            env={**ENV, "FD": str(high)},
            input="hello\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            pass_fds=(high,),
        )
        os.close(high)
        assert result.returncode == 0, result.stderr
        with os.fdopen(read_end) as outcomes:
            assert outcomes.read() == "outcome\n", (high, result.stderr)
    finally:
        with contextlib.suppress(OSError):
            os.close(high)
    assert result.stdout == "got hello\n"


@pytest.mark.slow
def test_a_timed_out_run_leaves_no_container(sandbox: PodmanSandbox, tmp_path: Path) -> None:
    """run_logged kills the process group on a timeout: the container goes with it, before
    run_logged returns (the watcher holds the output open until it is removed)."""
    (tmp_path / "work").mkdir()
    argv = sandbox.wrap(
        ["/bin/sh", "-c", "echo started; sleep 600"], Confinement(workdir=tmp_path / "work")
    )
    ended = run_logged(
        argv, cwd=tmp_path / "work", env=ENV, stdin=None, timeout=8,
        stdout=tmp_path / "out.log", stderr=tmp_path / "err.log", limit=10_000,
    )  # fmt: skip
    assert ended.timed_out
    assert (tmp_path / "out.log").read_text() == "started\n"
    assert containers() == []


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_killing_only_the_runner_removes_the_container(
    sandbox: PodmanSandbox, tmp_path: Path, how: signal.Signals
) -> None:
    argv = sandbox.wrap(["/bin/sh", "-c", "echo up; sleep 600"], Confinement(workdir=tmp_path))
    process = subprocess.Popen(
        argv, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, start_new_session=True, text=True
    )
    assert process.stdout is not None
    try:
        assert process.stdout.readline() == "up\n"
        assert len(containers()) == 1
        process.send_signal(how)
        process.wait(timeout=30)
        assert _gone(), containers()
    finally:
        os.killpg(process.pid, signal.SIGKILL) if process.poll() is None else None
        process.wait()


def test_problem_names_the_fix_when_podman_is_missing() -> None:
    sandbox = PodmanSandbox(PodmanSandboxOptions(executable="no-such-podman"))
    problem = sandbox.problem()
    assert problem is not None and "\n" not in problem
    assert "apt-get install -y podman" in problem and "sandbox=bubblewrap" in problem


def test_a_path_podman_cannot_mount_is_a_clear_error(
    sandbox: PodmanSandbox, tmp_path: Path
) -> None:
    odd = tmp_path / "a,b"
    odd.mkdir()
    from bugbout.core.contract.errors import PluginError

    with pytest.raises(PluginError, match="contains a comma"):
        sandbox.wrap(["true"], Confinement(workdir=odd))


# -- whole bouts ---------------------------------------------------------------------------


SNOOP = """
    import json, os, pathlib, socket, sys, urllib.request
    from pathlib import Path
    evidence = {{}}
    def attempt(name, action):
        try:
            evidence[name] = "ALLOWED: " + str(action())[:80]
        except Exception as exc:
            evidence[name] = "blocked: " + type(exc).__name__
    attempt("model", lambda: urllib.request.urlopen({model!r} + "/v1/models", timeout=10).status)
    attempt("stranger", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=3))
    attempt("git", lambda: Path({repo!r}, ".git", "HEAD").read_text())
    attempt("store", lambda: Path({repo!r}, ".bugbout", "tasks.json").read_text())
    attempt("write-repo", lambda: Path({repo!r}, "pwned.txt").write_text("x"))
    attempt("write-elsewhere", lambda: Path({outside!r}).write_text("x"))
    attempt("cgroup", lambda: Path("/proc/1/cgroup").read_text())
    print(json.dumps(evidence))
    Path("src/mid/core.py").write_text({fixed!r})
"""


@pytest.fixture
def podman_repo(tmp_path: Path) -> Path:
    """The one-bug repository of tests/one_bug.py, raced in the podman sandbox."""
    return one_bug_repository(tmp_path / "repo").path


def _configure(repo: Path, contestants: dict[str, Any], timeout: float = 60) -> None:
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": timeout, "quotas": {"command": 4}},
        "contestants": contestants,
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))


def _bugbout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args, "environment=interpreter"],
        cwd=cwd, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


@pytest.fixture
def stranger() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@pytest.mark.slow
def test_a_bout_in_the_podman_sandbox(podman_repo: Path, tmp_path: Path, stranger: int) -> None:
    """A scripted contestant fixes the bug in a container: it reaches its model through
    the egress forwarder and nothing else, cannot touch the repository or anything
    outside its checkout, and its patch is exactly its fix; a sleeping one times out and
    leaves no container behind."""
    from one_bug import FIXED

    outside = Path("/opt") / f"bugbout-podman-outside-{os.getpid()}.txt"
    with ModelServer([Say("done")]) as model:
        agents = tmp_path / "agents"
        agents.mkdir()
        snoop = SNOOP.format(
            model=model.url, port=stranger, repo=str(podman_repo), outside=str(outside),
            fixed=FIXED,
        )  # fmt: skip
        _configure(
            podman_repo,
            {
                "fixer": {
                    "agent": "command",
                    "command": [sys.executable, str(write_agent(agents, "fixer", snoop))],
                    "endpoints": [model.url],
                },
                "sleepy": {
                    "agent": "command",
                    "command": [
                        sys.executable,
                        str(write_agent(agents, "sleepy", AGENTS["sleepy"])),
                    ],
                },
            },
            timeout=20,
        )
        result = _bugbout("run", "sandbox=podman", f"+sandbox.storage={STORAGE}", cwd=podman_repo)
        assert result.returncode == 0, result.stderr
        hits = len(model.requests)
    found = attempts(podman_repo)
    fixer, sleepy = found["fixer"], found["sleepy"]
    assert fixer["status"] == "finished", fixer
    assert [f["path"] for f in fixer["patch"]["files"]] == ["src/mid/core.py"]
    assert "+    if len(ordered) % 2 == 0:" in fixer["patch"]["source"]
    assert fixer["patch"]["other"] == "" and fixer["patch"]["tests"] == ""
    evidence = json.loads(Path(fixer["logdir"], "stdout.log").read_text().splitlines()[-1])
    assert evidence.pop("model") == "ALLOWED: 200" and hits == 1
    assert "libpod" in evidence.pop("cgroup")  # it did run in a podman container
    assert all(value.startswith("blocked") for value in evidence.values()), evidence
    assert not (podman_repo / "pwned.txt").exists() and not outside.exists()
    assert sleepy["status"] == "timeout"
    # and scored in containers too: the scoring tree is a copy podman can run pytest on
    resolutions = Store(podman_repo / ".bugbout").read(RESOLUTIONS, ResolutionSet)
    assert resolutions is not None
    (task,) = resolutions.root.values()
    assert task.patches["fixer"].score == Score.RESOLVED, task.patches["fixer"].run
    assert _gone(), containers()


def _mini() -> str:
    """mini-swe-agent's ``mini`` (its own virtual environment: ``BUGBOUT_MINI``, or PATH)."""
    mini = os.environ.get("BUGBOUT_MINI") or shutil.which("mini")
    if not mini or not os.access(mini, os.X_OK):
        components.missing("agent-clis", "mini is not on PATH and BUGBOUT_MINI does not name it")
    return mini


@pytest.mark.slow
def test_mini_swe_agent_with_a_local_model_races_in_the_podman_sandbox(
    podman_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real mini-swe-agent, its model a server on this machine's 127.0.0.1 reached
    through the egress forwarder, fixes the bug from inside a container."""
    from one_bug import FIXED

    mini = _mini()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
    fix = f"cat > src/mid/core.py <<'EOF'\n{FIXED}EOF"
    with ModelServer(Script([Shell(fix), Say("Fixed middle() for even-length lists.")])) as model:
        contestant = {
            "agent": "mini-swe-agent",
            "executable": mini,
            "model": "openai/scripted",
            "base-url": f"{model.url}/v1",
            "step-limit": 10,
        }
        _configure(podman_repo, {"mini": contestant}, timeout=300)
        result = _bugbout("run", "sandbox=podman", f"+sandbox.storage={STORAGE}", cwd=podman_repo)
        assert result.returncode == 0, result.stderr
        assert model.scripted_requests
    mini_attempt = attempts(podman_repo)["mini"]
    assert mini_attempt["status"] == "finished", mini_attempt
    assert [f["path"] for f in mini_attempt["patch"]["files"]] == ["src/mid/core.py"]
    assert "+    if len(ordered) % 2 == 0:" in mini_attempt["patch"]["source"]
    assert mini_attempt["summary"] == "Fixed middle() for even-length lists."
    assert _gone(), containers()
