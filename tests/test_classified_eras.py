"""The era rule reads the Python versions a project's trove classifiers named at the fix:
a fix whose project declared up to 3.6 in 2019 is tested on 3.6, and one whose project
declared Python 2 alone, or up to 3.4, gets the oldest Python here and a reason that says
what it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.environments.interpreters import available_interpreters, era_python
from bugbout.core.plumbing.project.project_metadata import declared_classifiers
from bugbout.plugins.environments.uv import UvBuilder, UvOptions

LOCAL = ["3.6", "3.7", "3.8", "3.9"]
SETUP_PY = """\
from setuptools import setup

CLASSIFIERS = [
    "Programming Language :: Python",
    "Programming Language :: Python :: 2",
    "Programming Language :: Python :: 2.7",
{more}]
setup(name="calc", classifiers=CLASSIFIERS)
"""


@pytest.mark.parametrize(
    ("classified", "date", "era"),
    [
        ((), "2019-03-01", "3.7"),  # none named: the newest maintained
        (("2", "2.7", "3", "3.5", "3.6"), "2019-03-01", "3.6"),  # up to 3.6 then
        (("3", "3.3", "3.4"), "2016-05-01", "3.6"),  # none here: the oldest
        (("2", "2.7"), "2019-03-01", "3.6"),  # Python 2 alone: the oldest
        (("3.6",), "2022-06-01", "3.9"),  # 3.6 was gone then: forgotten classifiers
        (("3",), "2019-03-01", "3.7"),  # no minor version: no bound
    ],
)
def test_the_classifiers_bound_the_era(classified: tuple[str, ...], date: str, era: str) -> None:
    assert era_python(None, date, LOCAL, None, classified) == era


def test_classifiers_are_read_from_setup_py_and_setup_cfg(tmp_path: Path) -> None:
    more = (
        '    "Programming Language :: Python :: 3",\n    "Programming Language :: Python :: 3.4",\n'
    )
    (tmp_path / "setup.py").write_text(SETUP_PY.format(more=more))
    assert declared_classifiers(tmp_path) == ["2", "2.7", "3", "3.4"]
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.6\n"
    )
    assert declared_classifiers(tmp_path) == ["3.6"]


@pytest.mark.parametrize(
    ("more", "lacks"),
    [
        ("", "the project declared Python 2 alone at this fix (its classifiers), tested on 3.6"),
        (
            '    "Programming Language :: Python :: 3.4",\n',
            "the project declared Python up to 3.4 at this fix (its classifiers), tested on 3.6",
        ),
    ],
)
def test_an_era_older_than_every_python_here_says_what_it_lacks(
    more: str, lacks: str, tmp_path: Path
) -> None:
    if "3.6" not in available_interpreters():
        pytest.fail("no Python 3.6 on this machine: `pyenv install 3.6`")
    (tmp_path / "setup.py").write_text(SETUP_PY.format(more=more))
    pythons = UvBuilder(UvOptions(python_downloads="never")).pythons(tmp_path)
    chosen = pythons.interpreter(None, "2016-05-01", None, tuple(declared_classifiers(tmp_path)))
    assert chosen.path == available_interpreters()["3.6"].resolve()
    assert chosen.lacks == f"{lacks}: bugbout runs tests on Python 3.6 and later"


def test_a_2019_fix_of_a_project_up_to_36_is_tested_on_36(tmp_path: Path) -> None:
    if "3.6" not in available_interpreters():
        pytest.fail("no Python 3.6 on this machine: `pyenv install 3.6`")
    more = '    "Programming Language :: Python :: 3.6",\n'
    (tmp_path / "setup.py").write_text(SETUP_PY.format(more=more))
    pythons = UvBuilder(UvOptions(python_downloads="never")).pythons(tmp_path)
    chosen = pythons.interpreter(None, "2019-03-01", None, tuple(declared_classifiers(tmp_path)))
    assert chosen.path == available_interpreters()["3.6"].resolve()
    assert chosen.lacks == ""
