"""An agent dies with bugbout, and a resume never runs two copies, performed for real: a
``command`` contestant that sleeps, with a daemon of its own in a new session ignoring
SIGHUP and SIGTERM, races in a real bout under each sandbox; bugbout is killed with
``kill -9`` (its process group, as a terminal's or a supervisor's kill would), then run
again. Every copy of the agent holds a lock on a file outside the sandbox for as long as
any of its processes lives, so a copy that starts beside another one says so."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from effects import tagged_processes
from harness import PODMAN_STORAGE, SANDBOXES, contestant, plant

from bugbout.sandbox.podman import LABEL, Podman

pytestmark = pytest.mark.slow

AGENT = """
run=$(date +%s%N)  # a pid repeats: each sandbox has a pid namespace of its own
exec 9>>"$MARKS/lock"
if flock -n 9; then touch "$MARKS/alone.$run"; else touch "$MARKS/beside.$run"; flock 9; fi
touch "$MARKS/start.$run"
setsid bash -c 'trap "" HUP TERM; sleep 600; :' "$TAG" &
sleep "$(cat "$MARKS/delay")"
echo done
"""
"""The agent: its daemon inherits the lock, so the lock is free only once all of it is dead."""


class Racing:
    """A bout of one sleeping agent, started and killed at will."""

    def __init__(self, root: Path, sandbox: str) -> None:
        self.planted = plant(root)
        self.marks = root / "marks"
        self.marks.mkdir()
        self.tag = f"orphan-{uuid.uuid4().hex}"
        script = f"MARKS={self.marks}\n{AGENT}"
        entry = contestant(self.planted, "sleeper", script, self.tag, None)
        config = {
            "defaults": ["base", "_self_"],
            "project": {"source": "src/box", "tests": "tests"},
            "issue-sources": {"github": None, "file": None},
            "run": {"timeout": 900},
            "verdicts": {"run-suite": False},
            "contestants": {"sleeper": entry | {"state-dirs": [str(self.marks)]}},
        }
        (self.planted.repo / "bugbout.yaml").write_text(json.dumps(config))
        self.options = (
            ("sandbox=podman", f"+sandbox.storage={PODMAN_STORAGE}")
            if sandbox == "podman"
            else ("sandbox=bubblewrap",)
        )
        self.sandbox = sandbox
        self.process: subprocess.Popen[str] | None = None

    def start(self, delay: float) -> subprocess.Popen[str]:
        (self.marks / "delay").write_text(str(delay))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bugbout", "run", "environment=interpreter", *self.options],
            cwd=self.planted.repo,
            env={**os.environ, "BUGBOUT_HOME": str(self.planted.home)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        return self.process

    def wait_for_agent(self, timeout: float = 300) -> None:
        """Until the agent's daemon runs (the agent has started, and holds the lock)."""
        deadline = time.monotonic() + timeout
        while not [p for p in tagged_processes(self.tag) if "sleep 600" in p]:
            assert self.process is not None and self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, "the agent did not start"
            time.sleep(0.2)

    def kill(self) -> None:
        """``kill -9`` of bugbout's process group."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def output(self) -> str:
        assert self.process is not None
        if self.process.poll() is None:
            return "(still running)"
        out, err = self.process.communicate()
        return out + err

    def alive(self, within: float) -> list[str]:
        """What of the agent still runs after up to ``within`` seconds."""
        deadline = time.monotonic() + within
        while (found := tagged_processes(self.tag)) and time.monotonic() < deadline:
            time.sleep(0.1)
        return found

    def containers(self) -> list[dict[str, object]]:
        podman = Podman(self.planted.home, storage=Path(PODMAN_STORAGE))
        listed = podman.cli("ps", "--all", "--format", "json", "--filter", f"label={LABEL}")
        assert listed.returncode == 0, listed.stderr
        return [c for c in json.loads(listed.stdout or "[]") if self._ours(c)]

    def _ours(self, container: dict[str, object]) -> bool:
        return str(self.planted.home) in json.dumps(container)

    def marked(self, kind: str) -> int:
        return len(list(self.marks.glob(f"{kind}.*")))

    def cleanup(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        for line in tagged_processes(self.tag):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split(":")[0]), signal.SIGKILL)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_agent_process_outlives_bugbout_killed(tmp_path: Path, sandbox: str) -> None:
    bout = Racing(tmp_path, sandbox)
    try:
        bout.start(delay=600)
        bout.wait_for_agent()
        bout.kill()
        assert bout.alive(within=5) == [], "the agent outlived bugbout"
        bout.start(delay=0)
        assert bout.process is not None
        _, err = bout.process.communicate(timeout=600)
        assert bout.process.returncode == 0, err[-3000:]
        assert (bout.marked("start"), bout.marked("alone"), bout.marked("beside")) == (2, 2, 0)
        if sandbox == "podman":
            assert bout.containers() == []
    finally:
        bout.cleanup()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_resume_ends_what_a_dead_bugbout_left_before_running_again(
    tmp_path: Path, sandbox: str
) -> None:
    """bugbout and the guard in front of its agent both killed: what the guard started is
    left running; the next ``bugbout run`` ends exactly that, then runs the attempt once."""
    bout = Racing(tmp_path, sandbox)
    try:
        bout.start(delay=600)
        bout.wait_for_agent()
        assert bout.process is not None
        (guard,) = _children(bout.process.pid, bout.tag)
        os.kill(guard, signal.SIGKILL)
        bout.kill()
        bout.start(delay=0)
        _, err = bout.process.communicate(timeout=600)
        assert bout.process.returncode == 0, err[-3000:]
        assert bout.alive(within=5) == [], "what the dead bugbout left still runs"
        # the second copy started once the first had wholly ended, never beside it
        assert (bout.marked("start"), bout.marked("alone"), bout.marked("beside")) == (2, 2, 0)
        if sandbox == "podman":
            assert bout.containers() == []
    finally:
        bout.cleanup()


def _children(parent: int, tag: str) -> list[int]:
    """The processes whose parent is ``parent`` and whose command line holds ``tag``."""
    found = []
    for line in tagged_processes(tag):
        pid = int(line.split(":")[0])
        with contextlib.suppress(OSError, IndexError):
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[1]) == parent and stat[0] != "Z":
                found.append(pid)
    return found
