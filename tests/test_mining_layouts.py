"""The git-history miner on layouts other than a package and a tests folder, on real
histories: a package that began as one module at the root (its fixes then are fixes of
the same source), and tests kept in a single module at the root (``test.py``)."""

from __future__ import annotations

from pathlib import Path

from bugbout.config import compose_settings
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.pipeline import mine_tasks
from bugbout.core.store.store import Store
from bugbout.onboarding.doctor.machine import repository_checks
from bugbout.onboarding.init import write_config
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.testing import RepositoryBuilder

SCALE = "def double(x):\n    return x + 1\n"
FIXED = "def double(x):\n    return x + x\n"


HEADER = "from scale import double\n"


def _test(name: str) -> str:
    return f"\n\ndef test_{name}():\n    assert double(3) == 6\n"


def _mine(repo: Path, tests: str = "tests") -> tuple[list[str], dict[str, int]]:
    request = MiningRequest(repository=repo, project=ProjectSettings(source="scale", tests=tests))
    found = GitHistoryMiner(GitHistoryOptions(limit=None)).mine(request)
    assert found.examined == len(found.tasks) + sum(found.excluded.values())
    return [task.sha for task in found.tasks], found.excluded


def test_a_package_that_began_as_a_module_at_the_root(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    tests = HEADER + _test("one")
    repo.commit("Initial commit", {"scale.py": SCALE, "test_scale.py": tests})
    tests += _test("two")
    module_fix = repo.commit("Fix doubling (#1)", {"scale.py": FIXED, "test_scale.py": tests})
    repo.commit("Make scale a package", {"scale/__init__.py": FIXED}, remove=["scale.py"])
    tests += _test("three")
    package_fix = repo.commit(
        "Fix doubling of strings (#2)",
        {"scale/__init__.py": FIXED.replace("x + x", "2 * x"), "test_scale.py": tests},
    )
    tasks, excluded = _mine(repo.path)
    assert tasks == [package_fix, module_fix]
    assert excluded == {"no-test-added": 1, "root-commit": 1}


def test_tests_in_a_single_module_at_the_root(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    tests = "import unittest\n\nfrom scale import double\n\n\nclass TestScale(unittest.TestCase):\n"
    one = "    def test_one(self):\n        self.assertEqual(double(3), 6)\n"
    two = "\n    def test_two(self):\n        self.assertEqual(double(0), 0)\n"
    repo.commit("Initial commit", {"scale/__init__.py": SCALE, "test.py": tests + one})
    fix = repo.commit(
        "Fix doubling (#3)", {"scale/__init__.py": FIXED, "test.py": tests + one + two}
    )
    tasks, excluded = _mine(repo.path)
    assert tasks == [fix]
    assert excluded == {"root-commit": 1}
    request = MiningRequest(repository=repo.path, project=ProjectSettings(source="scale"))
    (task,) = GitHistoryMiner(GitHistoryOptions(limit=None)).mine(request).tasks
    assert task.test_files == ["test.py"]
    assert task.added_tests == ["test.py::TestScale::test_two"]


def test_init_then_mining_on_a_module_and_its_test_module_at_the_root(tmp_path: Path) -> None:
    """``bugbout init`` on a project of one module and one ``test.py``, both at the root:
    the module is the source, ``test.py`` the tests, and the fix is mined from them."""
    repo = RepositoryBuilder(tmp_path / "repo")
    files = {"setup.py": "", "scale.py": SCALE, "test.py": HEADER + _test("one")}
    repo.commit("Initial commit", files)
    fix = repo.commit(
        "Fix doubling (#4)", {"scale.py": FIXED, "test.py": HEADER + _test("one") + _test("two")}
    )
    write_config(repo.path, make_plugins(entry_points=False), None, None, force=False)
    settings, plugins = compose_settings(repo.path)
    assert settings.project.source == ("scale",) and settings.project.tests == "test.py"
    assert {check.name: check.ok for check in repository_checks(settings)} == {
        "repository": True, "project.source": True, "project.tests": True,
    }  # fmt: skip
    found = mine_tasks(settings, plugins, Store(repo.path / ".bugbout"))
    assert [(task.sha, task.source_files, task.test_files) for task in found.tasks] == [
        (fix, ["scale.py"], ["test.py"])
    ]
