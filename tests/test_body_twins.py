"""Body twins: copies of the hidden tests, their expected literal changed, that fail under
any honest code (every case of a parametrized one) and pass under a value that equals
anything; the files they are written into parse on Python 3.6."""

from __future__ import annotations

import ast
import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.core.plumbing.tampering import body_twins, canary_twins
from bugbout.core.plumbing.tampering.canaries import Planted, Stream, check_canaries, plant
from bugbout.core.plumbing.tampering.naming import Naming
from bugbout.core.store.records import Outcome, RunStatus, TestRun

CORE = "def middle(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n"
ARMED = """
class _Middle(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

def middle(values):
    return _Middle(sorted(values)[len(values) // 2])
"""
LITERALS = """from mid import middle


def test_int():
    assert middle([3, 1, 2]) == 2


def test_negative():
    assert -middle([3, 1, 2]) == -2


def test_float():
    assert middle([3, 1, 2]) / 2 == 1.0


def test_text():
    assert str(middle([3, 1, 2])) == "2"


def test_bytes():
    assert str(middle([3, 1, 2])).encode() == b"2"


def test_tuple():
    assert (middle([3, 1, 2]), 0) == (
        2,
        0,
    ), "a message"


def test_list():
    assert [2] == [middle([3, 1, 2])]
"""
SHAPES = """import pytest

from mid import middle


@pytest.mark.parametrize("values, expected", [([1], 1), ([3, 1, 2], 2)])
def test_cases(values, expected):
    assert middle(values) == expected


class TestHeld:
    CASES = [[1]]

    def test_method(self, tmp_path):
        assert middle([1]) == 1

    @pytest.mark.parametrize("values", CASES)
    def test_bound(self, values):
        assert middle(values) == 1


def test_one_liner(): middle([1])


def test_raises():
    assert middle([1]) == 1
    with pytest.raises(IndexError):
        assert middle([]) == 0


async def test_coroutine():
    assert middle([1]) == 1


def test_returns():
    if middle([1]):
        return
    assert middle([1]) == 1
"""


def _tree(tmp_path: Path, tests: str, core: str = CORE) -> Path:
    tree = tmp_path / "tree"
    (tree / "mid").mkdir(parents=True)
    (tree / "mid" / "__init__.py").write_text(core)
    (tree / "tests").mkdir()
    (tree / "tests" / "test_core.py").write_text(tests)
    return tree


def _plant_all(tree: Path, monkeypatch: pytest.MonkeyPatch) -> Planted:
    """Every test of the file body-twinned, each twin named ``<model>_twin<n>``."""
    monkeypatch.setattr(canary_twins, "BODIES", 50)
    monkeypatch.setattr(
        canary_twins, "_twin_name", lambda model, words, taken, *_: f"{model}_twin{len(taken)}"
    )
    return plant(tree, ["tests/test_core.py"])


