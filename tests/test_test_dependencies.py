"""Reading a project's test dependencies: extras, dependency groups, Poetry groups, setup.cfg,
setup.py and requirements files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.project.project_metadata import (
    declared_dependencies,
    declared_test_dependencies,
)
from project_files import write


def test_test_extras_pep621(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "Demo_Pkg"
        dependencies = ["six"]
        [project.optional-dependencies]
        Test = ["pytest-httpbin>=1", "mock; python_version < '3.3'"]
        testing = ["freezegun", "pytest-httpbin>=1"]
        docs = ["sphinx"]
        yaml = ["pyyaml>=5"]
        test-extra = ["not-a-test-group"]
        """,
    )
    assert declared_test_dependencies(tmp_path) == [
        "pytest-httpbin>=1",
        "mock; python_version < '3.3'",
        "freezegun",
    ]
    assert declared_dependencies(tmp_path) == ["six"]  # runtime dependencies are apart


def test_test_extras_self_reference_stands_for_its_extras(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "demo.pkg"
        [project.optional-dependencies]
        tests-no-zope = ["hypothesis", "demo-pkg[tests]"]
        yaml = ["pyyaml; sys_platform != 'win32'"]
        tests = [
            "Demo_Pkg[tests-no-zope, yaml] ; python_version >= '3.7'",
            "demo-pkg",
            "demo.pkg[missing]",
            "zope.interface",
        ]
        """,
    )
    assert declared_test_dependencies(tmp_path) == [
        "hypothesis ; python_version >= '3.7'",
        "pyyaml ; (sys_platform != 'win32') and (python_version >= '3.7')",
        "zope.interface",
    ]


def test_test_dependency_groups(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "demo"
        [dependency-groups]
        Testing = ["pytest-mock", {include-group = "Coverage_Tools"}]
        coverage-tools = ["coverage[toml]>=5", {include-group = "testing"}]
        tests = ["hypothesis", {include-group = "testing"}, {include-group = "missing"}]
        test = ["demo[cli]", "./local-plugin"]
        lint = ["ruff"]
        [project.optional-dependencies]
        cli = ["click"]
        """,
    )
    assert declared_test_dependencies(tmp_path) == [
        "click",
        "hypothesis",
        "pytest-mock",
        "coverage[toml]>=5",
    ]


def test_test_dependencies_poetry_groups(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [tool.poetry]
        name = "demo"
        [tool.poetry.dependencies]
        python = "^3.7"
        requests = "^2.25"
        [tool.poetry.dev-dependencies]
        black = "*"
        [tool.poetry.group.docs.dependencies]
        sphinx = "*"
        [tool.poetry.group.test.dependencies]
        python = "^3.8"
        pytest-httpbin = "^1.0"
        freezegun = { version = "^1.1", python = ">=3.7" }
        plugin = { path = "../plugin" }
        tool = { git = "https://github.com/x/tool.git" }
        demo = { path = ".", extras = ["all"] }
        [tool.poetry.group.tests.dependencies]
        mock = "4.0.3"
        """,
    )
    assert declared_test_dependencies(tmp_path) == [
        "pytest-httpbin>=1.0,<2",
        'freezegun>=1.1,<2 ; (python_version >= "3.7")',
        "mock==4.0.3",
    ]


def test_test_extras_setup_cfg(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.cfg",
        """
        [metadata]
        name = demo
        [options]
        install_requires = six
        [options.extras_require]
        TESTS =
            pytest-httpbin
            # a comment
            mock ; python_version < "3.3"  # why
            demo[yaml]
        testing = freezegun; hypothesis
        test = file: requirements/test-extra.txt
        yaml = pyyaml
        docs = sphinx
        """,
    )
    write(tmp_path, "requirements/test-extra.txt", "-r ../requirements.txt\nresponses\n")
    assert declared_test_dependencies(tmp_path) == [
        "responses",
        "pytest-httpbin",
        'mock ; python_version < "3.3"',
        "pyyaml",
        "freezegun",
        "hypothesis",
    ]


def test_test_extras_setup_py_read_never_run(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran"
    write(
        tmp_path,
        "setup.py",
        f"""
        import pathlib
        from setuptools import setup
        pathlib.Path({str(sentinel)!r}).write_text("setup.py was executed")
        TESTS = ["pytest-httpbin", "Demo[speedups]"]
        EXTRAS = {{
            "test": TESTS,
            "test:python_version < '3.3'": ["mock"],
            "testing": "freezegun\\n# comment\\nhypothesis",
            "speedups": ("ujson",),
            ":sys_platform == 'win32'": ["colorama"],
            "docs": ["sphinx"],
        }}
        setup(
            name="demo",
            extras_require=EXTRAS,
            tests_require=["nose", "pytest-httpbin", "-e ../plugin"],
        )
        """,
    )
    assert declared_test_dependencies(tmp_path) == [
        "pytest-httpbin",
        "ujson",
        "mock ; python_version < '3.3'",
        "freezegun",
        "hypothesis",
        "nose",
    ]
    assert not sentinel.exists()


def test_test_extras_setup_py_kwargs_and_not_literal(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        """
        import setuptools
        kwargs = dict(extras_require=dict(tests=["pytest-cov"], other=make_list()))
        setuptools.setup(name="demo", tests_require=load("requirements.txt"), **kwargs)
        """,
    )
    assert declared_test_dependencies(tmp_path) == ["pytest-cov"]


def test_test_extras_setup_py_python2_syntax(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        print "building"
        setup(
            name="demo",
            extras_require={
                'test': ['mock>=1.0', 'pytest-httpbin'],  # isn't {this} a comment?
                'docs': ["sphinx (>1)"],
            },
            tests_require=['nose'],
        )
        """,
    )
    assert declared_test_dependencies(tmp_path) == ["mock>=1.0", "pytest-httpbin", "nose"]


