"""The ``majority`` policy: at least half of the independent reproductions, on average."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judge.judge_policy import ThresholdJudge, ThresholdOptions


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name="majority",
        factory=ThresholdJudge,
        options=ThresholdOptions,
        description="passes at least half of the independent reproductions, on average",
    )
