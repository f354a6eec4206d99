"""Reading a project's declared Python and dependencies: PEP 621, Poetry, setup.cfg, setup.py
(read, never run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.project.project_metadata import (
    declared_dependencies,
    declared_python,
    poetry_specifier,
    read_requirements,
)
from project_files import write


def test_pep621(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "demo"
        requires-python = ">=3.8"
        dependencies = ["six>=1.10", "typing-extensions; python_version < '3.8'", "six>=1.10"]
        """,
    )
    write(tmp_path, "requirements.txt", "ignored\n")
    assert declared_dependencies(tmp_path) == [
        "six>=1.10",
        "typing-extensions; python_version < '3.8'",
    ]
    assert declared_python(tmp_path) == ">=3.8"


def test_pep621_empty_list_is_a_declaration(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "demo"\ndependencies = []\n')
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(install_requires=['x'])\n")
    assert declared_dependencies(tmp_path) == []
    assert declared_python(tmp_path) is None


def test_pep621_dynamic_from_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "demo"
        dynamic = ["dependencies"]
        [tool.setuptools.dynamic]
        dependencies = {file = ["requirements/base.txt"]}
        """,
    )
    write(tmp_path, "requirements/base.txt", "attrs>=19\n# comment\nclick\n")
    assert declared_dependencies(tmp_path) == ["attrs>=19", "click"]


def test_poetry(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
        [tool.poetry]
        name = "demo"
        [tool.poetry.dependencies]
        python = "^3.7"
        requests = "^2.25.1"
        attrs = "~20.3"
        click = "*"
        marshmallow = "3.10.0"
        toml = { version = "^0.10", optional = true }
        rich = { version = ">=10,<11", extras = ["jupyter"] }
        dataclasses = { version = "*", python = "<3.7" }
        local = { path = "../local" }
        tool = { git = "https://github.com/x/tool.git", tag = "v1" }
        [tool.poetry.dev-dependencies]
        pytest = "^6"
        """,
    )
    assert declared_dependencies(tmp_path) == [
        "requests>=2.25.1,<3",
        "attrs>=20.3,<20.4",
        "click",
        "marshmallow==3.10.0",
        "rich[jupyter]>=10,<11",
        'dataclasses ; (python_version < "3.7")',
        "tool @ git+https://github.com/x/tool.git@v1",
    ]
    assert declared_python(tmp_path) == ">=3.7,<4"


@pytest.mark.parametrize(
    ("constraint", "specifier"),
    [
        ("^1.2", ">=1.2,<2"),
        ("^1.2.3", ">=1.2.3,<2"),
        ("^0.2.3", ">=0.2.3,<0.3"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("~1.2", ">=1.2,<1.3"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("~1", ">=1,<2"),
        ("~=1.2", "~=1.2"),
        ("*", ""),
        ("1.2.*", "==1.2.*"),
        ("1.2", "==1.2"),
        (">=1.2 <2.0", ">=1.2,<2.0"),
        (">=1.2, !=1.5", ">=1.2,!=1.5"),
        ("^2.7 || ^3.6", ""),
    ],
)
def test_poetry_specifier(constraint: str, specifier: str) -> None:
    assert poetry_specifier(constraint) == specifier


def test_setup_cfg(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.cfg",
        """
        [metadata]
        name = demo
        [options]
        python_requires = >=3.6, <4
        install_requires =
            six>=1.12
            # a comment
            attrs ; python_version >= "3.6"  # why
        """,
    )
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup()\n")
    write(tmp_path, "requirements.txt", "ignored\n")
    assert declared_dependencies(tmp_path) == ["six>=1.12", 'attrs ; python_version >= "3.6"']
    assert declared_python(tmp_path) == ">=3.6, <4"


def test_setup_cfg_file_directive(tmp_path: Path) -> None:
    write(tmp_path, "setup.cfg", "[options]\ninstall_requires = file: reqs.txt\n")
    write(tmp_path, "reqs.txt", "click\n")
    assert declared_dependencies(tmp_path) == ["click"]


def test_setup_py_literals_are_read_never_run(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran"
    write(
        tmp_path,
        "setup.py",
        f"""
        import pathlib
        from setuptools import setup, find_packages
        pathlib.Path({str(sentinel)!r}).write_text("setup.py was executed")
        REQUIRES = ["six>=1.9", "python-dateutil"]
        setup(
            name="demo",
            packages=find_packages(),
            install_requires=REQUIRES,
            python_requires=">=3.5",
        )
        """,
    )
    assert declared_dependencies(tmp_path) == ["six>=1.9", "python-dateutil"]
    assert declared_python(tmp_path) == ">=3.5"
    assert not sentinel.exists()


def test_setup_py_tuple_and_kwargs(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        """
        import setuptools
        kwargs = dict(install_requires=("a", "b>=2"), python_requires=">=2.7")
        setuptools.setup(name="demo", **kwargs)
        """,
    )
    assert declared_dependencies(tmp_path) == ["a", "b>=2"]
    assert declared_python(tmp_path) == ">=2.7"


def test_setup_py_python2_syntax(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        print "building"
        setup(name="demo", install_requires=['six', 'simplejson'])
        """,
    )
    assert declared_dependencies(tmp_path) == ["six", "simplejson"]


def test_setup_py_not_literal_falls_back_to_requirements(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        setup(install_requires=open("requirements.txt").read().splitlines())
        """,
    )
    write(
        tmp_path,
        "requirements.txt",
        """
        # runtime
        -r base.txt
        -e .
        --index-url https://example.org/simple
        .
        requests>=2.0  # http
        pyyaml==5.4 --hash=sha256:abc
        git+https://github.com/x/y.git#egg=y
        idna; python_version < "3"
        """,
    )
    assert declared_dependencies(tmp_path) == [
        "requests>=2.0",
        "pyyaml==5.4",
        "git+https://github.com/x/y.git#egg=y",
        'idna; python_version < "3"',
    ]
    assert declared_python(tmp_path) is None


def test_nothing_declared(tmp_path: Path) -> None:
    assert declared_dependencies(tmp_path) == []
    assert declared_python(tmp_path) is None
    assert read_requirements(tmp_path / "missing.txt") == []


def test_broken_files_are_ignored(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[project\nname=")
    write(tmp_path, "setup.cfg", "not an ini file")
    write(tmp_path, "setup.py", "setup(install_requires=[")
    write(tmp_path, "requirements.txt", "six\n")
    assert declared_dependencies(tmp_path) == ["six"]
    assert declared_python(tmp_path) is None
