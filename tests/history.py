"""The synthetic repository the mining and ground-truth tests replay.

Each commit is one scenario the rules must get exactly right; ``EXPECTED`` records
what mining must find.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    TasksSettings,
)
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.records import OracleSet
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder

OPS = """\
def add(a, b):
    return a + b


def sub(a, b):
    return a + b


def div(a, b):
    return a / b
"""

CLAMP = """\
def clamp(value, low, high):
    return max(low, value)
"""

TEST_OPS = """\
from calc.ops import add, sub


def test_add():
    assert add(1, 2) == 3


def test_sub():
    assert sub(2, 1) == 3
"""

TEST_CLAMP = """\
import pytest

from calc.clamp import clamp


@pytest.mark.parametrize("value, expected", [(5, 5), (-1, 0)])
def test_clamp(value, expected):
    assert clamp(value, 0, 10) == expected
"""


def build(path: Path) -> dict[str, str]:
    """Build the repository; returns the sha of each scenario's commit by name."""
    repo = RepositoryBuilder(path)
    sha: dict[str, str] = {}
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "src/calc/clamp.py": CLAMP,
            "src/calc/fmt.py": "def fmt(x):\n    return str(x)\n",
            "src/calc/absval.py": "def absval(x):\n    return x\n",
            "tests/test_ops.py": TEST_OPS,
            "tests/test_clamp.py": TEST_CLAMP,
        },
    )
    sha["clean"] = repo.commit(
        "Fix crash when dividing by zero (#1)",
        {
            "src/calc/ops.py": OPS.replace(
                "    return a / b",
                "    if b == 0:\n        raise ValueError('division by zero')\n    return a / b",
            ),
            "tests/test_div.py": (
                "import pytest\n\nfrom calc.ops import div\n\n\n"
                "def test_div():\n    assert div(4, 2) == 2\n\n\n"
                "def test_div_by_zero():\n    with pytest.raises(ValueError):\n"
                "        div(1, 0)\n"
            ),
        },
    )
    sha["already_passing"] = repo.commit(
        "Fix the docstring of fmt (#2)",
        {  # a change to the code, as a docstring alone would not be mined
            "src/calc/fmt.py": 'def fmt(x):\n    """Format x."""\n    return "%s" % (x,)\n',
            "tests/test_fmt.py": "from calc.fmt import fmt\n\n\ndef test_fmt():\n"
            "    assert fmt(1) == '1'\n",
        },
    )
    sha["three_files"] = repo.commit(
        "Fix rounding everywhere (#3)",
        {
            "src/calc/ops.py": OPS.replace("def add", "# rounding\ndef add"),
            "src/calc/clamp.py": CLAMP + "# rounding\n",
            "src/calc/fmt.py": 'def fmt(x):\n    """Format x."""\n    return str(round(x, 6))\n',
            "tests/test_round.py": "def test_round():\n    assert round(1.5) == 2\n",
        },
    )
    sha["no_issue"] = repo.commit(
        "Fix fmt of None",
        {
            "src/calc/fmt.py": 'def fmt(x):\n    """Format x."""\n    return str(round(x, 6))\n'
            "NONE = None\n",
            "tests/test_fmt_none.py": "def test_none():\n    assert True\n",
        },
    )
    sha["not_a_fix"] = repo.commit(
        "Add mul (#4)",
        {
            "src/calc/mul.py": "def mul(a, b):\n    return a * b\n",
            "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n"
            "    assert mul(2, 3) == 6\n",
        },
    )
    repo.branch("feature")
    repo.commit(
        "Handle negative numbers",
        {
            "src/calc/absval.py": "def absval(x):\n    return -x if x < 0 else x\n",
            "tests/test_absval.py": "from calc.absval import absval\n\n\n"
            "def test_negative():\n    assert absval(-2) == 2\n",
        },
    )
    repo.switch("main")
    sha["merge"] = repo.merge(
        "feature",
        "Merge pull request #6 from dev/feature\n\nabsval() was wrong for negative numbers",
    )
    sha["duplicate_old"] = repo.commit(
        "Fix overflow in add (#7)",
        {
            "src/calc/ops.py": OPS.replace("def add", "# rounding\n# overflow\ndef add").replace(
                "    return a / b",
                "    if b == 0:\n        raise ValueError('division by zero')\n    return a / b",
            ),
            "tests/test_overflow.py": "def test_overflow():\n    assert 2**64 > 0\n",
        },
    )
    sha["duplicate_new"] = repo.commit(
        "Fix overflow in add for real\n\nFixes #7",
        {
            "src/calc/ops.py": OPS.replace(
                "def add", "# rounding\nOVERFLOW = 2\n\n\ndef add"
            ).replace(
                "    return a / b",
                "    if b == 0:\n        raise ValueError('division by zero')\n    return a / b",
            ),
            "tests/test_overflow.py": "def test_overflow():\n    assert 2**64 > 0\n\n\n"
            "def test_overflow_again():\n    assert 2**65 > 0\n",
        },
    )
    ops_fixed = OPS.replace("def add", "# rounding\nOVERFLOW = 2\n\n\ndef add").replace(
        "    return a / b",
        "    if b == 0:\n        raise ValueError('division by zero')\n    return a / b",
    )
    sha["modified_module"] = repo.commit(
        "Fix sub returning the sum (gh-9)",
        {
            "src/calc/ops.py": ops_fixed.replace(
                "def sub(a, b):\n    return a + b", "def sub(a, b):\n    return a - b"
            ),
            "tests/test_ops.py": TEST_OPS.replace("assert sub(2, 1) == 3", "assert sub(2, 1) == 1")
            + "\n\ndef test_sub_negative():\n    assert sub(1, 2) == -1\n",
        },
    )
    sha["parametrize"] = repo.commit(
        "Fix clamp below zero: https://github.com/calc/calc/issues/10",
        {
            "src/calc/clamp.py": "def clamp(value, low, high):\n"
            "    if value > high:\n        return high\n    return max(low, value)\n",
            "tests/test_clamp.py": TEST_CLAMP.replace("(-1, 0)]", "(-1, 0), (11, 10)]"),
        },
    )
    sha["unstable"] = repo.commit(
        "Fix a regression in fmt (#11)",
        {
            "src/calc/fmt.py": 'def fmt(x):\n    """Format x."""\n    return "%g" % x\n',
            "tests/test_fmt_random.py": (
                "import random\n\nimport pytest\n\nfrom calc.fmt import fmt\n\n\n"
                "def test_fmt_float():\n    assert fmt(1.0) == '1'\n\n\n"
                "@pytest.mark.parametrize('x', [random.random()])\n"
                "def test_fmt_any(x):\n    assert fmt(x)\n"
            ),
        },
    )
    repo.commit("Update the README", {"README.md": "# calc\n"})
    return sha


