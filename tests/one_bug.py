"""The one-bug repository (``middle()`` of even-length lists) the race, hook and gate tests
play on; the race's scripted agents, running bugbout on it and reading the attempts."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

from bugbout.testing import RepositoryBuilder

BUGGY = "def middle(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n"
FIXED = (
    "def middle(values):\n    ordered = sorted(values)\n    half = len(ordered) // 2\n"
    "    if len(ordered) % 2 == 0:\n        return (ordered[half - 1] + ordered[half]) / 2\n"
    "    return ordered[half]\n"
)
TESTS = "from mid.core import middle\n\n\ndef test_odd():\n    assert middle([3, 1, 2]) == 2\n"
FIX_TEST = TESTS + "\n\ndef test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n"

AGENTS = {
    "good": f"""
        from pathlib import Path
        Path("src/mid/core.py").write_text({FIXED!r})
        Path("tests/test_regression.py").write_text(
            "from mid.core import middle\\n\\n"
            "def test_even():\\n    assert middle([1, 2]) == 1.5\\n")
        print("Fixed middle() for even-length input.")
    """,
    "empty": """
        print("I looked around and changed nothing.")
    """,
    "broken": """
        import sys
        print("something went wrong", file=sys.stderr)
        sys.exit(3)
    """,
    "sleepy": """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        time.sleep(600)
    """,
    "limited": """
        import sys
        print("Error: You've hit your usage limit. Try again later.", file=sys.stderr)
        sys.exit(1)
    """,
}


FIX_ONLY = f"""
    from pathlib import Path
    Path("src/mid/core.py").write_text({FIXED!r})
    print("Fixed middle() for even-length input.")
"""
"""An honest contestant: the maintainers' fix, and no test."""
REPRODUCER = """
    from pathlib import Path
    Path("tests/test_even.py").write_text(
        "from mid.core import middle\\n\\n\\n"
        "def test_even_length():\\n    assert middle([1, 2, 3, 4]) == 2.5\\n")
"""
"""An examiner's reproduction of the bug."""


def write_agent(directory: Path, name: str, source: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def one_bug_repository(path: Path) -> RepositoryBuilder:
    """A repository with one bug, ``middle()`` of even-length lists, fixed with a test (#1)."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "mid"\nrequires-python = ">=3.9"\n',
            "src/mid/__init__.py": "",
            "src/mid/core.py": BUGGY,
            "tests/test_core.py": TESTS,
        },
    )
    repo.commit(
        "Fix middle of even-length lists (#1)",
        {"src/mid/core.py": FIXED, "tests/test_core.py": FIX_TEST},
    )
    return repo


def bugbout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args, "environment=interpreter"],
        cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def attempts(repo: Path) -> dict[str, dict]:
    folder = repo / ".bugbout" / "attempts"
    (task,) = list(folder.iterdir())
    return {
        path.parent.name: json.loads(path.read_text())
        for path in task.glob("*/*.json")
        if ".round" not in path.name
    }


def command_bout(
    root: Path, contestants: Mapping[str, str], examiners: Mapping[str, tuple[str, str]] = {}
) -> Path:
    """A one-bug repository in ``root`` raced by Python scripts as ``command`` agents
    (contestants by name; examiners by name, with their assignment), run whole by
    ``bugbout run``; the repository."""
    repo = one_bug_repository(root / "repo").path
    agents = root / "agents"
    agents.mkdir()

    def command(name: str, source: str) -> dict[str, object]:
        return {
            "agent": "command",
            "command": [sys.executable, str(write_agent(agents, name, source))],
        }

    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 30},
        "contestants": {name: command(name, source) for name, source in contestants.items()},
        "examiners": {
            name: {**command(name, source), "assignment": assignment}
            for name, (source, assignment) in examiners.items()
        },
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter"],
        cwd=repo, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return repo
