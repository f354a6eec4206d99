"""The ``unanimous`` policy: every independent reproduction."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.judges import EvidenceJudge, JudgePlugin, hookimpl, unanimous_objection


class Unanimous(EvidenceJudge):
    """Approves a patch that passes every independent reproduction (there must be one)
    and breaks no repository test a quorum of other patches keeps."""

    name = "unanimous"
    objections = (unanimous_objection,)


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name=Unanimous.name,
        factory=Unanimous,
        options=Unanimous.options_model,
        description="passes every independent reproduction",
    )
