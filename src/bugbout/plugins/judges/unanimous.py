"""The ``unanimous`` policy: every independent reproduction."""

from __future__ import annotations

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judging import (
    EvidenceJudge,
    JudgeOptions,
    PatchEvidence,
    unanimous_objection,
)


class Unanimous(EvidenceJudge):
    """Approves a patch that passes every independent reproduction (there must be one)
    and breaks no repository test a quorum of other patches keeps."""

    name = "unanimous"

    def objection(self, patch: PatchEvidence) -> str | None:
        return unanimous_objection(patch)


@hookimpl
def bugbout_judges():  # type: ignore[no-untyped-def]
    yield JudgePlugin(
        name="unanimous",
        factory=Unanimous,
        options=JudgeOptions,
        description="passes every independent reproduction",
    )
