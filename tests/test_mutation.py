"""Mutations read from a module's syntax tree: one spot changed, its layout kept."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.injection import SuiteReach, _candidates
from bugbout.core.mine.mutation import OPERATORS, MutantOptions, mutations, sample
from bugbout.core.store.records import RunStatus, Task, TaskSet, TestRun

MODULE = '''\
"""A module."""

LIMIT = 10  # module-level: never mutated


def area(side):
    """The docstring stays."""
    # the comment stays
    return side * side  # squared


def clamp(value, low, high):
    if value < low:
        return low
    if not value <= high:
        return high
    return value


def twice(items):
    items.append(1)  # once
    items.append(1)  # twice
    return items


def ratio(a, b):
    return "%d/%d" % (a, b)
'''


def _changes(operator: str) -> set[tuple[str, str]]:
    """``(removed line, added line)`` of each mutation of ``operator`` (``""`` for none)."""
    found = set()
    for mutation in mutations("pkg/m.py", MODULE, (operator,)):
        diff = list(difflib.ndiff(MODULE.splitlines(), mutation.mutated.splitlines()))
        removed = [line[2:].strip() for line in diff if line.startswith("- ")]
        added = [line[2:].strip() for line in diff if line.startswith("+ ")]
        assert len(removed) == 1 and len(added) <= 1, diff
        found.add((removed[0], added[0] if added else ""))
    return found


def test_arithmetic_swaps_the_operator_and_keeps_the_comment() -> None:
    assert _changes("arithmetic") == {
        ("return side * side  # squared", "return side / side  # squared")
    }  # the string formatting's % is left alone


def test_comparison_and_boundary() -> None:
    assert _changes("comparison") == {
        ("if value < low:", "if value > low:"),
        ("if not value <= high:", "if not value >= high:"),
    }
    assert _changes("boundary") == {
        ("if value < low:", "if value <= low:"),
        ("if not value <= high:", "if not value < high:"),
    }


def test_negation_reads_as_written_by_hand() -> None:
    """A comparison is turned around (never ``not x < y``), a ``not`` removed; negating
    ``==`` would make ``!=``, which the comparison mutation makes already: made once."""
    assert _changes("negation") == {
        ("if value < low:", "if value >= low:"),
        ("if not value <= high:", "if value <= high:"),
    }


def test_constant_return_and_statement() -> None:
    assert _changes("constant") == {
        ("items.append(1)  # once", "items.append(0)  # once"),
        ("items.append(1)  # twice", "items.append(0)  # twice"),
    }
    assert ("return side * side  # squared", "return None  # squared") in _changes("return")
    assert ("return low", "return None") in _changes("return")
    assert _changes("statement") == {
        ("items.append(1)  # once", ""),
        ("items.append(1)  # twice", ""),
    }


def test_two_removals_that_read_the_same_normalise_alike() -> None:
    removed = list(mutations("pkg/m.py", MODULE, ("statement",)))
    assert len(removed) == 2
    assert removed[0].mutated != removed[1].mutated  # the comment left differs
    assert removed[0].normalised() == removed[1].normalised()
    constants = list(mutations("pkg/m.py", MODULE, ("constant",)))
    assert constants[0].normalised() != constants[1].normalised()


def test_mutated_lines_are_what_is_new() -> None:
    (mutation,) = mutations("pkg/m.py", MODULE, ("arithmetic",))
    assert mutation.mutated_lines == ["return side / side  # squared"]
    assert mutation.function == "area" and mutation.line == 9


def test_methods_and_nested_functions_are_named() -> None:
    text = "class A:\n    def f(self):\n        def g():\n            return 1\n        return g\n"
    names = {(m.function, m.operator) for m in mutations("m.py", text)}
    assert names == {("A.f.g", "return"), ("A.f.g", "constant"), ("A.f", "return")}


def test_a_module_that_does_not_parse_has_none() -> None:
    assert list(mutations("m.py", "def f(:\n")) == []


def test_one_change_is_made_once_whatever_the_operators() -> None:
    text = "def f(x):\n    if x == 1:\n        return 2\n    return 3\n"
    made = [m.mutated for m in mutations("m.py", text, ("comparison", "negation"))]
    assert made == ["def f(x):\n    if x != 1:\n        return 2\n    return 3\n"]


def test_sample_is_seeded_and_capped_per_function() -> None:
    found = list(mutations("pkg/m.py", MODULE))
    first, again = sample(found, seed=3, per_function=1), sample(found, seed=3, per_function=1)
    assert first == again
    assert len({(m.path, m.function) for m in first}) == len(first) == 4
    assert sample(found, seed=4, per_function=100) != sample(found, seed=3, per_function=100)


def test_options_name_unknown_operators() -> None:
    assert MutantOptions().operators == OPERATORS
    with pytest.raises(ValidationError, match="swap: choose among arithmetic"):
        MutantOptions.model_validate({"operators": ["swap"]})
    assert MutantOptions.model_validate({"per-function": 3}).per_function == 3


def test_a_task_stored_before_tiers_reads_as_an_issue_fix() -> None:
    stored = {
        "tasks": [
            {
                "id": "abc", "sha": "a" * 40, "parent": "b" * 40, "date": "2024-01-01",
                "title": "t", "issue": {"number": 1}, "source_files": [], "test_files": [],
            }
        ]
    }  # fmt: skip
    (task,) = TaskSet.model_validate_json(json.dumps(stored)).tasks
    assert task.tier == "issue-fix"
    assert Task.model_validate({**stored["tasks"][0], "tier": "injected"}).tier == "injected"


def test_a_module_with_crlf_line_endings_keeps_them(tmp_path: Path) -> None:
    """The mutated file differs from the commit's by the mutation only: its line endings
    are read as they are (a text read would turn every CRLF into LF)."""
    module = tmp_path / "src" / "geo" / "m.py"
    module.parent.mkdir(parents=True)
    module.write_bytes(b"def f(x):\r\n    return x + 1\r\n")
    evidence = SuiteReach(
        TestRun(label="base", status=RunStatus.OK), {"src/geo/m.py": frozenset({"t::a"})}
    )
    project = ProjectSettings(source="src/geo", tests="tests")
    found = list(_candidates(tmp_path, project, evidence, MutantOptions()))
    assert found
    for mutation in found:
        assert mutation.original.encode() == module.read_bytes()
        assert "\r\n" in mutation.mutated and "\n" not in mutation.mutated.replace("\r\n", "")
