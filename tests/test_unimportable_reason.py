"""A package whose own module is written by its build (vcversioner's, setuptools-scm's
version module, not in git) cannot be imported from its tree: the reason says so, not
that the project's test setup defeats the canaries. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

INIT = "from calc._version import __version__\n\n\ndef double(x):\n    return x {op} 2\n"
TEST = "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6\n"


@pytest.mark.parametrize(
    ("tests", "run"),
    [
        ("tests", "after-1 run could not collect any test (tests/test_calc.py: "),
        ("src/calc/tests", "before-1 run could not import the code under test: "),
    ],
)
@pytest.mark.slow
def test_a_module_the_build_writes_is_named_as_the_cause(
    tests: str, run: str, tmp_path: Path
) -> None:
    """Tests outside the package fail to collect after the fix; tests inside it (as
    jsonschema kept them) leave the canaries planted beside them uncollectable too."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            ".gitignore": "src/calc/_version.py\n",
            "src/calc/__init__.py": INIT.format(op="+"),
        },
    )
    test = {f"{tests}/__init__.py": "", f"{tests}/test_calc.py": TEST}
    fix = repo.commit("Fix double (#1)", {"src/calc/__init__.py": INIT.format(op="*"), **test})
    calc = calc_settings(repo.path)
    settings = calc.model_copy(update={"project": calc.project.model_copy(update={"tests": tests})})
    oracle = ground_truth(settings).root[fix[:12]]
    assert oracle.status == "environment-error"
    error = "ModuleNotFoundError: No module named 'calc._version' (src/calc/__init__.py:1)"
    assert oracle.reason == (
        f"the {run.replace('tests/', f'{tests}/')}{error}{')' if 'collect' in run else ''}, a "
        "module of the project that git does not hold: its build writes it, and its setup.py, "
        "setup.cfg or pyproject.toml does not name it as vcversioner's or setuptools-scm's "
        "version module, which bugbout writes"
    )
