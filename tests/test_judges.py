"""Judges on hand-built matrices: the registry, and the four rules every policy keeps."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.judge.judging import Judge, JudgeContext, gather
from bugbout.core.store.race_records import Attempt, AttemptStatus
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.core.store.verdict_records import UNFIXED
from judge_matrices import POLICIES, cells, context, judge, make

CONF = Path(__file__).parent.parent / "src" / "bugbout" / "conf" / "judge"


# -- the registry -------------------------------------------------------------------------


def test_every_policy_registers_with_its_options(judges: Plugins) -> None:
    registered = judges.of_kind("judge")
    assert set(registered) == set(POLICIES)
    for name in POLICIES:
        spec = registered[name].spec
        assert spec.description
        implementation = judges.create("judge", name)
        assert isinstance(implementation, Judge)
        assert implementation.name == name


@pytest.mark.parametrize("policy", POLICIES)
def test_a_built_in_policy_runs_no_code_of_its_own_when_it_judges(
    judges: Plugins, policy: str
) -> None:
    """A built-in policy configures the core's engine: what it judges with (its
    ``judge``, its ``objection`` and the objections it names) is all the core's."""
    implementation = judges.create("judge", policy)
    engine = "bugbout.core.judge.judge_policy"
    assert type(implementation).judge.__module__ == engine
    assert type(implementation).objection.__module__ == engine
    assert type(implementation).keep_assignments.fget.__module__ == engine
    assert all(rule.__module__ == engine for rule in type(implementation).objections)


@pytest.mark.parametrize("policy", POLICIES)
def test_packaged_config_matches_the_plugin(judges: Plugins, policy: str) -> None:
    """Each ``conf/judge/<policy>.yaml`` names its plugin and sets only valid options."""
    config = yaml.safe_load((CONF / f"{policy}.yaml").read_text())
    assert config.pop("name") == policy
    parsed = judges.get("judge", policy).spec.parse_options(config)
    assert parsed == judges.get("judge", policy).spec.options()  # the defaults, spelt out


def test_options_are_dashed_and_misspellings_are_errors(judges: Plugins) -> None:
    strict = judges.create("judge", "strict", {"keep-assignments": ["specify", "property"]})
    assert strict.keep_assignments == ["specify", "property"]
    with pytest.raises(ConfigError, match=r"valid options: keep-assignments, quorum"):
        judges.create("judge", "strict", {"keep_assignment": []})
    with pytest.raises(ConfigError, match="threshold"):
        judges.create("judge", "majority", {"threshold": 0})
    with pytest.raises(ConfigError, match="quorum"):
        judges.create("judge", "unanimous", {"quorum": 1})


def test_context_from_attempts_lists_examiners_of_the_task() -> None:
    def attempt(name: str, role: str, assignment: str | None, task: str = "t1") -> Attempt:
        return Attempt.model_validate(
            {"task_id": task, "contestant": name, "role": role, "key": "k", "agent": "command",
             "status": AttemptStatus.FINISHED,
             "examination": {"assignment": assignment} if assignment else None}
        )  # fmt: skip

    ctx = JudgeContext.from_attempts(
        "t1",
        [
            attempt("fixer", "contestant", None),
            attempt("repro", "examiner", "reproduce"),
            attempt("spec", "examiner", "specify"),
            attempt("elsewhere", "examiner", "specify", task="t2"),
        ],
    )
    assert ctx == JudgeContext(task_id="t1", examiners={"repro": "reproduce", "spec": "specify"})


def test_a_context_for_another_task_is_an_error() -> None:
    matrix = make(["a"], {"ex/t.py::t": "FP"})
    with pytest.raises(ValueError, match="task"):
        gather(matrix, JudgeContext(task_id="other"))


# -- rule 1: a reproduction must reproduce -------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_a_test_passing_on_the_unfixed_code_is_not_evidence(judges: Plugins, policy: str) -> None:
    matrix = make(
        ["good", "bad"],
        {
            "ex/test_a.py::repro": "FPF",
            "ex/test_a.py::not_a_repro": "PFP",  # passes unfixed: a failed reproduction
            "ex/test_a.py::skipped": "SPP",  # neither fails nor errors on unfixed
        },
    )
    verdict = judge(judges, policy, matrix, context(matrix, ex="reproduce"))
    assert verdict.pick == "good"
    assert verdict.support == {"good": 1.0, "bad": 0.0}
    assert verdict.approved == ["good"]
    assert cells(verdict) == {(UNFIXED, "ex/test_a.py::repro"), ("good", "ex/test_a.py::repro")}
    assert "1/1 independent reproductions from 1 author" in verdict.reason


def test_an_error_on_the_unfixed_code_reproduces(judges: Plugins) -> None:
    matrix = make(["good"], {"ex/test_a.py::repro": "EP"})
    assert judge(judges, "unanimous", matrix).pick == "good"


