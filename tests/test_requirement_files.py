"""Test dependencies kept outside the packaging metadata: requirement files of other names,
development requirement files, and tox's ``[testenv]``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.project.project_metadata import declared_test_dependencies
from project_files import write


@pytest.mark.parametrize(
    "name",
    ["requirements_test.txt", "test_requirements.txt", "requirements/requirements-tests.txt"],
)
def test_more_names_of_test_requirements_files(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "pytest-httpbin\nfreezegun  # frozen\n")
    assert declared_test_dependencies(tmp_path) == ["pytest-httpbin", "freezegun"]


@pytest.mark.parametrize("name", ["requirements-dev.txt", "dev-requirements.txt"])
def test_a_dev_requirements_file_that_names_a_test_tool(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "-r requirements.txt\npytest>=3\nhypothesis\nsphinx\n")
    write(tmp_path, "requirements.txt", "six\n")
    assert declared_test_dependencies(tmp_path) == ["pytest>=3", "hypothesis", "sphinx"]


def test_a_dev_requirements_file_without_test_tools_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, "requirements-dev.txt", "sphinx\nblack\n")
    assert declared_test_dependencies(tmp_path) == []


def test_tox_testenv_deps_and_extras(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\n"
        "setup(name='demo', extras_require={'crypto': ['cryptography'], 'docs': ['sphinx']})\n",
    )
    write(
        tmp_path,
        "tox.ini",
        """
        [tox]
        envlist = py27, py34, crypto
        [testenv]
        deps =
            PyCrypto
            ecdsa  # signatures
            py27: mock
            {py27,py33}-legacy: unittest2
            contrib_crypto: pycrypto
            -r{toxinidir}/extra-requirements.txt
            {env:EXTRA_DEP:}
        extras =
            crypto: crypto
        commands = {envpython} setup.py test
        [testenv:flake8]
        deps = flake8
        """,
    )
    write(tmp_path, "extra-requirements.txt", "responses\n")
    assert declared_test_dependencies(tmp_path) == [
        "PyCrypto",
        "ecdsa",
        "pycrypto",
        "responses",
        "cryptography",
    ]


def test_a_broken_tox_ini_declares_nothing(tmp_path: Path) -> None:
    write(tmp_path, "tox.ini", "deps = pytest\n[testenv\n")
    assert declared_test_dependencies(tmp_path) == []


def test_deps_of_tox_environments_that_run_tools_are_not_test_dependencies(
    tmp_path: Path,
) -> None:
    """jsonschema's 2018 ``[testenv]``: benchmarks and a vulnerability scan ran in tox
    environments of their own, and ``perf`` did not resolve for the tests' era."""
    write(
        tmp_path,
        "tox.ini",
        """
        [testenv]
        deps =
            tests,coverage: twisted
            tests: lxml
            coverage: coverage
            perf: perf
            safety: safety
            {docs,style}: sphinx
        """,
    )
    assert declared_test_dependencies(tmp_path) == ["twisted", "lxml", "coverage"]


def test_deps_of_tox_test_environments_of_their_own_are_test_dependencies(
    tmp_path: Path,
) -> None:
    """structlog 2023-2026: better-exceptions and Rich are installed only by tox
    environments of their own that run pytest; a Python's deps (``py311:``, ``3.13:``) and
    those of environments that run other tools are not the tests'."""
    write(
        tmp_path,
        "tox.ini",
        """
        [testenv]
        extras =
            tests: tests
        commands =
            tests: pytest {posargs}

        [testenv:py3{8,11}-tests{,-colorama,-be,-rich}]
        deps =
            coverage[toml]
            py311: twisted
            3.13: twisted
            colorama: colorama
            rich: rich
            be: better-exceptions
        commands = coverage run -m pytest {posargs}

        [testenv:docs]
        deps = sphinx
        commands = sphinx-build -n -T -W -b html docs docs/_build/html

        [testenv:mypy]
        deps = mypy
        commands = mypy src
        """,
    )
    write(tmp_path, "setup.cfg", "[options.extras_require]\ntests = freezegun\n")
    assert declared_test_dependencies(tmp_path) == [
        "freezegun",
        "coverage[toml]",
        "colorama",
        "rich",
        "better-exceptions",
    ]
