"""A store that cannot be written (a read-only mount, a full disk) stops a bout before it
spends anything, with one line, never a traceback; from the command line and from Python.
Each case runs bugbout in a user and mount namespace of its own (`unshare`), where the
store is mounted read-only or as a tiny tmpfs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from one_bug import one_bug_repository

MOUNTS = {
    "read-only": "mount --bind .bugbout .bugbout && mount -o remount,bind,ro .bugbout",
    "full": "mount -t tmpfs -o size=1m tmpfs .bugbout",
}
API = (
    "from bugbout.bout import Bout, Project\n"
    "from bugbout.core.contract.errors import BugboutError\n"
    "try:\n"
    "    Bout(Project.load('.', ['environment=interpreter'])).run()\n"
    "except BugboutError as exc:\n"
    "    print(type(exc).__name__, exc)\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed: apt install util-linux")
    repo = one_bug_repository(tmp_path / "repo").path
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "contestants": {"alpha": {"agent": "command", "command": ["true"]}},
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    (repo / ".bugbout").mkdir()
    return repo


def _in_namespace(project: Path, mount: str, *argv: str) -> subprocess.CompletedProcess[str]:
    script = f'{mount} && exec "$@"'
    return subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", script, "sh", *argv],
        cwd=project, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("case", "said"), [("read-only", "Read-only file system"), ("full", "MB free")]
)
def test_bugbout_run_stops_at_once_with_one_line(project: Path, case: str, said: str) -> None:
    ran = _in_namespace(
        project, MOUNTS[case], sys.executable, "-m", "bugbout", "run", "environment=interpreter"
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    errors = [line for line in ran.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and said in errors[0], ran.stderr
    assert "racing" not in ran.stdout + ran.stderr, "nothing was spent"


@pytest.mark.parametrize(
    ("case", "said"), [("read-only", "Read-only file system"), ("full", "MB free")]
)
def test_bout_run_from_python_raises_a_store_error(project: Path, case: str, said: str) -> None:
    ran = _in_namespace(project, MOUNTS[case], sys.executable, "-c", API)
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.stdout.startswith("StoreError ") and said in ran.stdout, ran.stdout + ran.stderr
