"""A ``setup.py`` that builds its test extras by code: run, confined, for its metadata.

The script runs for real under bubblewrap with the test confinement; the attack tests
perform what a hostile ``setup.py`` would and assert by effect.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.project.project_metadata import declared_test_dependencies
from bugbout.core.store.store import Store
from bugbout.core.truth.oracle import computed_test_dependencies
from bugbout.core.truth.setup_run import executed_setup_py
from bugbout.testing import RepositoryBuilder
from history import calc_settings

COMPUTED = """\
from setuptools import setup

TOOLS = ["pytest", "hypothesis"]
EXTRAS = {"tests": [tool + ">=1" for tool in TOOLS], "docs": ["sphinx"]}
EXTRAS["dev"] = EXTRAS["tests"] + ["tox"]

setup(name="calc", extras_require=EXTRAS, tests_require=sorted(["mock", "coverage"]))
"""


@pytest.fixture
def confine(plugins: Plugins, tmp_path: Path) -> Confine:
    settings = BoutSettings(project=ProjectSettings(source="calc"), root=tmp_path / "repo")
    sandbox = plugins.create("sandbox", "bubblewrap")
    return confinement.test_confinement(
        settings.limits.tests,
        sandbox,
        tmp_path / "bugbout-home",
        confinement.masked_paths(
            settings.repository, settings.store_dir, tmp_path / "bugbout-home"
        ),
    )


def test_extras_built_by_code_are_found_by_running_setup_py(
    tmp_path: Path, confine: Confine
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "setup.py").write_text(COMPUTED)
    assert declared_test_dependencies(tree) == []  # nothing of it is a literal
    executed = executed_setup_py(tree, confine)
    assert executed == {
        "install_requires": None,
        "extras_require": {
            "tests": ["pytest>=1", "hypothesis>=1"],
            "docs": ["sphinx"],
            "dev": ["pytest>=1", "hypothesis>=1", "tox"],
        },
        "tests_require": ["coverage", "mock"],
    }
    assert declared_test_dependencies(tree, executed) == [
        "pytest>=1",
        "hypothesis>=1",
        "tox",  # the dev extra names test tools: it counts
        "coverage",
        "mock",
    ]
    added = computed_test_dependencies(tree, confine)
    assert [(a.requirement, a.note) for a in added][:1] == [
        ("pytest>=1", "added pytest>=1: declared by setup.py when it runs, not as a literal")
    ]


def test_a_setup_py_that_fails_or_never_calls_setup_gives_nothing(
    tmp_path: Path, confine: Confine
) -> None:
    for number, source in enumerate(["raise RuntimeError('no')\n", "print('hello')\n"]):
        tree = tmp_path / f"tree{number}"
        tree.mkdir()
        (tree / "setup.py").write_text(source)
        assert executed_setup_py(tree, confine) is None
        assert computed_test_dependencies(tree, confine) == []


def test_a_hostile_setup_py_writes_nothing_outside_its_tree_and_reads_no_secret(
    tmp_path: Path, confine: Confine
) -> None:
    outside = tmp_path / "outside.txt"
    secret = tmp_path / "bugbout-home" / "secret"
    secret.parent.mkdir(parents=True)
    secret.write_text("token")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "setup.py").write_text(
        textwrap.dedent(
            f"""
            import socket
            from setuptools import setup

            try:
                open({str(outside)!r}, "w").write("escaped")
            except OSError:
                pass
            try:
                stolen = open({str(secret)!r}).read()
            except OSError:
                stolen = "unreadable"
            try:
                socket.create_connection(("127.0.0.1", 22), timeout=2)
                network = "reached"
            except OSError:
                network = "offline"
            setup(name="calc", extras_require={{"tests": [stolen, network]}})
            """
        )
    )
    executed = executed_setup_py(tree, confine)
    assert not outside.exists()
    assert executed is not None
    assert executed["extras_require"] == {"tests": ["unreadable", "offline"]}


@pytest.mark.slow
def test_the_oracle_records_what_running_setup_py_declared(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "setup.py": COMPUTED,
            "src/calc/__init__.py": "def double(x):\n    return x + x\n",
            "src/calc/half.py": "def half(x):\n    return x / 3\n",
            "tests/test_calc.py": "from calc import double\n\n\ndef test_double():\n"
            "    assert double(2) == 4\n",
        },
    )
    fix = repo.commit(
        "Fix half (#3)",
        {
            "src/calc/half.py": "def half(x):\n    return x / 2\n",
            "tests/test_half.py": "from calc.half import half\n\n\ndef test_half():\n"
            "    assert half(4) == 2\n",
        },
    )
    settings = calc_settings(repo.path)
    store = Store(tmp_path / ".bugbout")
    plugins = make_plugins(entry_points=False)
    oracle = compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store))
    found = oracle.root[fix[:12]]
    assert found.status == "ok", found.reason
    assert [a.requirement for a in found.added] == [
        "pytest>=1",
        "hypothesis>=1",
        "tox",
        "coverage",
        "mock",
    ]
    assert all(a.declared_by == "setup.py" for a in found.added)
