"""The ``strict`` policy: every independent reproduction, and the examiners'
specification of the behaviour the issue does not ask to change."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.judges import (
    EvidenceJudge,
    JudgePlugin,
    KeepOptions,
    hookimpl,
    keep_objection,
    unanimous_objection,
)


class Strict(EvidenceJudge):
    """Approves what ``unanimous`` approves, if it also keeps passing every test that an
    examiner of a keep-assignment (``specify``) wrote and that passes on the unfixed code."""

    name = "strict"
    objections = (unanimous_objection, keep_objection)
    options_model = KeepOptions


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name=Strict.name,
        factory=Strict,
        options=Strict.options_model,
        description=(
            "passes every independent reproduction and breaks none of the examiners' "
            "tests for behaviour the issue does not ask to change"
        ),
    )