def test_a_module_that_fails_to_collect_on_the_unfixed_code_reproduces(judges: Plugins) -> None:
    """A reproduction importing a name the fix adds has no outcome on the unfixed code,
    only a collection error in that column's run."""
    matrix = make(["good", "bad"], {"ex/test_new.py::uses_new_api": ".PF"})
    matrix.runs[UNFIXED] = TestRun(
        label=UNFIXED,
        status=RunStatus.COLLECTION_FAILED,
        collection_errors={"ex/test_new.py": "ImportError: cannot import name 'new_api'"},
    )
    verdict = judge(judges, "unanimous", matrix)
    assert verdict.pick == "good"
    assert verdict.cells[0].patch == UNFIXED
    assert verdict.cells[0].outcome == Outcome.ERROR


def test_a_test_that_did_not_run_on_a_patch_does_not_pass(judges: Plugins) -> None:
    matrix = make(["good", "crashed"], {"ex/test_a.py::repro": "FP."})
    verdict = judge(judges, "majority", matrix)
    assert verdict.support == {"good": 1.0, "crashed": 0.0}
    assert verdict.pick == "good"


# -- rule 2: nobody vouches for themselves --------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_a_patch_is_not_supported_by_its_own_tests(judges: Plugins, policy: str) -> None:
    matrix = make(
        ["good", "selfish"],
        {
            "ex/test_a.py::repro": "FPF",
            "selfish/test_s.py::mine": "FFP",  # passes only with its author's patch
            "good/test_g.py::mine": "FPF",
        },
    )
    verdict = judge(judges, policy, matrix, context(matrix, ex="reproduce"))
    # selfish: ex's 0/1 only; good: ex's 1/1 and selfish's 0/1 → 0.5
    assert verdict.support == {"good": 0.5, "selfish": 0.0}
    if policy in ("majority", "cross-vendor"):
        assert verdict.pick == "good"
        assert verdict.approved == ["good"]
        assert ("good", "good/test_g.py::mine") not in cells(verdict)
        assert ("good", "selfish/test_s.py::mine") in cells(verdict)
    else:  # good fails selfish's reproduction
        assert verdict.pick is None
        assert verdict.approved == []


@pytest.mark.parametrize("policy", POLICIES)
def test_abstains_without_any_independent_reproduction(judges: Plugins, policy: str) -> None:
    matrix = make(
        ["solo", "other"],
        {
            "solo/test_s.py::mine": "FPF",
            "other/test_o.py::mine": "FFP",
            "ex/test_e.py::passes_already": "PPP",
        },
    )
    # solo's test supports only other's patch (0/1), and the reverse: each has support 0
    verdict = judge(judges, policy, matrix)
    assert verdict.pick is None
    assert verdict.approved == []
    lone = make(["solo"], {"solo/test_s.py::mine": "FP", "suite/test_x.py::old": "PP"})
    verdict = judge(judges, policy, lone)
    assert verdict.pick is None
    assert verdict.support == {"solo": 0.0}
    assert verdict.reason.startswith("abstained: no patch has an independent reproduction")
    assert verdict.cells == []


def test_the_repository_suite_never_supports_a_patch(judges: Plugins) -> None:
    """A suite test failing on the unfixed code is a pre-existing failure, not a reproduction."""
    matrix = make(["lucky"], {"suite/test_x.py::flaky": "FP"})
    verdict = judge(judges, "majority", matrix)
    assert verdict.pick is None
    assert verdict.support == {"lucky": 0.0}


# -- rule 3: breaking something needs a quorum ----------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_a_breakage_most_other_patches_avoid_counts(judges: Plugins, policy: str) -> None:
    matrix = make(
        ["breaker", "b", "c"],
        {
            "ex/test_e.py::repro": "FPPP",
            "suite/test_x.py::kept": "PFPP",  # both others keep it: confirmed
        },
    )
    verdict = judge(judges, policy, matrix)
    assert verdict.approved == ["b", "c"]
    assert verdict.support == {"breaker": 1.0, "b": 1.0, "c": 1.0}
    assert verdict.pick == "b"  # b and c pass and fail the same tests: first by name
    assert "chosen by name" in verdict.reason


def test_a_breakage_most_other_patches_share_is_excused(judges: Plugins) -> None:
    matrix = make(
        ["a", "b", "c"],
        {
            "ex/test_e.py::repro": "FPPP",
            "suite/test_x.py::changed": "PFFP",  # a and b change it, c keeps it
        },
    )
    verdict = judge(judges, "majority", matrix)
    # for a: of b and c only c keeps it, 1 of 2 is no strict majority: excused
    assert verdict.approved == ["a", "b", "c"]
    # all equally supported: c, changing the fewest repository tests, is preferred
    assert verdict.pick == "c"
    assert ("c", "suite/test_x.py::changed") not in cells(verdict)

    evidence = gather(matrix, context(matrix))
    breakage = evidence.patches["a"].breakages[0]
    assert (breakage.test, breakage.kept_by, breakage.others) == ("suite/test_x.py::changed", 1, 2)
    assert not breakage.confirmed