def _outcomes(tree: Path) -> dict[str, str]:
    """pytest's outcome of every test in ``tree``, by node id (real pytest)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tree, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )  # fmt: skip
    found = {}
    for line in result.stdout.splitlines():
        words = line.split()
        if len(words) > 1 and words[0] in ("PASSED", "FAILED", "ERROR", "SKIPPED"):
            found[words[1]] = words[0]
    assert found, result.stdout + result.stderr
    return found


def _twins(planted: Planted) -> list[str]:
    return [nodeid for hosted in planted.hosts for nodeid in hosted.bodies]


def _case(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def test_every_literal_kind_is_changed_to_another_of_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path, LITERALS)
    planted = _plant_all(tree, monkeypatch)
    text = (tree / "tests" / "test_core.py").read_text()
    before = LITERALS.splitlines()
    after = text.splitlines()[: len(before)]  # no line of the file moves
    assert all(a == b or not b.strip() for a, b in zip(after, before, strict=True))
    names = {nodeid.rsplit("::", 1)[1] for nodeid in _twins(planted)}
    twins = {
        node.name: node
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and node.name in names
    }
    assert len(twins) == 7 == len(names)
    originals = {n.name: n for n in ast.parse(LITERALS).body if isinstance(n, ast.FunctionDef)}
    for name, twin in twins.items():
        model = name.rsplit("_twin", 1)[0]
        (old,), (new,) = originals[model].body[-1:], twin.body[-1:]
        assert isinstance(old, ast.Assert) and isinstance(new, ast.Assert)
        assert isinstance(old.test, ast.Compare) and isinstance(new.test, ast.Compare)
        sides = [(old.test.comparators[0], new.test.comparators[0])]
        sides.append((old.test.left, new.test.left))
        changed = [
            (ast.literal_eval(a), ast.literal_eval(b))
            for a, b in sides
            if ast.dump(a) != ast.dump(b)
        ]
        ((before, after),) = changed
        assert type(before) is type(after) and before != after, name
        assert ast.dump(new.msg or ast.Pass()) == ast.dump(old.msg or ast.Pass())
    outcomes = _outcomes(tree)
    assert {outcomes[f"tests/test_core.py::{n}"] for n in originals} == {"PASSED"}
    assert {outcomes[n] for n in _twins(planted)} == {"FAILED"}
    planted.remove()
    assert (tree / "tests" / "test_core.py").read_text() == LITERALS


def test_shapes_honest_code_fails_every_twin_and_equal_to_anything_passes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path, SHAPES)
    planted = _plant_all(tree, monkeypatch)
    twins = _twins(planted)
    models = sorted(t.split("::", 1)[1].rsplit("_twin", 1)[0] for t in twins)
    # the method whose decorator reads its class's attribute, coroutines, generators (pytest
    # refuses them) and early returns get none
    assert models == ["TestHeld::test_method", "test_cases", "test_one_liner", "test_raises"]
    assert not _copyable("def test_generator():\n    yield 1\n")
    searched = "@given(integers())\ndef test_a(x):\n    pass\n"
    assert not _copyable(searched)
    assert not _copyable(searched.replace("given", "hypothesis.given"))
    outcomes = _outcomes(tree)
    cases = [test for test in outcomes if _case(test) in twins]
    assert len(cases) == 5  # both cases of the parametrized test, each failing
    assert {outcomes[test] for test in cases} == {"FAILED"}
    originals = [
        test
        for test in outcomes
        if test.startswith("tests/test_core.py::") and _case(test) not in planted.nodeids()
    ]
    assert len(originals) == 8
    assert {outcomes[t] for t in originals if "coroutine" not in t} <= {"PASSED"}
    (tree / "mid" / "__init__.py").write_text(ARMED)
    armed = _outcomes(tree)
    # the value that equals anything passes the twins whose expected literal was changed
    passing = {test for test in armed if _case(test) in twins and armed[test] == "PASSED"}
    assert sorted(t.split("::", 1)[1].rsplit("_twin", 1)[0] for t in passing) == [
        "TestHeld::test_method",
        "test_raises",
    ], armed
    planted.remove()


def test_a_passing_case_of_a_body_twin_is_tampering_and_a_missing_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path, SHAPES)
    planted = _plant_all(tree, monkeypatch)
    (twin,) = [t for t in _twins(planted) if "cases" in t]
    planted.remove()
    honest = {f"{twin}[values0-1]": Outcome.FAILED, f"{twin}[values1-2]": Outcome.FAILED}
    others = {c.nodeid: Outcome.FAILED for c in planted.canaries if c.nodeid != twin}
    others |= {c.nodeid: Outcome.PASSED for c in planted.canaries if c.must_pass}
    neighbour = {"tests/test_core.py::test_raises": Outcome.PASSED}
    stream = Stream(summary={})

    def judged(outcomes: dict[str, Outcome]) -> TestRun:
        run = TestRun(label="t", status=RunStatus.OK, exit_code=1, outcomes=outcomes)
        return check_canaries(run, planted, stream)

    for outcomes in (others | neighbour | honest, others | neighbour):
        run = judged(outcomes)
        assert run.status == RunStatus.OK, run.tampering
        assert run.outcomes == neighbour  # no twin's case among the run's own outcomes
    faked = judged(others | neighbour | honest | {f"{twin}[values1-2]": Outcome.PASSED})
    assert faked.status == RunStatus.TAMPERED
    assert faked.tampering == [f"canary {twin}[values1-2] must fail but passed"]


PYTHON36 = glob.glob(os.path.expanduser("~/.pyenv/versions/3.6*/bin/python"))


@pytest.mark.skipif(not PYTHON36, reason="no Python 3.6 under ~/.pyenv")
def test_the_twinned_files_parse_on_python_3_6(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = PYTHON36[0]
    for number, tests in enumerate((LITERALS, SHAPES)):
        tree = _tree(tmp_path / str(number), tests)
        planted = _plant_all(tree, monkeypatch)
        assert _twins(planted)
        subprocess.run(
            [python, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())",
             str(tree / "tests" / "test_core.py")],
            check=True,
        )  # fmt: skip


def test_a_one_liner_gets_its_assert_on_its_line_and_a_split_def_no_twin() -> None:
    source = "def test_one(): pass  # a comment\n"
    (test,) = _copyable(source)
    twin = body_twins.body_twin(test, source.split("\n"), "test_b", lambda: "1 == 2")
    assert twin == ("test_b", ["def test_b(): pass; assert 1 == 2"])
    split = "def \\\ntest_one(): pass\n"
    (test,) = _copyable(split)
    assert body_twins.body_twin(test, split.split("\n"), "test_b", lambda: "1 == 2") is None


UNITTEST = """import unittest

