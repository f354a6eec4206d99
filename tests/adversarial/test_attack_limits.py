"""Attacks on the host's resources, performed for real: ``command`` contestants under the
real bubblewrap sandbox, in one bout with lowered ``limits:``, each asserting by effect
that the attack was contained and recorded as the agent's doing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from one_bug import attempts, one_bug_repository, write_agent

pytestmark = pytest.mark.slow

MARK = f"bugbout-attack-{uuid.uuid4().hex}"
"""Set in the environment of every attacking process, to find any that outlives the bout."""
LIMITS = {
    "patch-size": 1_000_000,
    "files": 1000,
    "disk": 200_000_000,
    "tmp": 20_000_000,
    "memory": 300_000_000,
    "processes": 64,
}
PEAK_BOUND_KB = 250_000  # fcb33a1 reached 648 MB on this bout
"""bugbout's own peak resident memory: a bout of these attackers needs about 60 MB, a
100 MB patch read whole far more."""

ATTACKS = {
    # 100 MB of random bytes in the checkout: a 100 MB binary patch if it were diffed.
    "flood": """
        import os
        os.makedirs("data", exist_ok=True)
        with open("data/blob.bin", "wb") as out:
            for _ in range(100):
                out.write(os.urandom(1_000_000))
    """,
    # Up to 100 MB in each memory-backed temporary filesystem; says how much went in.
    "tmpfill": """
        import os
        written = {}
        for place in ("/tmp", "/var/tmp", "/dev/shm", "/run", "/dev"):
            count = 0
            try:
                with open(os.path.join(place, "fill"), "wb") as out:
                    for _ in range(100):
                        out.write(b"x" * 1_000_000)
                        out.flush()
                        count += 1_000_000
            except OSError:
                pass
            written[place] = count
        with open("tmp-evidence.txt", "w") as out:
            out.write(repr(written) + "\\n")
    """,
    # A fork bomb (bounded at 511 processes, so that it cannot take the machine down if
    # it is not contained); each process sleeps.
    "forkbomb": """
        import os, subprocess, time
        os.environ["BUGBOUT_ATTACK"] = "{mark}"
        subprocess.Popen(["bash", "-c",
            "b() { if [ $1 -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & fi; sleep 120; }; b 8"])
        time.sleep(120)
    """,
    # Three processes of 120 MB each: none is large alone, together they are.
    "hog": """
        import os, subprocess, sys, time
        os.environ["BUGBOUT_ATTACK"] = "{mark}"
        code = "import time; block = b'x' * 120_000_000; time.sleep(120)"
        for _ in range(3):
            subprocess.Popen([sys.executable, "-c", code])
        time.sleep(120)
    """,
    # 20,000 empty files (a million, scaled down with limits.files).
    "manyfiles": """
        import os
        os.makedirs("junk", exist_ok=True)
        for number in range(20_000):
            open(f"junk/{number}", "w").close()
    """,
    # 300 MB where the patch never looks (a cache directory).
    "hoard": """
        import os
        os.makedirs("__pycache__", exist_ok=True)
        with open("__pycache__/hoard.bin", "wb") as out:
            for _ in range(300):
                out.write(b"x" * 1_000_000)
                out.flush()
    """,
}


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """One bout of every attacker, one at a time; the repository and bugbout's own peak
    resident memory in KB."""
    root = tmp_path_factory.mktemp("limits")
    repo = one_bug_repository(root / "repo").path
    agents = root / "agents"
    agents.mkdir()
    contestants = {
        name: {
            "agent": "command",
            "command": [
                sys.executable,
                str(write_agent(agents, name, source.replace("{mark}", MARK))),
            ],
        }
        for name, source in ATTACKS.items()
    }
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 60, "quotas": {"command": 1}},
        "verdicts": {"run-suite": False},
        "limits": LIMITS,
        "contestants": contestants,
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    peak = root / "peak"
    measured = (
        "import atexit, resource, runpy, sys\n"
        "path = sys.argv.pop(1)\n"
        "atexit.register(lambda: open(path, 'w').write("
        "str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))\n"
        "runpy.run_module('bugbout', run_name='__main__', alter_sys=True)\n"
    )
    env = {**os.environ, "BUGBOUT_HOME": str(root / "home")}
    env.pop("GITHUB_TOKEN", None)
    result = subprocess.run(
        [sys.executable, "-c", measured, str(peak), "run", "environment=interpreter"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return repo, int(peak.read_text())


def record(bout: tuple[Path, int], name: str) -> dict:
    return attempts(bout[0])[name]


def stored_size(bout: tuple[Path, int], name: str) -> int:
    (path,) = (bout[0] / ".bugbout" / "attempts").glob(f"*/{name}/*.json")
    return path.stat().st_size


def test_a_flood_in_the_checkout_is_a_patch_too_large_kept_out_of_the_record(
    bout: tuple[Path, int],
) -> None:
    flood = record(bout, "flood")
    assert flood["status"] == "agent-error"
    assert flood["error"] == "patch too large (100 MB > 1 MB limit; setting limits.patch-size)"
    assert flood["patch"]["files"] == []
    assert stored_size(bout, "flood") < 20_000


def test_bugbout_memory_stays_bounded(bout: tuple[Path, int]) -> None:
    assert bout[1] < PEAK_BOUND_KB


def test_the_temporary_filesystems_hold_no_more_than_their_limit(
    bout: tuple[Path, int],
) -> None:
    fill = record(bout, "tmpfill")
    (line,) = [line[1:] for line in fill["patch"]["other"].splitlines() if line.startswith("+{")]
    written = eval(line)  # the agent's own report of what it could write
    assert set(written) >= {"/tmp", "/var/tmp", "/dev/shm", "/dev"}
    assert all(amount <= LIMITS["tmp"] for amount in written.values()), written
    assert written["/dev"] == 0


def test_a_fork_bomb_is_killed_and_nothing_outlives_the_bout(bout: tuple[Path, int]) -> None:
    bomb = record(bout, "forkbomb")
    assert bomb["status"] == "agent-error"
    assert bomb["error"].startswith("too many processes (")
    assert bomb["error"].endswith("> 64 limit; setting limits.processes)")
    assert bomb["wall_time"] < 30
    assert _marked_processes() == []


def test_a_memory_hog_is_killed(bout: tuple[Path, int]) -> None:
    hog = record(bout, "hog")
    assert hog["status"] == "agent-error"
    assert hog["error"].startswith("memory limit exceeded (")
    # a decimal shows when the hog was killed within 0.5 MB of the limit: 300.4 > 300.0
    assert re.search(r"> 300(\.0)? MB limit; setting limits\.memory\)$", hog["error"]), hog
    assert hog["wall_time"] < 30
    assert _marked_processes() == []


def test_many_files_are_an_agent_error_found_quickly(bout: tuple[Path, int]) -> None:
    files = record(bout, "manyfiles")
    assert files["status"] == "agent-error"
    assert files["error"].startswith("too many files (")
    assert files["error"].endswith("> 1,000 limit; setting limits.files)")
    assert files["wall_time"] < 30
    assert stored_size(bout, "manyfiles") < 20_000


def test_growth_the_patch_does_not_show_is_limited(bout: tuple[Path, int]) -> None:
    hoard = record(bout, "hoard")
    assert hoard["status"] == "agent-error"
    assert hoard["error"].startswith("disk limit exceeded (")
    assert hoard["error"].endswith(" limit; setting limits.disk)")


def _marked_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if MARK.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