EXPECTED_EXCLUDED = {
    "root-commit": 1,
    "no-source-change": 1,  # "Update the README"
    "too-many-source-files": 1,
    "duplicate-issue": 1,
}
EXPECTED_ORDER = [
    "unstable", "parametrize", "modified_module", "duplicate_new", "merge",
    "not_a_fix", "no_issue", "already_passing", "clean",
]  # fmt: skip


def calc_settings(
    root: Path, miner: dict[str, object] | None = None, **tasks: object
) -> BoutSettings:
    """Settings for the synthetic history, with tests run by the current interpreter
    (``miner``: the ``git-history`` miner's options)."""
    return BoutSettings(
        project=ProjectSettings(source="src/calc", tests="tests"),
        issue_sources={"commit": {"issue-source": "commit"}},
        miner=PluginChoice(name="git-history", **(miner or {})),
        tasks=TasksSettings(**tasks),  # type: ignore[arg-type]
        environment=PluginChoice(name="interpreter"),
        root=root,
    )


def offline_ground_truth(root: Path, source: str) -> OracleSet:
    """The repository at ``root`` mined (issues named in its commit messages) and its
    ground truth computed in uv environments that download no Python."""
    settings = BoutSettings(
        project=ProjectSettings(source=source, tests="tests"),
        issue_sources={"commit": {"issue-source": "commit"}},
        environment=PluginChoice(name="uv", **{"python-downloads": "never"}),
        root=root,
    )
    return ground_truth(settings)


def ground_truth(settings: BoutSettings) -> OracleSet:
    """The repository of ``settings`` mined and its ground truth computed, in a store
    beside it, with the built-in plugins only."""
    plugins = make_plugins(entry_points=False)
    store = Store(settings.store_dir)
    return compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store))


def dated_commit(repo: RepositoryBuilder, message: str, files: dict[str, str], day: str) -> str:
    """A commit of ``files`` made on ``day`` (ISO 8601) by a maintainer; its sha."""
    repo.write(files)
    repo.git("add", "--all")
    identity = {"GIT_AUTHOR_DATE": day, "GIT_COMMITTER_DATE": day}
    for role in ("AUTHOR", "COMMITTER"):
        identity |= {f"GIT_{role}_NAME": "Maintainer", f"GIT_{role}_EMAIL": "m@example.invalid"}
    subprocess.run(
        ["git", "-C", str(repo.path), "commit", "--quiet", "-m", message],
        env={**os.environ, **identity},
        check=True,
    )
    return repo.head()
