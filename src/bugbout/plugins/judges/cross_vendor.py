"""The ``cross-vendor`` policy: as ``majority``, but no vendor's tests support its own
models."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.judges import JudgePlugin, ThresholdJudge, hookimpl


class CrossVendor(ThresholdJudge):
    """Support only from authors of another vendor than the patch's (an author or patch
    of unknown vendor is another vendor to everyone)."""

    name = "cross-vendor"
    separate_vendors = True


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name=CrossVendor.name,
        factory=CrossVendor,
        options=CrossVendor.options_model,
        description="as majority, but no vendor's tests may support its own models",
    )
