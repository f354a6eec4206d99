"""Each judge policy on hand-built matrices: majority, unanimous, strict and cross-vendor where
they differ."""

from __future__ import annotations

from bugbout.core.contract.manager import Plugins
from bugbout.core.store.verdict_records import UNFIXED
from judge_matrices import cells, context, judge, make


def test_majority_and_unanimous_disagree_on_a_partial_fix(judges: Plugins) -> None:
    matrix = make(
        ["partial", "wrong"],
        {"ex/test_e.py::one": "FPF", "ex/test_e.py::two": "FFF"},
    )
    majority = judge(judges, "majority", matrix)
    assert majority.pick == "partial"
    assert majority.support == {"partial": 0.5, "wrong": 0.0}
    unanimous = judge(judges, "unanimous", matrix)
    assert unanimous.pick is None
    assert unanimous.approved == []
    assert unanimous.support == majority.support
    assert "does not pass 1 independent reproduction" in unanimous.reason
    # the abstention rests on the best candidate's reproductions
    assert cells(unanimous) == {
        (column, f"ex/test_e.py::{test}")
        for column in (UNFIXED, "partial")
        for test in ("one", "two")
    }
    assert judge(judges, "majority", matrix, threshold=0.75).pick is None


def test_support_averages_over_authors_not_tests(judges: Plugins) -> None:
    matrix = make(
        ["p"],
        {
            "many/test_m.py::a": "FP",
            "many/test_m.py::b": "FP",
            "many/test_m.py::c": "FP",
            "few/test_f.py::a": "FF",
        },
    )
    # many: 3/3, few: 0/1 → 0.5 (not 3/4)
    verdict = judge(judges, "majority", matrix)
    assert verdict.support == {"p": 0.5}
    assert verdict.pick == "p"
    assert "passes 3/4 independent reproductions from 2 authors (support 0.50)" in verdict.reason


SPEC_MATRIX = {
    "spec/test_s.py::the_bug": "FPP",
    "spec/test_s.py::nearby_behaviour": "PFP",  # bold breaks behaviour the issue keeps
    "repro/test_r.py::the_bug": "FPP",
    "repro/test_r.py::not_a_repro": "PFF",  # a failed reproduction: never evidence
}


def test_strict_rejects_a_patch_breaking_a_specify_examiners_passing_test(
    judges: Plugins,
) -> None:
    matrix = make(["bold", "tidy"], SPEC_MATRIX)
    ctx = context(matrix, spec="specify", repro="reproduce")
    unanimous = judge(judges, "unanimous", matrix, ctx)
    assert unanimous.approved == ["bold", "tidy"]
    assert unanimous.pick == "bold"  # no test unanimous reads tells them apart
    strict = judge(judges, "strict", matrix, ctx)
    assert strict.approved == ["tidy"]
    assert strict.pick == "tidy"
    assert "keeps the examiners' specification test" in strict.reason
    assert strict.support == unanimous.support == {"bold": 1.0, "tidy": 1.0}


def test_strict_without_quorum_and_only_for_keep_assignments(judges: Plugins) -> None:
    matrix = make(["bold", "tidy", "also-bold"], {**{k: v + v[1] for k, v in SPEC_MATRIX.items()}})
    ctx = context(matrix, spec="specify", repro="reproduce")
    # most patches break spec's nearby test: still a breakage for strict (no quorum)
    assert judge(judges, "strict", matrix, ctx).approved == ["tidy"]
    verdict = judge(judges, "strict", matrix, ctx, **{"keep-assignments": []})
    assert verdict.approved == ["bold", "tidy", "also-bold"]
    # an examiner judge does not know the assignment of is not a keep-examiner
    assert judge(judges, "strict", matrix, context(matrix)).approved == [
        "bold",
        "tidy",
        "also-bold",
    ]


def test_strict_abstains_when_every_patch_breaks_the_specification(judges: Plugins) -> None:
    matrix = make(["bold"], {k: v[:2] for k, v in SPEC_MATRIX.items()})
    verdict = judge(judges, "strict", matrix, context(matrix, spec="specify", repro="reproduce"))
    assert verdict.pick is None
    assert "breaks 1 examiner specification test" in verdict.reason
    assert ("bold", "spec/test_s.py::nearby_behaviour") in cells(verdict)


def test_cross_vendor_ignores_support_from_the_patchs_own_vendor(judges: Plugins) -> None:
    matrix = make(
        ["gpt", "claude"],
        {"openai-ex/test_o.py::repro": "FPF", "anthropic-ex/test_a.py::repro": "FFF"},
        vendors={"gpt": "openai", "claude": "Anthropic", "openai-ex": "OpenAI",
                 "anthropic-ex": "anthropic"},
    )  # fmt: skip
    majority = judge(judges, "majority", matrix)
    assert majority.pick == "gpt"
    assert majority.support == {"gpt": 0.5, "claude": 0.0}
    cross = judge(judges, "cross-vendor", matrix)
    assert cross.pick is None
    assert cross.support == {"gpt": 0.0, "claude": 0.0}
    assert cross.reason.startswith("abstained: no patch is approved")


def test_cross_vendor_takes_support_from_other_and_unknown_vendors(judges: Plugins) -> None:
    matrix = make(
        ["gpt", "claude"],
        {
            "openai-ex/test_o.py::repro": "FPF",
            "anthropic-ex/test_a.py::repro": "FPF",
            "scripted/test_s.py::repro": "FPF",
        },
        vendors={"gpt": "openai", "claude": "anthropic", "openai-ex": "openai",
                 "anthropic-ex": "anthropic", "scripted": None},
    )  # fmt: skip
    verdict = judge(judges, "cross-vendor", matrix)
    assert verdict.pick == "gpt"
    assert verdict.support == {"gpt": 1.0, "claude": 0.0}
    assert ("gpt", "openai-ex/test_o.py::repro") not in cells(verdict)
    assert ("gpt", "anthropic-ex/test_a.py::repro") in cells(verdict)
    assert ("gpt", "scripted/test_s.py::repro") in cells(verdict)


def test_cross_vendor_abstains_when_only_one_vendor_wrote_reproductions(judges: Plugins) -> None:
    matrix = make(
        ["gpt"],
        {"openai-ex/test_o.py::repro": "FP"},
        vendors={"gpt": "openai", "openai-ex": "openai"},
    )
    assert judge(judges, "majority", matrix).pick == "gpt"
    verdict = judge(judges, "cross-vendor", matrix)
    assert verdict.pick is None
    assert verdict.reason == (
        "abstained: no patch has an independent reproduction "
        "(a test by another vendor that fails on the unfixed code)"
    )
