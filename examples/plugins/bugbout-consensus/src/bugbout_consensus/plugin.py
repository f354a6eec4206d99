"""The ``consensus`` judge policy: a patch is picked only when several independent authors
agree on it.

It approves a patch when

- at least ``min-authors`` (default 2) distinct independent authors wrote reproductions
  (tests by someone other than the patch's author that fail on the unfixed code),
- the patch makes *every* one of those reproductions pass, and
- it breaks no repository test that a quorum of the other patches keeps passing.

Otherwise it abstains. Everything else (reproductions, independence, breakages, the pick
among approved patches, the reason and the cells) is bugbout's shared judging
machinery, :mod:`bugbout.core.judge.judging`: a policy only says which patches it approves.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judge.judging import (
    EvidenceJudge,
    JudgeOptions,
    PatchEvidence,
    breakage_objection,
)
from pydantic import Field


class ConsensusOptions(JudgeOptions):
    """Options of the ``consensus`` policy (``+judge.min-authors=3`` on the command line)."""

    min_authors: int = Field(default=2, ge=1)
    """The fewest distinct independent authors with reproductions a pick needs."""


class Consensus(EvidenceJudge):
    """Approves a patch every independent author's reproductions pass, when there are at
    least ``min-authors`` such authors, and that breaks nothing others keep."""

    name = "consensus"

    def __init__(self, options: ConsensusOptions | None = None) -> None:
        self.options: ConsensusOptions = options or ConsensusOptions()

    def objection(self, patch: PatchEvidence) -> str | None:
        authors = len(patch.support)
        needed = self.options.min_authors
        if authors < needed:
            return (
                f"has reproductions from {authors} independent author{'s' if authors != 1 else ''}"
                f", and consensus needs {needed}"
            )
        dissent = [author.author for author in patch.support if author.failed]
        if dissent:
            return f"does not pass every reproduction by {', '.join(repr(a) for a in dissent)}"
        return breakage_objection(patch)


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name="consensus",
        factory=Consensus,
        options=ConsensusOptions,
        description="every reproduction of at least two independent authors passes",
    )
