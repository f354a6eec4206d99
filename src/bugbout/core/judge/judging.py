"""Judging: picking one patch per task, or abstaining, from the cross-examination matrix.

A judge never runs anything and never asks a model: it reads executed outcomes. Every
policy shares one computation of the evidence (:func:`gather`), which applies the four
rules, and one way of turning approvals into a verdict (:func:`decide`); a policy only
says which patches it approves (:meth:`EvidenceJudge.objection`).

The rules that make the evidence are in :mod:`bugbout.core.judge.judge_evidence`.

**The pick** is the approved patch with the highest support; among equals, the one that
breaks the fewest ``SUITE`` tests (excused breakages, since approved patches have no
confirmed one). Patches still tied are compared on every test the rules read (every
reproduction, every ``SUITE`` test passing on ``UNFIXED``, every keep-test): if they pass
and fail exactly the same ones, no executed test tells them apart and the first by name
is picked (the reason says so); if they differ anywhere, the judge abstains, since
choosing would be a guess.

A :class:`~bugbout.core.store.verdict_records.Verdict` lists every patch the policy approves
on its own (``approved``, the merge-gate view), every patch's support, and the cells it rests on:
for the pick, or for the best candidates when abstaining, each independent reproduction
on ``UNFIXED`` and on the patch, and each ``SUITE`` test (or keep-test) the patch breaks,
on ``UNFIXED`` and on the patch; for a tie, also the cells where the tied patches differ.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Protocol, runtime_checkable

from bugbout.core.judge.judge_evidence import (
    JudgeContext,
    MatrixEvidence,
    PatchEvidence,
    gather,
    outcome_of,
    passes,
)
from bugbout.core.judge.judge_policy import (
    DEFAULT_KEEP_ASSIGNMENTS,
    EvidenceJudge,
    JudgeOptions,
    KeepOptions,
    ThresholdJudge,
    ThresholdOptions,
    breakage_objection,
    example,
    keep_objection,
    plural,
    threshold_objection,
    unanimous_objection,
)
from bugbout.core.store.verdict_records import UNFIXED, Cell, Matrix, Verdict

__all__ = [  # the judge plugin's API: the evidence and the policies'
    # base are re-exported from where they are made
    "DEFAULT_KEEP_ASSIGNMENTS",
    "EvidenceJudge",
    "Judge",
    "JudgeContext",
    "JudgeOptions",
    "KeepOptions",
    "MatrixEvidence",
    "PatchEvidence",
    "ThresholdJudge",
    "ThresholdOptions",
    "breakage_objection",
    "cells_for",
    "decide",
    "gather",
    "keep_objection",
    "outcome_of",
    "threshold_objection",
    "unanimous_objection",
]


@runtime_checkable
class Judge(Protocol):
    """What a judge plugin's factory returns."""

    name: str

    def judge(self, matrix: Matrix, context: JudgeContext) -> Verdict:
        """Pick one of ``matrix``'s patches, or abstain, and say why."""
        ...


# -- the decision -------------------------------------------------------------------------


def cells_for(evidence: MatrixEvidence, patch: str) -> list[Cell]:
    """The cells a decision about ``patch`` rests on: its independent reproductions and the
    tests it breaks, each on ``UNFIXED`` and on the patch."""
    matrix = evidence.matrix
    found = evidence.patches[patch]
    tests = [t for author in found.support for t in (*author.passed, *author.failed)]
    tests += [b.test for b in found.breakages]
    tests += found.broken_keeps
    return [
        Cell(
            patch=column,
            test=test,
            outcome=outcome_of(matrix, column, test),
            tampered=column in evidence.tampered,
        )
        for test in tests
        for column in (UNFIXED, patch)
    ]


def _differences(evidence: MatrixEvidence, patches: Sequence[str]) -> list[str]:
    """The tests the rules read on which ``patches`` do not all pass or all fail."""
    matrix = evidence.matrix
    return [
        test
        for test in evidence.tests()
        if len({passes(outcome_of(matrix, p, test)) for p in patches}) > 1
    ]


def _unique(cells: Iterable[Cell]) -> list[Cell]:
    seen: dict[tuple[str, str], Cell] = {}
    for cell in cells:
        seen.setdefault((cell.patch, cell.test), cell)
    return list(seen.values())


