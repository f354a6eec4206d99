"""What a judge policy is: its options, its objections and :class:`EvidenceJudge`, the
engine every built-in policy configures.

A policy says which patches it approves: the built-ins name the objections that apply
(:attr:`EvidenceJudge.objections`, functions of this module), so their plugin modules
are configuration and the decision runs in the core alone; a third-party policy may
instead override :meth:`EvidenceJudge.objection`. The evidence a policy reads
(:mod:`bugbout.core.judge.judge_evidence`) and the verdict it makes
(:func:`bugbout.core.judge.judging.decide`) are loaded when it first judges, so a judge
plugin module imports this module, and no record, when the plugins are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from bugbout.core.contract.types import Options

if TYPE_CHECKING:
    from bugbout.core.judge.judge_evidence import JudgeContext, MatrixEvidence, PatchEvidence
    from bugbout.core.store.verdict_records import Matrix, Verdict

DEFAULT_KEEP_ASSIGNMENTS = ("specify",)
"""Examiner assignments whose tests passing on ``UNFIXED`` ``strict`` requires kept."""


class JudgeOptions(Options):
    """Options every built-in policy takes."""

    quorum: float = Field(default=0.5, ge=0.0, lt=1.0)
    """A broken repository test counts against a patch when more than this fraction of
    the other patches keep it passing (0.5: a strict majority)."""


class KeepOptions(JudgeOptions):
    """Options of the policies that keep the examiners' specification of the behaviour
    the issue does not ask to change."""

    keep_assignments: list[str] = Field(default_factory=lambda: list(DEFAULT_KEEP_ASSIGNMENTS))
    """Examiner assignments whose tests that pass on the unfixed code a patch must keep
    passing, with no quorum to excuse it."""


class ThresholdOptions(JudgeOptions):
    """Options of the policies that approve on average support."""

    threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    """The least support (average fraction of independent reproductions passed) a patch
    needs to be approved."""


class EvidenceJudge:
    """The engine of the built-in policies: gather the evidence, ask each patch's
    objection, decide."""

    name: str = ""
    separate_vendors: bool = False
    """Whether an author's tests may not support patches of its own vendor."""
    objections: ClassVar[Sequence[Callable[[PatchEvidence], str | None]]] = ()
    """The objections that apply, in order: the first one a patch meets is why it is not
    approved."""
    options_model: ClassVar[type[JudgeOptions]] = JudgeOptions
    """The policy's options model: the engine builds its defaults, and the plugin's record
    names it (``options=Strict.options_model``)."""

    def __init__(self, options: JudgeOptions | None = None) -> None:
        self.options = options or self.options_model()

    @property
    def keep_assignments(self) -> Sequence[str]:
        """Examiner assignments whose passing-on-base tests a patch must keep: those of
        the options, for a policy whose options are :class:`KeepOptions`."""
        return self.options.keep_assignments if isinstance(self.options, KeepOptions) else ()

    def gather(self, matrix: Matrix, context: JudgeContext) -> MatrixEvidence:
        from bugbout.core.judge.judge_evidence import gather

        return gather(
            matrix,
            context,
            quorum=self.options.quorum,
            separate_vendors=self.separate_vendors,
            keep_assignments=self.keep_assignments,
        )

    def objection(self, patch: PatchEvidence) -> str | None:
        """Why the policy does not approve ``patch`` (the first of :attr:`objections` it
        meets); ``None`` when it does."""
        if not self.objections:
            raise NotImplementedError(f"judge {self.name!r} names no objection")
        return next((why for rule in self.objections if (why := rule(patch))), None)

    def judge(self, matrix: Matrix, context: JudgeContext) -> Verdict:
        from bugbout.core.judge.judging import decide

        return decide(self.gather(matrix, context), policy=self.name, objection=self.objection)


class ThresholdJudge(EvidenceJudge):
    """Approves a patch whose support (the fraction of each independent author's
    reproductions it passes, averaged over authors) reaches ``threshold`` and that breaks
    no repository test a quorum of other patches keeps. ``majority`` and ``cross-vendor``
    are this policy, counting every author's support or only other vendors'."""

    options: ThresholdOptions
    options_model = ThresholdOptions

    def objection(self, patch: PatchEvidence) -> str | None:
        return threshold_objection(patch, self.options.threshold)


def plural(count: int, word: str) -> str:
    """``1 test``, ``2 tests``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def example(tests: Sequence[str]) -> str:
    """`` (e.g. 'the first test')``, or nothing."""
    return f" (e.g. {tests[0]!r})" if tests else ""


def breakage_objection(patch: PatchEvidence) -> str | None:
    """Why rule 3 rejects ``patch`` (a confirmed breakage), or ``None``."""
    confirmed = [b.test for b in patch.confirmed]
    if confirmed:
        return (
            f"breaks {plural(len(confirmed), 'repository test')} most other patches keep "
            f"passing{example(confirmed)}"
        )
    return None


def keep_objection(patch: PatchEvidence) -> str | None:
    """Why ``strict`` rejects ``patch`` for breaking examiners' keep-tests, or ``None``."""
    if patch.broken_keeps:
        return (
            f"breaks {plural(len(patch.broken_keeps), 'examiner specification test')}"
            f"{example(patch.broken_keeps)}"
        )
    return None


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
        return f"does not pass {plural(len(failing), 'independent reproduction')}{example(failing)}"
    return breakage_objection(patch)
