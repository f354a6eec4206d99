"""Judging: picking one patch per task, or abstaining, from the cross-examination matrix.

A judge never runs anything and never asks a model: it reads executed outcomes. Every
policy shares one computation of the evidence (:func:`gather`), which applies the four
rules, and one way of turning approvals into a verdict (:func:`decide`); a policy only
says which patches it approves (:meth:`EvidenceJudge.objection`).

The rules, as implemented:

1. *A reproduction must reproduce.* A test is a reproduction when its outcome on the
   ``UNFIXED`` column is ``failed`` or ``error`` (a test whose module does not even import
   on the unfixed code, recorded as a collection error of that column's run, counts as
   ``error``). Only contestants' and examiners' tests can be reproductions: the
   repository's own tests (``SUITE``) that fail on the unfixed code are failures that were
   already there, not evidence about this bug.
2. *Nobody vouches for themselves.* A patch's support comes only from authors other than
   the contestant who wrote it (author name == patch name is excluded); ``cross-vendor``
   also excludes every author of the patch's vendor (vendors compared case-insensitively;
   an unknown vendor matches no one).
3. *Breaking something needs a quorum.* A ``SUITE`` test that passes on ``UNFIXED`` and
   does not pass with a patch (any other outcome, or none) is a *breakage*. It counts
   against the patch (is *confirmed*) only when more than ``quorum`` (default: half) of
   the other patch columns keep it passing; otherwise most patches change it, so the issue
   probably asked for the change, and it is *excused*. With no other patch there is no
   one to excuse it: a breakage by a lone patch counts.
4. *Abstain rather than guess.* A patch without a single independent reproduction is
   never approved, and when no patch is approved there is no pick.
5. *A tampered run proves nothing.* A patch whose column's run is ``tampered`` (its
   canaries or outcome stream show the code under test meddled with the outcomes, or its
   source is flagged: :mod:`bugbout.core.tamper`) is no candidate, and its column counts
   for nobody's quorum: it is listed in the verdict's ``tampered`` with the reasons, and
   never picked. When the ``UNFIXED`` column itself is tampered (a test meddles), no
   reproduction can be trusted and every policy abstains.

A patch's **support** is, for each independent author with at least one reproduction,
the fraction of that author's reproductions the patch makes pass (outcome ``passed``),
averaged over those authors (0 when there are none). Approval is the policy's:
``majority``/``cross-vendor`` need support of at least ``threshold``; ``unanimous`` and
``strict`` need every independent reproduction to pass; all need no confirmed breakage;
``strict`` also needs the patch to keep passing every test that a *keep-assignment*
examiner (``specify`` by default) wrote and that passes on ``UNFIXED``: those specify
behaviour the issue does not ask to change, so no quorum excuses breaking them. Tests
passing on ``UNFIXED`` that a ``reproduce`` examiner wrote are failed reproductions, not
evidence of anything (rule 1), and never count.

**The pick** is the approved patch with the highest support; among equals, the one that
breaks the fewest ``SUITE`` tests (excused breakages, since approved patches have no
confirmed one). Patches still tied are compared on every test the rules read (every
reproduction, every ``SUITE`` test passing on ``UNFIXED``, every keep-test): if they pass
and fail exactly the same ones, no executed test tells them apart and the first by name
is picked (the reason says so); if they differ anywhere, the judge abstains, since
choosing would be a guess.

A :class:`~bugbout.core.records.Verdict` lists every patch the policy approves on its own
(``approved``, the merge-gate view), every patch's support, and the cells it rests on:
for the pick, or for the best candidates when abstaining, each independent reproduction
on ``UNFIXED`` and on the patch, and each ``SUITE`` test (or keep-test) the patch breaks,
on ``UNFIXED`` and on the patch; for a tie, also the cells where the tied patches differ.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from bugbout.core.records import (
    SUITE,
    UNFIXED,
    Attempt,
    Cell,
    Matrix,
    Outcome,
    Record,
    RunStatus,
    Verdict,
)

FAILING = (Outcome.FAILED, Outcome.ERROR)
"""Outcomes on ``UNFIXED`` that make a test a reproduction."""

DEFAULT_KEEP_ASSIGNMENTS = ("specify",)
"""Examiner assignments whose tests passing on ``UNFIXED`` ``strict`` requires kept."""


class JudgeContext(Record):
    """What a judge needs besides the matrix: who the examiners are."""

    task_id: str
    examiners: dict[str, str] = Field(default_factory=dict)
    """Each examiner author's name → its assignment (``reproduce``, ``specify``)."""

    @classmethod
    def from_attempts(cls, task_id: str, attempts: Iterable[Attempt]) -> JudgeContext:
        """The context of ``task_id`` from its attempts (other tasks' are ignored)."""
        return cls(
            task_id=task_id,
            examiners={
                attempt.contestant: attempt.assignment or "reproduce"
                for attempt in attempts
                if attempt.task_id == task_id and attempt.role == "examiner"
            },
        )