def _no_support_reason(evidence: MatrixEvidence) -> str:
    other = "vendor" if evidence.separate_vendors else "author"
    return (
        "abstained: no patch has an independent reproduction (a test by another "
        f"{other} that fails on the unfixed code)"
    )


def _pick_reason(evidence: MatrixEvidence, found: PatchEvidence, twins: Sequence[str]) -> str:
    parts = [f"picked {found.patch!r}: {found.summary()}"]
    if found.excused:
        parts.append(
            f"changes {plural(len(found.excused), 'repository test')} most other patches "
            "change too, and breaks none that others keep"
        )
    else:
        parts.append("breaks no repository test others keep")
    keeps = sum(len(tests) for tests in evidence.keeps.values())
    if keeps:
        parts.append(
            "keeps the examiners' specification test"
            if keeps == 1
            else f"keeps all {keeps} of the examiners' specification tests"
        )
    if twins:
        names = " or ".join(repr(t) for t in twins)
        parts.append(f"no test the rules read tells it from {names}; chosen by name")
    return "; ".join(parts)


def decide(
    evidence: MatrixEvidence, *, policy: str, objection: Callable[[PatchEvidence], str | None]
) -> Verdict:
    """The verdict from ``evidence``: ``objection(patch)`` is the policy's reason to reject
    a patch, ``None`` when it approves it."""
    matrix = evidence.matrix
    patches = evidence.patches
    support = {name: round(found.score, 4) for name, found in patches.items()}
    objections = {name: objection(found) for name, found in patches.items()}
    approved = [name for name, why in objections.items() if why is None]

    left_out = ", ".join(repr(name) for name in evidence.tampered if name != UNFIXED)

    def verdict(
        reason: str, cells: Iterable[Cell], pick: str | None = None, *, note: bool = True
    ) -> Verdict:
        if left_out and note:
            reason += f"; left out as tampered: {left_out}"
        return Verdict(
            task_id=matrix.task_id,
            policy=policy,
            pick=pick,
            reason=reason,
            approved=approved,
            support=support,
            cells=_unique(cells),
            tampered=evidence.tampered,
        )

    def rank(name: str) -> tuple[Fraction, int]:
        return (-patches[name].exact_score, len(patches[name].breakages))

    if UNFIXED in evidence.tampered:
        return verdict(
            "abstained: the run of the unfixed code was tampered with (a test meddles with "
            "pytest), so no reproduction can be trusted",
            [],
        )
    if not patches:
        if left_out:
            return verdict(
                f"abstained: every patch tampered with its run ({left_out})", [], note=False
            )
        return verdict("abstained: no patch to judge", [])
    if not approved:
        best_score = max(found.exact_score for found in patches.values())
        best = [name for name, found in patches.items() if found.exact_score == best_score]
        cells = [cell for name in best for cell in cells_for(evidence, name)]
        if all(found.reproductions == 0 for found in patches.values()):
            return verdict(_no_support_reason(evidence), cells)
        lead = min(best, key=lambda name: (rank(name), name))
        others = len(best) - 1
        also = f" (tied with {plural(others, 'other')})" if others else ""
        return verdict(
            f"abstained: no patch is approved; the best, {lead!r}{also}, "
            f"{patches[lead].summary()} but {objections[lead]}",
            cells,
        )
    top = min(rank(name) for name in approved)
    tied = sorted(name for name in approved if rank(name) == top)
    differences = _differences(evidence, tied) if len(tied) > 1 else []
    if differences:
        cells = [cell for name in tied for cell in cells_for(evidence, name)]
        cells += [
            Cell(patch=name, test=test, outcome=outcome_of(matrix, name, test))
            for test in differences
            for name in tied
        ]
        names = ", ".join(repr(name) for name in tied[:-1]) + f" and {tied[-1]!r}"
        breaking = f", each changing {plural(top[1], 'repository test')}," if top[1] else ""
        return verdict(
            f"abstained: {names} are approved with equal support ({float(-top[0]):.2f})"
            f"{breaking} but differ on {plural(len(differences), 'test')}"
            f"{example(differences)}",
            cells,
        )
    pick = tied[0]
    return verdict(_pick_reason(evidence, patches[pick], tied[1:]), cells_for(evidence, pick), pick)
