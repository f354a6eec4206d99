"""Attack: a contributor names a test module so that line-based git reading goes out of
step, to drop real fixes and pass a planted test off as another fix's.

The hostile fix's module name holds a line laid out like ``cat-file``'s answer and a line
that is the id of a planted blob (a test that always passes, stored in the repository but
in no commit). Mining and ground truth run for real (real git, real pytest) and must see
each fix with exactly its own test: the planted test appears in no stored record, the
older fix is not dropped, and the fix that added no test is not made a task.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    TasksSettings,
)
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import ORACLES, TASKS, Store
from bugbout.testing import RepositoryBuilder

PLANTED = b"def test_planted():\n    assert True\n"


def _hostile_history(path: Path) -> tuple[dict[str, str], str]:
    """The repository: a real older fix, a fix that adds no test, the hostile fix."""
    repo = RepositoryBuilder(path)
    planted = (
        subprocess.run(
            ["git", "-C", str(path), "hash-object", "-w", "--stdin"],
            input=PLANTED,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    hostile = f"tests/test_hostile\n{planted} blob {len(PLANTED)}\n{planted}\n{planted}\n.py"
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def one():\n    return 0\n\n\ndef two():\n    return 0\n",
            "tests/test_ops.py": "def test_nothing():\n    pass\n",
        },
    )
    sha = {
        "victim": repo.commit(
            "Fix one returning 0 (#1)",
            {
                "src/calc/ops.py": "def one():\n    return 1\n\n\ndef two():\n    return 0\n",
                "tests/test_one.py": "from calc.ops import one\n\n\ndef test_one():\n"
                "    assert one() == 1\n",
            },
        ),
        "untested": repo.commit(
            "Fix two returning 0 (#2)",
            {
                "src/calc/ops.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
                "tests/test_ops.py": "def test_nothing():\n    pass  # touched, no new test\n",
            },
        ),
        "hostile": repo.commit(
            "Fix three missing (#3)",
            {
                "src/calc/ops.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n"
                "\n\ndef three():\n    return 3\n",
                hostile: "from calc.ops import three\n\n\ndef test_three():\n"
                "    assert three() == 3\n",
            },
        ),
    }
    return sha, hostile


@pytest.mark.slow
def test_a_name_that_mimics_cat_file_output_changes_no_task(tmp_path: Path) -> None:
    sha, hostile = _hostile_history(tmp_path / "repo")
    settings = BoutSettings(
        project=ProjectSettings(source="src/calc", tests="tests"),
        issue_sources={"commit": {"issue-source": "commit"}},
        tasks=TasksSettings(reruns=1),
        environment=PluginChoice(name="interpreter"),
        root=tmp_path / "repo",
    )
    plugins = make_plugins(entry_points=False)
    store = Store(tmp_path / ".bugbout")
    tasks = mine_tasks(settings, plugins, store)
    assert [(t.sha, t.added_tests) for t in tasks.tasks] == [
        (sha["hostile"], [f"{hostile}::test_three"]),
        (sha["victim"], ["tests/test_one.py::test_one"]),
    ]
    assert tasks.excluded == {"no-test-added": 1, "root-commit": 1}
    oracles = compute_oracles(settings, plugins, store, tasks)
    assert {task_id: oracle.fail_to_pass for task_id, oracle in oracles.root.items()} == {
        sha["hostile"][:12]: [f"{hostile}::test_three"],
        sha["victim"][:12]: ["tests/test_one.py::test_one"],
    }
    for name in (TASKS, ORACLES):
        assert "planted" not in store.path(name).read_text(encoding="utf-8")
    assert store.read(TASKS, TaskSet) == tasks
    assert store.read(ORACLES, OracleSet) == oracles