@runtime_checkable
class Judge(Protocol):
    """What a judge plugin's factory returns."""

    name: str

    def judge(self, matrix: Matrix, context: JudgeContext) -> Verdict:
        """Pick one of ``matrix``'s patches, or abstain, and say why."""
        ...


def _dashed(name: str) -> str:
    return name.replace("_", "-")


class JudgeOptions(BaseModel):
    """Options every built-in policy takes."""

    model_config = ConfigDict(extra="forbid", alias_generator=_dashed, populate_by_name=True)

    quorum: float = Field(default=0.5, ge=0.0, lt=1.0)
    """A broken repository test counts against a patch when more than this fraction of
    the other patches keep it passing (0.5: a strict majority)."""


class ThresholdOptions(JudgeOptions):
    """Options of the policies that approve on average support."""

    threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    """The least support (average fraction of independent reproductions passed) a patch
    needs to be approved."""


# -- the evidence -------------------------------------------------------------------------


def outcome_of(matrix: Matrix, patch: str, test: str) -> Outcome | None:
    """``test``'s executed outcome with ``patch``; ``error`` when its module failed to
    collect in that column's run; ``None`` when it did not run."""
    recorded = matrix.outcome(patch, test)
    if recorded is not None:
        return recorded
    run = matrix.runs.get(patch)
    if run is not None and run.collection_errors:
        module = test.split("::", 1)[0]
        for nodeid in run.collection_errors:
            if nodeid and (module == nodeid or module.startswith(nodeid.rstrip("/") + "/")):
                return Outcome.ERROR
    return None


def _passes(outcome: Outcome | None) -> bool:
    return outcome == Outcome.PASSED


def _same_vendor(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip().lower() == b.strip().lower()


@dataclass(frozen=True)
class AuthorSupport:
    """One independent author's reproductions, split by what a patch does to them."""

    author: str
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    """Reproductions the patch does not make pass (any outcome but ``passed``, or none)."""

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed)

    @property
    def fraction(self) -> Fraction:
        return Fraction(len(self.passed), self.total)


@dataclass(frozen=True)
class Breakage:
    """A ``SUITE`` test passing on ``UNFIXED`` that a patch does not keep passing."""

    test: str
    kept_by: int
    """How many other patches keep it passing."""
    others: int
    """How many other patches there are."""
    confirmed: bool
    """Whether it counts against the patch (rule 3)."""


@dataclass(frozen=True)
class PatchEvidence:
    """Everything the rules say about one patch."""

    patch: str
    vendor: str | None
    support: tuple[AuthorSupport, ...]
    """Per independent author with at least one reproduction, by author name."""
    breakages: tuple[Breakage, ...]
    broken_keeps: tuple[str, ...] = ()
    """Keep-tests (examiners' tests passing on ``UNFIXED``) the patch does not keep."""

    @property
    def exact_score(self) -> Fraction:
        """The average, over independent authors, of the fraction of their reproductions
        passed; 0 without any. Exact, so equal supports compare equal."""
        if not self.support:
            return Fraction(0)
        return sum((author.fraction for author in self.support), Fraction(0)) / len(self.support)

    @property
    def score(self) -> float:
        return float(self.exact_score)

    @property
    def reproductions(self) -> int:
        return sum(author.total for author in self.support)

    @property
    def passed(self) -> int:
        return sum(len(author.passed) for author in self.support)

    @property
    def unanimous(self) -> bool:
        """At least one independent reproduction, and every one passes."""
        return self.reproductions > 0 and self.passed == self.reproductions

    @property
    def confirmed(self) -> tuple[Breakage, ...]:
        return tuple(b for b in self.breakages if b.confirmed)

    @property
    def excused(self) -> tuple[Breakage, ...]:
        return tuple(b for b in self.breakages if not b.confirmed)

    def summary(self) -> str:
        """``passes 2/3 independent reproductions from 2 authors (support 0.75)``."""
        authors = len(self.support)
        return (
            f"passes {self.passed}/{self.reproductions} independent reproductions from "
            f"{authors} author{'s' if authors != 1 else ''} (support {self.score:.2f})"
        )


