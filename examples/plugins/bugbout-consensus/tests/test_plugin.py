"""The ``consensus`` policy: bugbout's judge contract, and when it picks or abstains."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from bugbout.core.contract.manager import make_plugins
from bugbout.core.judge.judging import Judge
from bugbout.testing.suites import JudgeSuite
from bugbout.testing.suites.judges import context, matrix


class TestConsensus(JudgeSuite):
    plugin = "consensus"
    options: ClassVar[dict[str, Any]] = {}


def consensus(**options: Any) -> Judge:
    judge: Judge = make_plugins().create("judge", "consensus", options)
    return judge


# One row per test: its outcome on the unfixed code, then with each patch (P: passed,
# F: failed); a test's author is the first part of its id.


def test_picks_what_two_independent_authors_agree_on() -> None:
    sample = matrix(
        ["alpha", "beta"],
        {
            "exam/test_e.py::repro": "FPF",
            "spec/test_s.py::repro": "FPF",
            "suite/test_old.py::old": "PPP",
        },
    )
    verdict = consensus().judge(sample, context(sample))
    assert verdict.pick == "alpha", verdict.reason
    assert verdict.approved == ["alpha"]
    assert verdict.policy == "consensus"


def test_abstains_on_a_single_authors_word() -> None:
    sample = matrix(["alpha", "beta"], {"exam/test_e.py::repro": "FPF"})
    verdict = consensus().judge(sample, context(sample))
    assert verdict.pick is None
    assert "consensus needs 2" in verdict.reason
    assert consensus(**{"min-authors": 1}).judge(sample, context(sample)).pick == "alpha"


def test_abstains_when_one_author_dissents() -> None:
    sample = matrix(
        ["alpha", "beta"],
        {
            "exam/test_e.py::one": "FPF",
            "exam/test_e.py::two": "FPF",
            "spec/test_s.py::repro": "FFF",
        },
    )
    verdict = consensus().judge(sample, context(sample))
    assert verdict.pick is None
    assert "'spec'" in verdict.reason


def test_a_patch_authors_own_tests_do_not_count() -> None:
    sample = matrix(
        ["alpha", "beta"],
        {"alpha/test_a.py::mine": "FPF", "exam/test_e.py::repro": "FPF"},
    )
    assert consensus().judge(sample, context(sample)).pick is None


def test_min_authors_must_be_positive() -> None:
    from bugbout.core.contract.errors import ConfigError

    with pytest.raises(ConfigError, match="min-authors"):
        consensus(**{"min-authors": 0})