def test_an_excused_breakage_is_named_in_the_pick(judges: Plugins) -> None:
    matrix = make(
        ["a", "b", "c"],
        {
            "ex/test_e.py::repro": "FPFF",
            "suite/test_x.py::changed": "PFFF",  # nobody keeps it: the issue asked for it
        },
    )
    verdict = judge(judges, "unanimous", matrix)
    assert verdict.pick == "a"
    assert "changes 1 repository test most other patches change too" in verdict.reason
    assert ("a", "suite/test_x.py::changed") in cells(verdict)
    assert (UNFIXED, "suite/test_x.py::changed") in cells(verdict)


def test_the_quorum_option_sets_how_many_others_must_keep_a_test(judges: Plugins) -> None:
    matrix = make(
        ["a", "b", "c", "d"],
        {
            "ex/test_e.py::repro": "FPPPP",
            "suite/test_x.py::t": "PFFPP",  # for a: 2 of 3 others keep it
        },
    )
    assert "a" not in judge(judges, "majority", matrix).approved
    assert "a" in judge(judges, "majority", matrix, quorum=0.7).approved


def test_a_lone_patch_that_breaks_a_repository_test_is_rejected(judges: Plugins) -> None:
    """With no other patch, nobody can show the issue asked for the change."""
    matrix = make(["lone"], {"ex/test_e.py::repro": "FP", "suite/test_x.py::t": "PF"})
    verdict = judge(judges, "majority", matrix)
    assert verdict.pick is None
    assert "breaks 1 repository test" in verdict.reason
    assert cells(verdict) >= {("lone", "suite/test_x.py::t"), (UNFIXED, "suite/test_x.py::t")}


def test_a_suite_test_failing_on_the_unfixed_code_cannot_be_broken(judges: Plugins) -> None:
    matrix = make(["a"], {"ex/test_e.py::repro": "FP", "suite/test_x.py::t": "FF"})
    assert judge(judges, "strict", matrix).pick == "a"


# -- rule 4: abstain rather than guess ------------------------------------------------------


@pytest.mark.parametrize("policy", ["majority", "cross-vendor"])
def test_abstains_on_a_tie_between_patches_that_differ(judges: Plugins, policy: str) -> None:
    matrix = make(
        ["a", "b"],
        {"ex/test_e.py::one": "FPF", "ex/test_e.py::two": "FFP"},
    )
    verdict = judge(judges, policy, matrix)
    assert verdict.pick is None
    assert verdict.approved == ["a", "b"]
    assert verdict.support == {"a": 0.5, "b": 0.5}
    assert verdict.reason == (
        "abstained: 'a' and 'b' are approved with equal support (0.50) but differ on 2 tests "
        "(e.g. 'ex/test_e.py::one')"
    )
    assert cells(verdict) == {
        (column, f"ex/test_e.py::{test}")
        for column in (UNFIXED, "a", "b")
        for test in ("one", "two")
    }


def test_higher_support_wins_over_a_tie(judges: Plugins) -> None:
    matrix = make(
        ["a", "b", "best"],
        {"ex/test_e.py::one": "FPFP", "ex/test_e.py::two": "FFPP"},
    )
    verdict = judge(judges, "majority", matrix)
    assert verdict.approved == ["a", "b", "best"]
    assert verdict.pick == "best"


def test_two_patches_no_test_tells_apart_are_picked_by_name(judges: Plugins) -> None:
    """Both right, each vouching for the other: a pick, not an abstention."""
    matrix = make(
        ["zeta", "alpha"],
        {
            "zeta/test_z.py::repro": "FPP",
            "alpha/test_a.py::repro": "FPP",
            "ex/test_e.py::repro": "FPP",
        },
    )
    verdict = judge(judges, "unanimous", matrix)
    assert verdict.pick == "alpha"
    assert verdict.approved == ["zeta", "alpha"]
    assert "no test the rules read tells it from 'zeta'; chosen by name" in verdict.reason
    assert "passes 2/2 independent reproductions from 2 authors" in verdict.reason
    assert ("alpha", "alpha/test_a.py::repro") not in cells(verdict)


def test_no_patch_at_all(judges: Plugins) -> None:
    matrix = make([], {"ex/test_e.py::repro": "F"})
    verdict = judge(judges, "majority", matrix)
    assert verdict.pick is None
    assert verdict.support == {}
    assert verdict.reason == "abstained: no patch to judge"
