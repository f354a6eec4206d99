"""Attack: make bugbout read what the agent wrote by following it.

Real bouts, real bubblewrap, real git and pytest; the contestant is a ``command`` agent
that, given its log folder (``{logdir}``), puts a symbolic link to a host secret, a link
to ``/dev/zero`` or a FIFO wherever bugbout would read after the attempt: its own logs
and an adapter's output files. Containment is asserted by effect: the secret is in no
stored file, bugbout's memory stays bounded, the bout ends, and so does its resumption.
Each adapter's ``parse`` meets the same files, in a bounded child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from one_bug import attempts, one_bug_repository, write_agent

SECRET = "SECRET-0f9d2c7e-do-not-store"
PLANTED = ("stdout.log", "stderr.log", "last.txt", "trajectory.json", "chat.md")
"""Everything an agent or its adapter may leave in the log folder."""
ATTACK = """
    import os, sys, time
    logdir = sys.argv[1]
    print("I fixed it, promise.", flush=True)
    print("a warning", file=sys.stderr, flush=True)
    for name in {planted!r}:
        path = os.path.join(logdir, name)
        if os.path.lexists(path):
            os.unlink(path)
        {plant}
"""
PLANTS = {
    "secret": "os.symlink({secret!r}, path)",
    "zero": "os.symlink('/dev/zero', path)",
    "fifo": "os.mkfifo(path)",
}
MEMORY_CAP = 2 * 1024**3
"""The address space the bout may take at all: an unbounded read stops here, not at the
machine's memory."""
PEAK_RSS = 200 * 1024**2
"""The most memory the bout may use: a one-task bout takes about 60 MB."""
RUNNER = """
import json, os, resource, signal, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
process = subprocess.Popen(sys.argv[2:], start_new_session=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
try:
    out, err = process.communicate(timeout=float(sys.argv[1]))
    timed_out = False
except subprocess.TimeoutExpired:
    os.killpg(process.pid, signal.SIGKILL)
    out, err = process.communicate()
    timed_out = True
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps(dict(code=process.returncode, out=out, err=err, timed_out=timed_out,
                      peak=peak)))
"""


def attack_repo(tmp_path: Path, plant: str, secret: Path) -> Path:
    """A one-bug repository whose only contestant plants ``plant`` in its log folder."""
    repo = one_bug_repository(tmp_path / "repo")
    code = ATTACK.format(planted=PLANTED, plant=PLANTS[plant].format(secret=str(secret)))
    (tmp_path / "agents").mkdir()
    script = write_agent(tmp_path / "agents", "attacker", code)
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 60},
        "contestants": {
            "attacker": {"agent": "command", "command": [sys.executable, str(script), "{logdir}"]}
        },
    }
    (repo.path / "bugbout.yaml").write_text(json.dumps(config))
    return repo.path


