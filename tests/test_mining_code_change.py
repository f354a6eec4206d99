"""A change whose source edits are only docstrings, comments or layout cannot make a test
fail before it: the git-history miner leaves it out (``no-code-change``), on a real
history; a rename or any change to the code keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest, code_changed
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.testing import RepositoryBuilder

SCALE = '''\
"""Scaling numbers."""


def double(x):
    """Twice ``x``."""
    return x + x


class Ruler:
    def half(self, x):
        return x / 2
'''
DOCUMENTED = '''\
"""Scaling numbers, documented at length."""


def double(x):
    """Twice ``x``: ``x + x``.

    Works for any number.
    """
    # adding is cheaper than multiplying
    return (
        x + x
    )


class Ruler:
    """A ruler."""

    def half(self, x):
        """Half of ``x``."""
        return x / 2
'''
TESTS = "from calc.scale import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def _test(name: str) -> str:
    return f"\n\ndef test_{name}():\n    assert double(3) == 6\n"


def test_docstrings_comments_and_layout_are_not_code() -> None:
    assert not code_changed(SCALE.encode(), DOCUMENTED.encode())
    assert code_changed(SCALE.encode(), SCALE.replace("x + x", "2 * x").encode())
    assert code_changed(SCALE.encode(), SCALE.replace("x / 2", "x // 2").encode())
    requoted = SCALE.replace('"""Twice ``x``."""', "'Twice.'  # still a docstring")
    assert not code_changed(SCALE.encode(), requoted.encode())
    # a string that is not the first statement is code
    assert code_changed(
        SCALE.encode(), SCALE.replace("return x + x", "'x'\n    return x + x").encode()
    )
    assert code_changed(b"print 'py2'\n", b"print 'py2 again'\n")  # cannot tell: changed
    assert code_changed(None, SCALE.encode()) and not code_changed(None, None)


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = RepositoryBuilder(tmp_path / "repo")
    sha: dict[str, str] = {}
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/scale.py": SCALE,
            "tests/test_scale.py": TESTS,
        },
    )
    tests = TESTS + _test("docs")
    sha["docs"] = repo.commit(  # a feature's docs, and tests that pass before it too
        "Document scaling", {"src/calc/scale.py": DOCUMENTED, "tests/test_scale.py": tests}
    )
    tests += _test("fix")
    sha["fix"] = repo.commit(  # the docs change, and so does the code
        "Fix doubling",
        {
            "src/calc/scale.py": DOCUMENTED.replace("x + x\n    )", "2 * x\n    )"),
            "tests/test_scale.py": tests,
        },
    )
    repo.git("mv", "src/calc/scale.py", "src/calc/scaling.py")
    tests = tests.replace("calc.scale", "calc.scaling") + _test("moved")
    sha["moved"] = repo.commit("Rename the scale module", {"tests/test_scale.py": tests})
    return repo.path, sha


def test_a_change_to_docs_alone_is_left_out(history: tuple[Path, dict[str, str]]) -> None:
    repo, sha = history
    request = MiningRequest(repository=repo, project=ProjectSettings(source="src/calc"))
    found = GitHistoryMiner(GitHistoryOptions(limit=None)).mine(request)
    assert [task.sha for task in found.tasks] == [sha["moved"], sha["fix"]]
    assert found.excluded == {"no-code-change": 1, "root-commit": 1}
    assert found.examined == len(found.tasks) + sum(found.excluded.values())
