"""The ``strict`` policy: every independent reproduction, and the examiners'
specification of the behaviour the issue does not ask to change."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pydantic import Field

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judge.judge_policy import (
    DEFAULT_KEEP_ASSIGNMENTS,
    EvidenceJudge,
    JudgeOptions,
    keep_objection,
    unanimous_objection,
)


class StrictOptions(JudgeOptions):
    """Options of the ``strict`` policy."""

    keep_assignments: list[str] = Field(default_factory=lambda: list(DEFAULT_KEEP_ASSIGNMENTS))
    """Examiner assignments whose tests that pass on the unfixed code a patch must keep
    passing, with no quorum to excuse it."""


class Strict(EvidenceJudge):
    """Approves what ``unanimous`` approves, if it also keeps passing every test that an
    examiner of a keep-assignment (``specify``) wrote and that passes on the unfixed code."""

    name = "strict"
    objections = (unanimous_objection, keep_objection)

    def __init__(self, options: StrictOptions | None = None) -> None:
        self.options: StrictOptions = options or StrictOptions()

    @property
    def keep_assignments(self) -> Sequence[str]:
        return self.options.keep_assignments


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name=Strict.name,
        factory=Strict,
        options=StrictOptions,
        description=(
            "passes every independent reproduction and breaks none of the examiners' "
            "tests for behaviour the issue does not ask to change"
        ),
    )