@dataclass(frozen=True)
class Evidence:
    """The rules applied to one matrix, for every patch."""

    matrix: Matrix
    reproductions: dict[str, tuple[str, ...]]
    """Each non-suite author's tests that fail on ``UNFIXED`` (rule 1)."""
    suite: tuple[str, ...]
    """``SUITE`` tests that pass on ``UNFIXED``: the ones a patch can break."""
    keeps: dict[str, tuple[str, ...]]
    """Each keep-assignment examiner's tests that pass on ``UNFIXED``."""
    patches: dict[str, PatchEvidence] = field(default_factory=dict)
    """By patch name, in the matrix's order (``UNFIXED`` is not a candidate)."""
    separate_vendors: bool = False
    tampered: dict[str, list[str]] = field(default_factory=dict)
    """Columns whose run was tampered with (``UNFIXED`` too), and why: no candidates."""

    def tests(self) -> list[str]:
        """Every test the rules read, each once."""
        seen: dict[str, None] = {}
        for tests in self.reproductions.values():
            seen.update(dict.fromkeys(tests))
        seen.update(dict.fromkeys(self.suite))
        for tests in self.keeps.values():
            seen.update(dict.fromkeys(tests))
        return list(seen)


def gather(
    matrix: Matrix,
    context: JudgeContext,
    *,
    quorum: float = 0.5,
    separate_vendors: bool = False,
    keep_assignments: Sequence[str] = (),
) -> Evidence:
    """Apply the four rules to ``matrix``: reproductions, independent support, breakages
    (and, with ``keep_assignments``, broken examiner keep-tests) for every patch."""
    if context.task_id != matrix.task_id:
        raise ValueError(
            f"the judge context is for task {context.task_id!r}, the matrix for {matrix.task_id!r}"
        )
    reproductions = {
        author: tuple(t for t in tests if outcome_of(matrix, UNFIXED, t) in FAILING)
        for author, tests in matrix.authors.items()
        if author != SUITE
    }
    suite = tuple(
        t for t in matrix.authors.get(SUITE, []) if _passes(outcome_of(matrix, UNFIXED, t))
    )
    keeps = {
        author: tuple(t for t in tests if _passes(outcome_of(matrix, UNFIXED, t)))
        for author, tests in matrix.authors.items()
        if author != SUITE and context.examiners.get(author) in keep_assignments
    }
    tampered = tampered_columns(matrix)
    candidates = [p for p in dict.fromkeys(matrix.patches) if p != UNFIXED and p not in tampered]
    if UNFIXED in tampered:
        candidates = []  # no reproduction can be trusted: nothing to judge
    evidence = Evidence(
        matrix, reproductions, suite, keeps, separate_vendors=separate_vendors, tampered=tampered
    )
    for patch in candidates:
        vendor = matrix.vendors.get(patch)
        support = []
        for author, tests in reproductions.items():
            if author == patch or not tests:
                continue
            if separate_vendors and _same_vendor(matrix.vendors.get(author), vendor):
                continue
            passing = tuple(t for t in tests if _passes(outcome_of(matrix, patch, t)))
            failing = tuple(t for t in tests if t not in passing)
            support.append(AuthorSupport(author, passing, failing))
        others = [p for p in candidates if p != patch]
        breakages = []
        for test in suite:
            if _passes(outcome_of(matrix, patch, test)):
                continue
            kept_by = sum(_passes(outcome_of(matrix, other, test)) for other in others)
            confirmed = kept_by > quorum * len(others) if others else True
            breakages.append(Breakage(test, kept_by, len(others), confirmed))
        broken_keeps = tuple(
            test
            for author, tests in keeps.items()
            if author != patch
            for test in tests
            if not _passes(outcome_of(matrix, patch, test))
        )
        evidence.patches[patch] = PatchEvidence(
            patch, vendor, tuple(support), tuple(breakages), broken_keeps
        )
    return evidence


def tampered_columns(matrix: Matrix) -> dict[str, list[str]]:
    """Every column whose run is ``tampered``, with the reasons (rule 5)."""
    return {
        name: list(run.tampering) or ["its run was tampered with"]
        for name, run in matrix.runs.items()
        if run.status == RunStatus.TAMPERED
    }


# -- the decision -------------------------------------------------------------------------


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _example(tests: Sequence[str]) -> str:
    return f" (e.g. {tests[0]!r})" if tests else ""


