"""The outcome plugin's watch over pytest compares at the end of a session in C, by
identity, and reads only the modules something changed: still blind to nothing, even
when the code under test replaces the builtins or the ``operator`` functions it reads
pytest with (``bugbout_watch``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import RunStatus

PROJECT = ProjectSettings(source="pkg", tests="tests")
HIDDEN_BY_VARS = """
    import builtins, math
    _vars = builtins.vars
    _kept = {id(math): dict(_vars(math)), id(builtins): dict(_vars(builtins))}
    math.isclose = lambda *args, **kwargs: True
    builtins.vars = lambda *args: _kept.get(id(args[0]), _vars(*args)) if args else _vars()
"""
"""Replaces ``math.isclose``, then ``vars`` so that it shows math and the builtins as
they were: a watch that reads modules through ``vars`` sees nothing changed."""
ALL_TRUE = """
    import builtins, math, operator
    math.isclose = lambda *args, **kwargs: True
    operator.is_ = lambda a, b: True
    builtins.all = lambda values: True
"""
"""Makes every identity and every ``all`` true, after replacing ``math.isclose``."""


def _environment(tree: Path, home: Path) -> Environment:
    return (
        make_plugins(entry_points=False)
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=PROJECT, tree=tree, home=home))
    )


@pytest.mark.parametrize("package", [HIDDEN_BY_VARS, ALL_TRUE], ids=["vars", "all-and-is"])
def test_a_replaced_function_is_found_whatever_the_watch_reads_with(
    tmp_path: Path, package: str
) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text(textwrap.dedent(package))
    (tree / "tests").mkdir()
    (tree / "tests" / "test_it.py").write_text(
        "import math\nimport pkg\n\n\ndef test_close():\n    assert math.isclose(1, 2)\n"
    )

    run = run_tests(
        _environment(tree, tmp_path / "home"), tree, ["tests"], project=PROJECT, label="r",
        timeout=120,
    )  # fmt: skip

    assert run.status == RunStatus.TAMPERED, run.detail
    assert any("math.isclose was replaced" in why for why in run.tampering), run.tampering
