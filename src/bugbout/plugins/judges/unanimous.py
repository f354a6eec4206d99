"""The ``unanimous`` policy: every independent reproduction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judge.judge_policy import EvidenceJudge, JudgeOptions, unanimous_objection

if TYPE_CHECKING:
    from bugbout.core.judge.judge_evidence import PatchEvidence


class Unanimous(EvidenceJudge):
    """Approves a patch that passes every independent reproduction (there must be one)
    and breaks no repository test a quorum of other patches keeps."""

    name = "unanimous"

    def objection(self, patch: PatchEvidence) -> str | None:
        return unanimous_objection(patch)


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name=Unanimous.name,
        factory=Unanimous,
        options=JudgeOptions,
        description="passes every independent reproduction",
    )
