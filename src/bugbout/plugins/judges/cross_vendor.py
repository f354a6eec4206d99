"""The ``cross-vendor`` policy: as ``majority``, but no vendor's tests support its own
models."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout import JudgePlugin, hookimpl
from bugbout.core.judge.judge_policy import ThresholdJudge, ThresholdOptions


def cross_vendor(options: ThresholdOptions) -> ThresholdJudge:
    """``majority`` with support only from authors of another vendor than the patch's
    (an author or patch of unknown vendor is another vendor to everyone)."""
    return ThresholdJudge(options, name="cross-vendor", separate_vendors=True)


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name="cross-vendor",
        factory=cross_vendor,
        options=ThresholdOptions,
        description="as majority, but no vendor's tests may support its own models",
    )