def bout(repo: Path, *args: str, timeout: float = 300) -> dict[str, Any]:
    """``bugbout run`` in a child process whose address space is capped, killed (with its
    process group) after ``timeout`` seconds: its exit status, output and peak memory."""
    argv = [sys.executable, "-m", "bugbout", "run", *args, "environment=interpreter"]
    runner = [sys.executable, "-c", RUNNER.format(cap=MEMORY_CAP), str(timeout), *argv]
    done = subprocess.run(runner, cwd=repo, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def stored_files(repo: Path, record: dict[str, Any]) -> dict[Path, bytes]:
    """Every regular file of the store, and of the attempt's log folder."""
    files = [*(repo / ".bugbout").rglob("*"), *Path(record["logdir"]).rglob("*")]
    return {p: p.read_bytes() for p in files if p.is_file() and not p.is_symlink()}


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file of the user running bugbout that the agent cannot see (the sandbox's /tmp
    is private), only name."""
    path = tmp_path / "host-secret.txt"
    path.write_text(SECRET + "\n")
    return path


def the_attempt(repo: Path) -> dict[str, Any]:
    return attempts(repo)["attacker"]


@pytest.mark.slow
def test_a_link_to_a_host_file_is_never_followed(tmp_path: Path, secret: Path) -> None:
    repo = attack_repo(tmp_path, "secret", secret)
    ran = bout(repo)
    assert ran["code"] == 0 and not ran["timed_out"], ran["err"]
    record = the_attempt(repo)
    leaked = [str(p) for p, data in stored_files(repo, record).items() if SECRET.encode() in data]
    assert leaked == []
    assert record["status"] == "agent-error"
    assert record["error"].startswith("the agent wrote logs/stdout.log itself (a symbolic link")
    assert record["summary"] == "I fixed it, promise."  # what it printed, from bugbout's pipe
    logs = Path(record["logdir"])
    assert (logs / "stderr.log").read_text() == "a warning\n"
    assert (logs / "last.txt").is_symlink()  # the agent's own files stay as it left them


@pytest.mark.slow
def test_a_link_to_dev_zero_leaves_bugbouts_memory_bounded(tmp_path: Path, secret: Path) -> None:
    repo = attack_repo(tmp_path, "zero", secret)
    ran = bout(repo)
    assert ran["code"] == 0 and not ran["timed_out"], ran["err"]
    assert ran["peak"] < PEAK_RSS, f"bugbout grew to {ran['peak'] / 1e6:.0f} MB"
    record = the_attempt(repo)
    assert record["status"] == "agent-error"
    assert "(a symbolic link to '/dev/zero')" in record["error"]


@pytest.mark.slow
def test_a_fifo_blocks_neither_the_bout_nor_its_resumption(tmp_path: Path, secret: Path) -> None:
    repo = attack_repo(tmp_path, "fifo", secret)
    ran = bout(repo, timeout=240)
    assert not ran["timed_out"], "the bout blocked on a FIFO the agent left"
    assert ran["code"] == 0, ran["err"]
    record = the_attempt(repo)
    assert record["status"] == "agent-error"
    assert record["error"] == (
        "the agent wrote logs/stdout.log itself (a FIFO), where bugbout keeps what it printed"
    )
    for args in ((), ("--retry-failed",)):  # an agent-error is never paid for again
        again = bout(repo, *args, timeout=120)
        assert not again["timed_out"], "resuming the bout blocked"
        assert again["code"] == 0, again["err"]
        assert "no new attempts" in again["out"]
        assert the_attempt(repo) == record


# -- each adapter's parse, on the same files ----------------------------------------------------

PARSE = """
import json, resource, sys
from pathlib import Path
from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import make_plugins
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
agent = make_plugins(entry_points=False).create("agent", sys.argv[1], json.loads(sys.argv[2]))
try:
    summary, usage = agent.parse(Path(sys.argv[3]))
    print(json.dumps(dict(summary=summary)))
except BugboutError as exc:
    print(json.dumps(dict(refused=str(exc))))
"""
ADAPTERS = {
    "codex": ({}, "last.txt"),
    "claude-code": ({}, "stdout.log"),
    "gemini-cli": ({}, "stderr.log"),
    "mini-swe-agent": ({"model": "openai/gpt-5"}, "trajectory.json"),
    "command": ({"name": "agent", "command": ["true"]}, "stdout.log"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_an_adapter_reads_nothing_by_following_it(
    tmp_path: Path, secret: Path, adapter: str, plant: str
) -> None:
    """An adapter's ``parse`` on a log folder where the file it reads is the agent's
    link or FIFO (as when an agent runs without bugbout's sandbox): it says so at once,
    reading nothing of the link's target."""
    options, name = ADAPTERS[adapter]
    logdir = tmp_path / "logs"
    logdir.mkdir()
    for other in ("stdout.log", "stderr.log"):
        (logdir / other).write_text("Exit 1: it failed.\n")
    path = logdir / name
    path.unlink(missing_ok=True)
    if plant == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(secret if plant == "secret" else Path("/dev/zero"))
    code = PARSE.format(cap=MEMORY_CAP // 2)
    argv = [sys.executable, "-c", code, adapter, json.dumps(options), str(logdir)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{adapter}'s parse blocked on a {plant} at {name}")
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert SECRET not in done.stdout
    assert answer.get("refused", "").startswith(f"logs/{name} is a "), answer