def breakage_objection(patch: PatchEvidence) -> str | None:
    """Why rule 3 rejects ``patch`` (a confirmed breakage), or ``None``."""
    confirmed = [b.test for b in patch.confirmed]
    if confirmed:
        return (
            f"breaks {_plural(len(confirmed), 'repository test')} most other patches keep "
            f"passing{_example(confirmed)}"
        )
    return None


def keep_objection(patch: PatchEvidence) -> str | None:
    """Why ``strict`` rejects ``patch`` for breaking examiners' keep-tests, or ``None``."""
    if patch.broken_keeps:
        return (
            f"breaks {_plural(len(patch.broken_keeps), 'examiner specification test')}"
            f"{_example(patch.broken_keeps)}"
        )
    return None


def cells_for(evidence: Evidence, patch: str) -> list[Cell]:
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


def _differences(evidence: Evidence, patches: Sequence[str]) -> list[str]:
    """The tests the rules read on which ``patches`` do not all pass or all fail."""
    matrix = evidence.matrix
    return [
        test
        for test in evidence.tests()
        if len({_passes(outcome_of(matrix, p, test)) for p in patches}) > 1
    ]


def _unique(cells: Iterable[Cell]) -> list[Cell]:
    seen: dict[tuple[str, str], Cell] = {}
    for cell in cells:
        seen.setdefault((cell.patch, cell.test), cell)
    return list(seen.values())


def _no_support_reason(evidence: Evidence) -> str:
    other = "vendor" if evidence.separate_vendors else "author"
    return (
        "abstained: no patch has an independent reproduction (a test by another "
        f"{other} that fails on the unfixed code)"
    )


def _pick_reason(evidence: Evidence, found: PatchEvidence, twins: Sequence[str]) -> str:
    parts = [f"picked {found.patch!r}: {found.summary()}"]
    if found.excused:
        parts.append(
            f"changes {_plural(len(found.excused), 'repository test')} most other patches "
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
    evidence: Evidence, *, policy: str, objection: Callable[[PatchEvidence], str | None]
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
        also = f" (tied with {_plural(others, 'other')})" if others else ""
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
        breaking = f", each changing {_plural(top[1], 'repository test')}," if top[1] else ""
        return verdict(
            f"abstained: {names} are approved with equal support ({float(-top[0]):.2f})"
            f"{breaking} but differ on {_plural(len(differences), 'test')}"
            f"{_example(differences)}",
            cells,
        )
    pick = tied[0]
    return verdict(_pick_reason(evidence, patches[pick], tied[1:]), cells_for(evidence, pick), pick)


class EvidenceJudge:
    """Base of the built-in policies: gather the evidence, then approve or object."""

    name: ClassVar[str] = ""
    separate_vendors: ClassVar[bool] = False
    """Whether an author's tests may not support patches of its own vendor."""

    def __init__(self, options: JudgeOptions | None = None) -> None:
        self.options = options or JudgeOptions()

    @property
    def keep_assignments(self) -> Sequence[str]:
        """Examiner assignments whose passing-on-base tests a patch must keep."""
        return ()

    def gather(self, matrix: Matrix, context: JudgeContext) -> Evidence:
        return gather(
            matrix,
            context,
            quorum=self.options.quorum,
            separate_vendors=self.separate_vendors,
            keep_assignments=self.keep_assignments,
        )

    def objection(self, patch: PatchEvidence) -> str | None:
        """Why the policy does not approve ``patch``; ``None`` when it does."""
        raise NotImplementedError

    def judge(self, matrix: Matrix, context: JudgeContext) -> Verdict:
        return decide(self.gather(matrix, context), policy=self.name, objection=self.objection)


def threshold_objection(patch: PatchEvidence, threshold: float) -> str | None:
    """``majority``'s objection: no independent reproduction, too little support, or a
    confirmed breakage."""
    if patch.reproductions == 0:
        return "has no independent reproduction"
    if patch.exact_score < Fraction(str(threshold)):
        return f"its support is below {threshold:.2f}"
    return breakage_objection(patch)


def unanimous_objection(patch: PatchEvidence) -> str | None:
    """``unanimous``'s objection: an independent reproduction that does not pass, or a
    confirmed breakage."""
    if patch.reproductions == 0:
        return "has no independent reproduction"
    if not patch.unanimous:
        failing = [t for author in patch.support for t in author.failed]
        return (
            f"does not pass {_plural(len(failing), 'independent reproduction')}{_example(failing)}"
        )
    return breakage_objection(patch)
