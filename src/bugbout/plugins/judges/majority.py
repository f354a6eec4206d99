"""The ``majority`` policy: at least half of the independent reproductions, on average."""

from __future__ import annotations

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judging import (
    EvidenceJudge,
    PatchEvidence,
    ThresholdOptions,
    threshold_objection,
)


class Majority(EvidenceJudge):
    """Approves a patch whose support (the fraction of each independent author's
    reproductions it passes, averaged over authors) reaches ``threshold`` and that breaks
    no repository test a quorum of other patches keeps."""

    name = "majority"

    def __init__(self, options: ThresholdOptions | None = None) -> None:
        self.options: ThresholdOptions = options or ThresholdOptions()

    def objection(self, patch: PatchEvidence) -> str | None:
        return threshold_objection(patch, self.options.threshold)


@hookimpl
def bugbout_judges():  # type: ignore[no-untyped-def]
    yield JudgePlugin(
        name="majority",
        factory=Majority,
        options=ThresholdOptions,
        description="passes at least half of the independent reproductions, on average",
    )