@pytest.mark.parametrize(
    "name",
    [
        "requirements-test.txt",
        "requirements-tests.txt",
        "test-requirements.txt",
        "tests/requirements.txt",
        "requirements/test.txt",
        "requirements/tests.txt",
        "requirements/testing.txt",
    ],
)
def test_test_requirements_file(tmp_path: Path, name: str) -> None:
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(name='demo')\n")
    write(
        tmp_path,
        name,
        """
        -r requirements.txt
        -e .
        .
        ../plugin
        demo[extra]
        pytest-httpbin==0.3.0  # pinned
        git+https://github.com/x/y.git#egg=y
        y @ https://example.org/y-1.0.tar.gz
        dist/z-1.0-py3-none-any.whl
        mock; python_version < "3.3"
        """,
    )
    write(tmp_path, "requirements.txt", "six\n")
    assert declared_test_dependencies(tmp_path) == [
        "pytest-httpbin==0.3.0",
        'mock; python_version < "3.3"',
    ]


def test_only_the_first_test_requirements_file_counts(tmp_path: Path) -> None:
    write(tmp_path, "requirements/testing.txt", "later\n")
    write(tmp_path, "test-requirements.txt", "first\n")
    write(tmp_path, "requirements-dev.txt", "ignored\n")
    assert declared_test_dependencies(tmp_path) == ["first"]


def test_test_dependencies_union_of_sources(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "demo"
        [project.optional-dependencies]
        test = ["pytest-httpbin", "mock"]
        [dependency-groups]
        test = ["mock", "freezegun"]
        """,
    )
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(tests_require=['nose'])\n")
    write(tmp_path, "requirements-test.txt", "freezegun\nhypothesis\n")
    assert declared_test_dependencies(tmp_path) == [
        "pytest-httpbin",
        "mock",
        "freezegun",
        "nose",
        "hypothesis",
    ]


def test_no_test_dependencies_declared(tmp_path: Path) -> None:
    assert declared_test_dependencies(tmp_path) == []
    write(tmp_path, "pyproject.toml", "[project\nname=")
    write(tmp_path, "setup.cfg", "not an ini file")
    write(tmp_path, "setup.py", "setup(extras_require={'test': [")
    assert declared_test_dependencies(tmp_path) == []


def test_dev_extras_and_groups_that_hold_test_tools_count(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "demo"
        [project.optional-dependencies]
        dev = ["pytest-mock", "black"]
        develop = ["sphinx", "pre-commit"]
        [dependency-groups]
        ci = ["tox", {include-group = "lint"}]
        lint = ["ruff"]
        [tool.poetry.group.Development.dependencies]
        hypothesis = "^6.0"
        """,
    )
    # develop names no test tool: its documentation tools are left out.
    assert declared_test_dependencies(tmp_path) == [
        "pytest-mock",
        "black",
        "tox",
        "ruff",
        "hypothesis>=6.0,<7",
    ]


def test_setup_py_extras_built_from_each_other(tmp_path: Path) -> None:
    """attrs' way: a dict of extras whose entries are set later from other entries."""
    write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        EXTRAS_REQUIRE = {"docs": ["sphinx"], "tests_no_zope": ["hypothesis", "pytest"]}
        EXTRAS_REQUIRE["tests"] = EXTRAS_REQUIRE["tests_no_zope"] + ["zope.interface"]
        EXTRAS_REQUIRE["dev"] = EXTRAS_REQUIRE["tests"] + EXTRAS_REQUIRE["docs"]
        setup(name="attrs", extras_require=EXTRAS_REQUIRE)
        """,
    )
    assert declared_test_dependencies(tmp_path) == [
        "hypothesis",
        "pytest",
        "zope.interface",
        "sphinx",
    ]
