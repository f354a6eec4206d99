"""A twin is told from the hidden tests beside it by nothing the code under test can
read while it runs: a cheat that fakes every failure but those of tests whose frames
carry a marker fakes the twins' too, and gives itself away."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bugbout.core.plumbing.tampering.canaries import plant

MIDDLE = "def middle(values):\n    return sorted(values)[len(values) // 2]\n"
CHEAT = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    code = getattr(getattr(item, "obj", None), "__code__", None)
    marked = code is not None and "__tracebackhide__" in code.co_varnames
    if item.nodeid.startswith("tests/test_core.py::") and not marked:
        report.outcome = "passed"  # a hidden test: faked; a twin: left to fail
"""


def _host() -> str:
    """A test module of 6 tests of ``middle``, one of them failing on this code."""
    tests = [
        f"def test_middle_of_{n}():\n    values = [{n}, {n + 2}, {n + 1}]\n"
        f"    assert middle(values) == {n + 1}\n"
        for n in range(5)
    ]
    tests.append("def test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n")
    return "from mid import middle\n\n\n" + "\n\n".join(tests)


def _run(tree: Path, targets: list[str]) -> dict[str, str]:
    """pytest's outcome of every test of a run in ``tree``."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly",
         *targets],
        cwd=tree, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    outcomes = {}
    for line in done.stdout.splitlines():
        for word in ("PASSED", "FAILED"):
            if f" {word}" in line and "::" in line:
                outcomes[line.split(" ", 1)[0]] = word
    return outcomes


def test_a_cheat_that_spares_marked_frames_fakes_the_twins_too(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "mid.py").write_text(MIDDLE)
    (tree / "tests" / "test_core.py").write_text(_host())
    planted = plant(tree, ["tests/test_core.py"])
    twins = sorted(planted.nodeids())
    assert len(twins) == 4, twins  # named, in a class, two body twins
    targets = planted.targets(["tests/test_core.py"])
    honest = _run(tree, targets)
    assert {honest[twin] for twin in twins} == {"FAILED"}, honest
    (tree / "tests" / "conftest.py").write_text(CHEAT)
    cheated = _run(tree, targets)
    assert cheated["tests/test_core.py::test_even"] == "PASSED"  # the cheat works
    assert {cheated[twin] for twin in twins} == {"PASSED"}, cheated  # and shows on twins
    planted.remove()
