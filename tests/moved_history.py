"""Synthetic histories whose package is not simply where it is today.

``build_moved``: the package ``calc/`` moves to ``src/calc/`` between two fixes, and later
one module of another package (``scratch/``, which stays) moves into it. ``build_two``:
two packages, the one named like the project a thin shim the history hardly touches.
"""

from __future__ import annotations

from pathlib import Path

from bugbout.testing import RepositoryBuilder

OPS = "def add(a, b):\n    return a + abs(b)\n"
FMT = "def fmt(x):\n    return str(x)\n"
TEST_OPS = "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def build_moved(path: Path) -> dict[str, str]:
    """The moved package's history; returns the sha of each fix by name (``before``, the
    fix made at ``calc/``; ``after``, the one made at ``src/calc/``)."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "calc/__init__.py": "",
            "calc/ops.py": OPS,
            "calc/fmt.py": FMT,
            "scratch/__init__.py": "",
            "scratch/notes.py": "NOTES = []\n",
            "scratch/extra.py": "def double(x):\n    return 2 * x\n",
            "scratch/more.py": "MORE = {}\n",
            "tests/test_ops.py": TEST_OPS,
        },
    )
    sha = {
        "before": repo.commit(
            "Fix wrong sums of negative numbers (#1)",
            {
                "calc/ops.py": OPS.replace("abs(b)", "b"),
                "tests/test_negative.py": (
                    "from calc.ops import add\n\n\n"
                    "def test_negative():\n    assert add(1, -2) == -1\n"
                ),
            },
        )
    }
    (path / "src").mkdir()
    repo.git("mv", "calc", "src/calc")
    repo.commit("Move the package under src/ (#2)")
    repo.git("mv", "scratch/extra.py", "src/calc/extra.py")
    repo.commit("Adopt the doubling helper (#3)")
    sha["after"] = repo.commit(
        "Fix crash formatting None (#4)",
        {
            "src/calc/fmt.py": "def fmt(x):\n    return '' if x is None else str(x)\n",
            "tests/test_fmt.py": (
                "from calc.fmt import fmt\n\n\ndef test_none():\n    assert fmt(None) == ''\n"
            ),
        },
    )
    return sha


def build_two(path: Path) -> None:
    """``src/attr`` holds the code and its fixes; ``src/attrs``, named like the project,
    re-exports it."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "attrs"\n',
            "src/attr/__init__.py": "from attr.make import make\n",
            "src/attr/make.py": "def make(x):\n    return x\n",
            "src/attrs/__init__.py": "from attr import make\n",
            "tests/test_make.py": (
                "from attr import make\n\n\ndef test_make():\n    assert make(1)\n"
            ),
        },
    )
    for number in range(1, 4):
        repo.commit(
            f"Fix error number {number} (#{number})",
            {
                "src/attr/make.py": f"def make(x):\n    return x  # {number}\n",
                f"tests/test_fix{number}.py": f"def test_fix{number}():\n    assert True\n",
            },
        )