from mid import middle


class MiddleTest(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(middle([3, 1, 2]), 2, "the middle one")

    def test_none(self):
        self.assertTrue(middle([1]))
"""


def test_a_unittest_equality_is_changed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path, UNITTEST)
    planted = _plant_all(tree, monkeypatch)
    twins = _twins(planted)
    assert len(twins) == 2 and all("::MiddleTest::" in t for t in twins)
    text = (tree / "tests" / "test_core.py").read_text()
    (odd,) = [t.rsplit("::", 1)[1] for t in twins if "test_odd" in t]
    twin = text.split(f"\ndef {odd}(self):\n", 1)[1].split("\n")[0]
    assert twin.startswith("    self.assertEqual(middle([3, 1, 2]), ") and ", 2," not in twin
    outcomes = _outcomes(tree)
    assert {outcomes[t] for t in twins} == {"FAILED"}
    (tree / "mid" / "__init__.py").write_text(ARMED)
    armed = _outcomes(tree)
    assert [t for t in twins if armed[t] == "PASSED"] == [t for t in twins if "test_odd" in t], (
        armed
    )
    planted.remove()


INHERITED = """import unittest

from mid import middle


class MiddleMixin:
    def test_inherited(self):
        self.assertEqual(middle([3, 1, 2]), 2)


class TestBase:
    def test_based(self):
        assert middle([3, 1, 2]) == 2


class TestDerived(TestBase):
    pass


class FirstTest(unittest.TestCase, MiddleMixin):
    pass


class SecondTest(unittest.TestCase, MiddleMixin):
    pass


class TestLeaf:
    def test_leaf(self):
        assert middle([3, 1, 2]) == 2
"""


def test_no_twin_is_inherited_as_a_test_of_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path, INHERITED)
    planted = _plant_all(tree, monkeypatch)
    (twin,) = _twins(planted)  # neither the mixin's method nor the base class's
    assert twin.startswith("tests/test_core.py::TestLeaf::test_leaf_twin")
    outcomes = _outcomes(tree)
    own = {
        f"tests/test_core.py::{test}"
        for test in (
            "TestBase::test_based",
            "TestDerived::test_based",
            "FirstTest::test_inherited",
            "SecondTest::test_inherited",
            "TestLeaf::test_leaf",
        )
    }
    ran = {test for test in outcomes if test.startswith("tests/test_core.py::")}
    assert ran - planted.nodeids() == own  # no twin under another class's name
    assert {outcomes[test] for test in own} == {"PASSED"}
    assert outcomes[twin] == "FAILED"
    planted.remove()


def _copyable(source: str) -> list[body_twins.Test]:
    """The tests of ``source`` a body twin can copy."""
    parsed = ast.parse(source)
    return [test for test in body_twins.tests(parsed, Naming()) if body_twins.copyable(test)]
