"""The evidence a judge reads: what every patch does to every independent reproduction
and to the repository's tests, computed once per matrix (:func:`gather`) for every policy.

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
   source is flagged: :mod:`bugbout.core.plumbing.tampering.tamper`) is no candidate, and its column
   counts for nobody's quorum: it is listed in the verdict's ``tampered`` with the reasons, and
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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from pydantic import Field

from bugbout.core.store.race_records import Attempt
from bugbout.core.store.records import Outcome, Record, RunStatus
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix

FAILING = (Outcome.FAILED, Outcome.ERROR)
"""Outcomes on ``UNFIXED`` that make a test a reproduction."""


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
                attempt.contestant: (attempt.examination.assignment if attempt.examination else "")
                or "reproduce"
                for attempt in attempts
                if attempt.task_id == task_id and attempt.role == "examiner"
            },
        )


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


def passes(outcome: Outcome | None) -> bool:
    """Whether ``outcome`` is a pass (``None``, not run, is not)."""
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
class MatrixEvidence:
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
) -> MatrixEvidence:
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
        t for t in matrix.authors.get(SUITE, []) if passes(outcome_of(matrix, UNFIXED, t))
    )
    keeps = {
        author: tuple(t for t in tests if passes(outcome_of(matrix, UNFIXED, t)))
        for author, tests in matrix.authors.items()
        if author != SUITE and context.examiners.get(author) in keep_assignments
    }
    tampered = tampered_columns(matrix)
    candidates = [p for p in dict.fromkeys(matrix.patches) if p != UNFIXED and p not in tampered]
    if UNFIXED in tampered:
        candidates = []  # no reproduction can be trusted: nothing to judge
    evidence = MatrixEvidence(
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
            passing = tuple(t for t in tests if passes(outcome_of(matrix, patch, t)))
            failing = tuple(t for t in tests if t not in passing)
            support.append(AuthorSupport(author, passing, failing))
        others = [p for p in candidates if p != patch]
        breakages = []
        for test in suite:
            if passes(outcome_of(matrix, patch, test)):
                continue
            kept_by = sum(passes(outcome_of(matrix, other, test)) for other in others)
            confirmed = kept_by > quorum * len(others) if others else True
            breakages.append(Breakage(test, kept_by, len(others), confirmed))
        broken_keeps = tuple(
            test
            for author, tests in keeps.items()
            if author != patch
            for test in tests
            if not passes(outcome_of(matrix, patch, test))
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
