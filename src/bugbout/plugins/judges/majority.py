"""The ``majority`` policy: at least half of the independent reproductions, on average."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.judges import JudgePlugin, ThresholdJudge, hookimpl


class Majority(ThresholdJudge):
    """Support from every independent author counts."""

    name = "majority"


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name=Majority.name,
        factory=Majority,
        options=Majority.options_model,
        description="passes at least half of the independent reproductions, on average",
    )
