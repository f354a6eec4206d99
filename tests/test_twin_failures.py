"""A failing twin costs pytest no parse of its host file: every twin (named, in a class,
body) hides its frames from the traceback, so its failure is reported without source,
and it still fails under honest code and passes under a cheat that fakes its file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bugbout.core.plumbing.tampering.canaries import Planted, plant
from old_pytests import old_pytest

MIDDLE = "def middle(values):\n    return sorted(values)[len(values) // 2]\n"
COUNTED = """
import ast

_parse = ast.parse


def _counted(source, *args, **kwargs):
    if isinstance(source, str) and len(source) >= {size}:
        with open({mark!r}, "a") as mark:
            mark.write("parse\\n")
    return _parse(source, *args, **kwargs)


ast.parse = _counted
"""
CHEAT = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if item.nodeid.startswith("tests/test_core.py::"):
        report.outcome = "passed"
"""


def _host() -> str:
    """A long test module: 60 tests of ``middle``, each the last line an equality."""
    tests = [
        f"def test_middle_of_{n}():\n    values = [{n}, {n + 2}, {n + 1}]\n"
        f"    assert middle(values) == {n + 1}\n"
        for n in range(60)
    ]
    return "from mid import middle\n\n\n" + "\n\n".join(tests)


def _run(tree: Path, targets: list[str], python: str = sys.executable) -> dict[str, str]:
    """pytest's outcome of every test of a run in ``tree``."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly", *targets],
        cwd=tree, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert "INTERNALERROR" not in done.stdout + done.stderr, done.stdout[-3000:]
    outcomes = {}
    for line in done.stdout.splitlines():
        for word in ("PASSED", "FAILED"):
            if f" {word}" in line and "::" in line:
                outcomes[line.split(" ", 1)[0]] = word
    return outcomes


def _planted(tmp_path: Path) -> tuple[Path, Planted, str]:
    """A tree whose long test module holds twins, every parse of it counted in
    ``parses``."""
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "mid.py").write_text(MIDDLE)
    host = _host()
    (tree / "tests" / "test_core.py").write_text(host)
    mark = tmp_path / "parses"
    (tree / "tests" / "conftest.py").write_text(COUNTED.format(size=len(host), mark=str(mark)))
    return tree, plant(tree, ["tests/test_core.py"]), host


def test_failing_twins_parse_no_host_file_and_still_catch_a_cheat(tmp_path: Path) -> None:
    tree, planted, host = _planted(tmp_path)
    mark = tmp_path / "parses"
    twins = sorted(planted.nodeids())
    assert len(twins) == 4, twins  # named, in a class, two body twins
    targets = planted.targets(["tests/test_core.py"])
    outcomes = _run(tree, targets)
    assert {outcomes[twin] for twin in twins} == {"FAILED"}, outcomes
    assert sum(outcome == "PASSED" for outcome in outcomes.values()) == 60 + 2
    assert not mark.exists(), mark.read_text()  # before: a parse per failing twin

    with (tree / "tests" / "conftest.py").open("a") as conftest:
        conftest.write(CHEAT)
    cheated = _run(tree, targets)
    assert {cheated[twin] for twin in twins} == {"PASSED"}, cheated
    planted.remove()
    assert (tree / "tests" / "test_core.py").read_text() == host


def test_pytest_2_still_reports_hidden_twins(tmp_path: Path) -> None:
    """pytest 2 ends its session when every frame of a failure is hidden: its twins
    keep theirs, and fail."""
    tree, planted, _ = _planted(tmp_path)
    targets = planted.targets(["tests/test_core.py"])
    outcomes = _run(tree, targets, str(old_pytest("2.9.2")))
    assert {outcomes[twin] for twin in planted.nodeids()} == {"FAILED"}, outcomes
