"""The ``cross-vendor`` policy: as ``majority``, but no vendor's tests support its own
models."""

from __future__ import annotations

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judging import (
    EvidenceJudge,
    PatchEvidence,
    ThresholdOptions,
    threshold_objection,
)


class CrossVendor(EvidenceJudge):
    """``majority`` with support only from authors of another vendor than the patch's
    (an author or patch of unknown vendor is another vendor to everyone)."""

    name = "cross-vendor"
    separate_vendors = True

    def __init__(self, options: ThresholdOptions | None = None) -> None:
        self.options: ThresholdOptions = options or ThresholdOptions()

    def objection(self, patch: PatchEvidence) -> str | None:
        return threshold_objection(patch, self.options.threshold)


@hookimpl
def bugbout_judges():  # type: ignore[no-untyped-def]
    yield JudgePlugin(
        name="cross-vendor",
        factory=CrossVendor,
        options=ThresholdOptions,
        description="as majority, but no vendor's tests may support its own models",
    )
