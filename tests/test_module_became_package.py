"""A project whose package was one module at the root until it moved into a package
(itsdangerous: ``itsdangerous.py`` → ``src/itsdangerous/__init__.py`` in 2018): ``init``
follows the module too, and mining finds the fixes made to it. Real git."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.mine.package_history import trace_packages
from bugbout.core.plumbing.trees.git import Git
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.testing import RepositoryBuilder
from test_package_history import init

MODULE = "def signed(value):\n    return value + {suffix!r}\n"
TEST = "from calc import signed\n\n\ndef test_signed():\n    assert signed('a') == 'a.sig'\n"


def _history(path: Path) -> dict[str, str]:
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial",
        {
            "setup.py": "from setuptools import setup\nsetup(name='calc', py_modules=['calc'])\n",
            "calc.py": MODULE.format(suffix="sig"),
        },
    )
    fix = repo.commit(
        "Fix the separator of signed values (#1)",
        {"calc.py": MODULE.format(suffix=".sig"), "tests.py": TEST},
    )
    repo.commit(
        "move to src directory",
        {"src/calc/__init__.py": MODULE.format(suffix=".sig"), "tests/test_calc.py": TEST},
        remove=["calc.py", "tests.py"],
    )
    repo.commit("Split the package", {"src/calc/util.py": "SEPARATOR = '.'\n"})
    return {"fix": fix}


@pytest.mark.slow
def test_a_module_that_became_the_package_is_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    sha = _history(repo)
    with Git(repo) as git:
        (calc,) = trace_packages(git, "HEAD", ["src/calc"])
    assert calc.past == ["calc"]
    assert calc.commits == 4  # the module's two commits, the move and the split
    project = init(repo)
    assert project["source"] == ["src/calc", "calc"]
    request = MiningRequest(
        repository=repo, project=ProjectSettings.model_validate({"source": project["source"]})
    )
    mined = GitHistoryMiner(GitHistoryOptions()).mine(request).tasks
    assert [(task.sha, task.source_files) for task in mined] == [(sha["fix"], ["calc.py"])]
