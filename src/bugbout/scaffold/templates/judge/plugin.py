"""The ``__NAME__`` judge policy: picks a patch only when every independent author's
reproductions pass with it and it changes no repository test at all.

bugbout's judging machinery (:class:`bugbout.judges.EvidenceJudge`, the policies'
base) gathers the evidence from the cross-examination matrix: each author's
reproductions (their tests that fail on the unfixed code), which of them a patch makes
pass (a patch's own author never counts), and the repository tests a patch stops
passing. A policy only says which patches it
approves; among the approved, the best supported is picked, and with none bugbout
abstains.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from bugbout.judges import EvidenceJudge, JudgeOptions, JudgePlugin, hookimpl, unanimous_objection

if TYPE_CHECKING:  # the evidence and the records load when the policy first judges
    from bugbout.judges import PatchEvidence


class __TITLE__Policy(EvidenceJudge):
    """Approves a patch that passes every independent reproduction (there must be at
    least one) and keeps every repository test passing that passed before."""

    name = "__NAME__"

    def objection(self, patch: PatchEvidence) -> str | None:
        """Why the policy does not approve ``patch``; ``None`` when it does."""
        unanimous = unanimous_objection(patch)  # no reproduction, a failing one, a breakage
        if unanimous is not None:
            return unanimous
        if patch.breakages:  # even those most other patches share
            changed = [breakage.test for breakage in patch.breakages]
            return f"changes {len(changed)} repository test(s) (e.g. {changed[0]!r})"
        return None


@hookimpl
def bugbout_judges() -> Iterator[JudgePlugin]:
    yield JudgePlugin(
        name=__TITLE__Policy.name,
        factory=__TITLE__Policy,
        options=JudgeOptions,
        description="every independent reproduction passes, no repository test changes",
    )
