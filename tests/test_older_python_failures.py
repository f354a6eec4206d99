"""A fix's test that fails after the fix only because bugbout's Python is newer than the
one it was written for (a builtin of Python 2, an exception's ``message``, bytes unequal
to the same text, an OrderedDict changed while iterated) makes the reason say so."""

from __future__ import annotations

import pytest

from bugbout.core.store.records import Outcome, RunStatus, Task, TaskIssue, TestRun
from bugbout.core.truth.oracle import judge_runs
from bugbout.core.truth.python2 import older_python_failure

BYTES = "AssertionError: b'{\"foo\": 42}' != '{\"foo\": 42}'"
MESSAGE = "AttributeError: 'MarshallingError' object has no attribute 'message'"


@pytest.mark.parametrize(
    ("message", "python"),
    [
        (BYTES, "Python 2"),
        ("AssertionError: assert 'abc' == b'abc'", "Python 2"),
        ('AssertionError: b\'{"name": "Joe"}\' != \'{"foo": 42}\'', ""),  # other text
        ("AssertionError: 'abc' != 'abc '", ""),  # two texts
        (MESSAGE, "Python 2"),
        ("AttributeError: 'User' object has no attribute 'message'", ""),  # not an error
        ("AttributeError: 'MarshallingError' object has no attribute 'messages'", ""),
        ("NameError: name 'basestring' is not defined", "Python 2"),
        ("NameError: name 'helper' is not defined", ""),
        ("RuntimeError: OrderedDict mutated during iteration", "Python 3.4 or older"),
    ],
)
def test_failures_of_code_for_an_older_python(message: str, python: str) -> None:
    assert older_python_failure(message)[1] == python


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
        "with the same text, equal on Python 2 alone, so the test was written for Python 2, "
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
