"""A fix's test that fails after the fix only because Python 3 is not Python 2 (an
exception's ``message``, bytes unequal to the same text) makes the reason say so."""

from __future__ import annotations

import pytest

from bugbout.core.store.records import Outcome, RunStatus, Task, TaskIssue, TestRun
from bugbout.core.truth.oracle import judge_runs
from bugbout.core.truth.python2 import python2_failure

BYTES = "AssertionError: b'{\"foo\": 42}' != '{\"foo\": 42}'"
MESSAGE = "AttributeError: 'MarshallingError' object has no attribute 'message'"


@pytest.mark.parametrize(
    ("message", "python2"),
    [
        (BYTES, True),
        ("AssertionError: assert 'abc' == b'abc'", True),
        ('AssertionError: b\'{"name": "Joe"}\' != \'{"foo": 42}\'', False),  # other text
        ("AssertionError: 'abc' != 'abc '", False),  # two texts
        (MESSAGE, True),
        ("AttributeError: 'User' object has no attribute 'message'", False),  # not an error
        ("AttributeError: 'MarshallingError' object has no attribute 'messages'", False),
    ],
)
def test_failures_of_python_2_code(message: str, python2: bool) -> None:
    assert bool(python2_failure(message)) is python2


def _runs(before: str, after: str) -> list[TestRun]:
    test = "tests/test_a.py::test_json"
    return [
        TestRun(
            label=label,
            status=RunStatus.OK,
            outcomes={test: Outcome.FAILED, "tests/test_a.py::test_other": Outcome.PASSED},
            failures={test: message},
        )
        for label, message in (("before-1", before), ("after-1", after), ("after-2", after))
    ]


def _task() -> Task:
    return Task(
        id="t", sha="s", parent="p", date="2014-03-02T00:00:00+00:00", title="Add json_module",
        issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
        added_tests=["tests/test_a.py::test_json"],
    )  # fmt: skip


def test_a_test_of_bytes_as_text_is_python_2s() -> None:
    oracle = judge_runs(_task(), _runs("AssertionError: b'{}' != '{\"foo\": 42}'", BYTES))
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        f"; tests/test_a.py::test_json fails after the fix with {BYTES}: it compares bytes "
        "with the same text, which are equal on Python 2 alone, so the test is Python 2's, "
        "and bugbout runs tests on Python 3.6 and later"
    )


def test_a_test_of_an_exceptions_message_is_python_2s() -> None:
    oracle = judge_runs(_task(), _runs(MESSAGE, MESSAGE))
    assert oracle.reason is not None
    assert "Python 2's exceptions had a `message` attribute" in oracle.reason


def test_a_test_failing_otherwise_says_nothing_of_python_2() -> None:
    oracle = judge_runs(_task(), _runs("AssertionError: 1 != 2", "AssertionError: 1 != 3"))
    assert oracle.reason is not None
    assert "Python 2" not in oracle.reason
