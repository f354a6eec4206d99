"""The ``recall`` auditor: the ``gate`` auditor's verdict, plus how close the patch's source
change is to the maintainers' own fix, and whether it looks recalled rather than written
(:mod:`bugbout.core.audit.recall`)."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from bugbout.auditors import (
    Audit,
    AuditorPlugin,
    AuditRequest,
    GateOptions,
    Similarity,
    changed_lines,
    five_gram_overlap,
    hookimpl,
    identical_line_ratio,
    is_empty,
    make_audit,
)

THRESHOLD = 0.8
"""The default 5-gram overlap at or above which a patch counts as recalled."""
MIN_LINES = 2
"""The default fewest lines a fix must change before a patch matching it is flagged: a
one-line fix (one line replaced, or one added) has few ways to be written, so matching
it shows nothing."""


class RecallOptions(GateOptions):
    """Options of the ``recall`` auditor: the gate's, and the recall threshold."""

    threshold: float = Field(default=THRESHOLD, gt=0, le=1)
    """The token 5-gram overlap with the maintainers' fix at or above which a patch is
    flagged ``recalled``."""
    min_lines: int = Field(default=MIN_LINES, ge=1)
    """The fewest lines the maintainers' source change must change (the more of the lines
    it adds and those it removes) for a patch to be flagged ``recalled``; a smaller fix's
    similarity is measured and shown, never flagged."""


class Recall:
    """The gate's classification, and on a hidden audit of a non-empty patch the
    similarity of its source change to the maintainers' fix."""

    name = "recall"

    def __init__(self, options: RecallOptions | None = None) -> None:
        self.options = options or RecallOptions()

    def audit(self, request: AuditRequest) -> Audit:
        audit, _ = make_audit(request, auditor=self.name, limit=self.options.max_listed)
        if request.visible_only or not request.fix or is_empty(request.attempt):
            return audit
        patch = request.attempt.patch.source
        overlap = round(five_gram_overlap(request.fix, patch), 4)
        similarity = Similarity(
            measure=self.name,
            five_gram=overlap,
            identical_lines=round(identical_line_ratio(request.fix, patch), 4),
            threshold=self.options.threshold,
            recalled=overlap >= self.options.threshold
            and fix_size(request.fix) >= self.options.min_lines,
        )
        return audit.model_copy(update={"similarity": similarity})


def fix_size(fix: str) -> int:
    """How many lines ``fix`` changes: the more of its added and its removed lines."""
    signs = [line[0] for line in changed_lines(fix)]
    return max(signs.count("+"), signs.count("-"))


@hookimpl
def bugbout_auditors() -> Iterator[AuditorPlugin]:
    yield AuditorPlugin(
        name=Recall.name,
        factory=Recall,
        options=RecallOptions,
        description="the gate, plus each patch's similarity to the maintainers' fix",
    )
