"""Reading a project's declared Python and dependencies; choosing an interpreter."""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.interpreters import (
    available_interpreters,
    choose_python,
    interpreter_version,
    python_path,
)
from bugbout.core.plumbing.project_metadata import (
    declared_dependencies,
    declared_python,
    declared_test_dependencies,
    poetry_specifier,
    read_requirements,
)


def write(tree: Path, name: str, text: str) -> Path:
    path = tree / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


# -- dependencies ---------------------------------------------------------------------------


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


# -- test dependencies ----------------------------------------------------------------------


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


# -- choosing a Python ----------------------------------------------------------------------

ALL = {v: Path(f"/py/{v}/bin/python{v}") for v in ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12")}


@pytest.mark.parametrize(
    ("declared", "date", "chosen"),
    [
        (None, "2021-06-15T10:00:00+02:00", "3.9"),
        (None, "2020-10-06", "3.9"),
        (None, "2020-10-05", "3.8"),  # released that day: not yet usable
        (None, "2017-01-01", "3.7"),  # nothing released yet: the oldest
        (None, None, "3.12"),
        (">=3.10", "2021-06-15", "3.10"),
        (">=3.6,<3.9", "2023-01-01", "3.8"),
        ("<=3.9", "2024-01-01", "3.9"),
        (">=3.9.1", "2021-01-01", "3.9"),
        ("~=3.8", "2021-01-01", "3.9"),
        (">=2.7, !=3.0.*, !=3.1.*", "2019-01-01", "3.7"),
        ("not a specifier", "2022-01-01", "3.10"),
    ],
)
def test_choose_python(declared: str | None, date: str | None, chosen: str) -> None:
    assert choose_python(declared, date, ALL, None) == (chosen, ALL[chosen])


def test_pinned_python_wins() -> None:
    assert choose_python(">=3.11", "2024-01-01", ALL, "3.8") == ("3.8", ALL["3.8"])
    assert choose_python(None, None, ALL, "3.9.18") == ("3.9", ALL["3.9"])


def test_pinned_python_missing() -> None:
    with pytest.raises(EnvironmentFailure) as error:
        choose_python(None, None, ALL, "3.6")
    message = str(error.value)
    assert "\n" not in message
    assert "3.7, 3.8, 3.9, 3.10, 3.11, 3.12" in message
    assert "pyenv install 3.6" in message


def test_declared_python_unsatisfiable() -> None:
    with pytest.raises(EnvironmentFailure, match=r"'>=3\.13'.*available: 3\.7, 3\.8"):
        choose_python(">=3.13", "2025-01-01", ALL, None)


# -- interpreters ---------------------------------------------------------------------------


def fake_python(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_available_interpreters_from_pyenv_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "pyenv"
    fake_python(root / "versions/3.9.1/bin/python3.9")
    newest = fake_python(root / "versions/3.9.18/bin/python3.9")
    fake_python(root / "versions/3.6.15/bin/python3.6")
    fake_python(root / "versions/my-venv/bin/python3.8")
    fake_python(root / "shims/python3.12")
    on_path = fake_python(tmp_path / "bin/python3.10")
    fake_python(tmp_path / "bin/python3.5")
    monkeypatch.setenv("PYENV_ROOT", str(root))
    monkeypatch.setenv("PATH", os.pathsep.join([str(root / "shims"), str(tmp_path / "bin")]))

    found = available_interpreters()

    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert found["3.9"] == newest
    assert found["3.10"] == on_path.resolve()
    assert running in found
    assert set(found) == {"3.9", "3.10", running}


def test_available_interpreters_here() -> None:
    found = available_interpreters()
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in found
    for version, path in found.items():
        assert tuple(map(int, version.split("."))) >= (3, 7)
        assert "shims" not in path.parts
        assert interpreter_version(path).startswith(version + ".")


def test_interpreter_version_failure(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentFailure, match="cannot run"):
        interpreter_version(tmp_path / "missing")


# -- PYTHONPATH -----------------------------------------------------------------------------


def test_python_path(tmp_path: Path) -> None:
    extra = tmp_path / "plugin"
    assert python_path(tmp_path, ["src"], [extra]) == os.pathsep.join(
        [str(extra), str(tmp_path / "src"), str(tmp_path)]
    )
    assert python_path(tmp_path, ["."], []) == str(tmp_path)


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
