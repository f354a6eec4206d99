"""What an agent leaves in its working copy is the agent's doing, performed for real:
``command`` contestants in a whole bout (real git, real bubblewrap, real pytest) leave a
file whose name is not valid UTF-8 beside a real fix, and 6,000 nested directories. The
first keeps its fix, the name stored escaped; the second is an ``agent-error`` that says
why. An examiner's folder named ``.Git`` is left out of its patch, as git would, and its
reproduction validated. None is an ``infra-error``, so ``--retry-failed`` never pays for
them again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout.core.store.race_records import Attempt, AttemptStatus, ChangeArea
from bugbout.core.store.store import Store
from deep_trees import remove_tree
from one_bug import FIXED, attempts, one_bug_repository, write_agent

pytestmark = pytest.mark.slow

DEPTH = 6000
AGENTS = {
    # the real fix, and a file named with a byte that is not UTF-8 in each area
    "oddname": f"""
        import os
        from pathlib import Path
        Path("src/mid/core.py").write_text({FIXED!r})
        for name in (b"src/mid/data-\\xff.txt", b"notes-\\xfe\\\\x41.txt"):
            with open(name, "wb") as out:
                out.write(b"written by the agent\\n")
        print("Fixed middle() for even-length input.")
    """,
    # the real fix, and a chain of nested directories far deeper than a path may be long
    "deep": f"""
        import os
        from pathlib import Path
        Path("src/mid/core.py").write_text({FIXED!r})
        os.mkdir("deep")
        fd = os.open("deep", os.O_RDONLY)
        for _ in range({DEPTH}):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("at the bottom\\n")
        print("Fixed middle() for even-length input.")
    """,
}


REPRODUCTION = (
    "from mid.core import middle\\n\\n\\n"
    "def test_even_length():\\n    assert middle([1, 2, 3, 4]) == 2.5\\n"
)
EXAMINERS = {
    # a reproduction, and a file in a folder git would take for its own
    "dotgit": f"""
        from pathlib import Path
        Path("tests/test_even.py").write_text("{REPRODUCTION}")
        Path("tests/.Git").mkdir()
        Path("tests/.Git/notes").write_text("written by the agent\\n")
    """,
}


def bugbout(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter", *args],
        cwd=repo, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A whole bout of both agents; the repository. The deep chain is taken down after."""
    home = Path(os.environ.get("BUGBOUT_HOME", Path.home() / ".cache" / "bugbout"))
    root = tmp_path_factory.mktemp("tree")
    repo = one_bug_repository(root / "repo").path
    agents = root / "agents"
    agents.mkdir()
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 60},
        "contestants": {
            name: {
                "agent": "command",
                "command": [sys.executable, str(write_agent(agents, name, source))],
            }
            for name, source in AGENTS.items()
        },
        "examiners": {
            name: {
                "agent": "command",
                "command": [sys.executable, str(write_agent(agents, name, source))],
                "assignment": "reproduce",
            }
            for name, source in EXAMINERS.items()
        },
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout(repo)
    try:
        assert result.returncode == 0, result.stderr
        yield repo
    finally:
        for chain in home.glob("attempts/*/deep-*/*/deep"):
            remove_tree(chain)


def test_a_name_that_is_not_text_keeps_the_fix(bout: Path) -> None:
    store = Store(bout / ".bugbout")
    (path,) = store.root.glob("attempts/*/oddname/*.json")
    record = store.read(str(path.relative_to(store.root)), Attempt)
    assert record is not None
    assert record.status == AttemptStatus.FINISHED, record.error
    assert {change.path: change.area for change in record.patch.files} == {
        os.fsdecode(b"notes-\xfe\\x41.txt"): ChangeArea.OTHER,
        "src/mid/core.py": ChangeArea.SOURCE,
        os.fsdecode(b"src/mid/data-\xff.txt"): ChangeArea.SOURCE,
    }
    assert '"b/src/mid/data-\\377.txt"' in record.patch.source
    assert r"data-\\xff.txt" in path.read_text(encoding="utf-8")  # escaped, as mining does
    (task,) = json.loads((bout / ".bugbout" / "resolutions.json").read_text()).values()
    assert task["patches"]["oddname"]["score"] == "resolved"


def test_a_tree_too_deep_to_record_is_the_agents_error(bout: Path) -> None:
    record = attempts(bout)["deep"]
    assert record["status"] == "agent-error"
    assert "deep/d/d/" in record["error"] and "too long" in record["error"], record["error"]
    assert record["patch"]["files"] == []


def test_a_folder_git_would_take_for_its_own_is_left_out(bout: Path) -> None:
    record = attempts(bout)["dotgit"]
    assert record["status"] == "finished", record["error"]
    assert [change["path"] for change in record["patch"]["files"]] == ["tests/test_even.py"]
    assert record["examination"]["reproductions"] == ["tests/test_even.py::test_even_length"]


def test_retrying_failures_runs_neither_again(bout: Path) -> None:
    before = attempts(bout)
    again = bugbout(bout, "--retry-failed")
    assert again.returncode == 0, again.stderr
    assert "no new attempts" in again.stdout
    assert attempts(bout) == before
