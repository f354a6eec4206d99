"""The stable API for judge plugins: their record, ``hookimpl``, ``Options``, and the
policies' base, their objections and the evidence a policy reads.

A judge plugin imports these names from here; ``bugbout.core`` is private and may change
in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "SUITE",
    "UNFIXED",
    "EvidenceJudge",
    "Judge",
    "JudgeContext",
    "JudgeOptions",
    "JudgePlugin",
    "KeepOptions",
    "Matrix",
    "NoOptions",
    "Options",
    "PatchEvidence",
    "ThresholdJudge",
    "Verdict",
    "breakage_objection",
    "create_plugin",
    "hookimpl",
    "keep_objection",
    "outcome_of",
    "threshold_objection",
    "unanimous_objection",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "EvidenceJudge": "bugbout.core.judge.judge_policy",
        "Judge": "bugbout.core.judge.judging",
        "JudgeContext": "bugbout.core.judge.judge_evidence",
        "JudgeOptions": "bugbout.core.judge.judge_policy",
        "JudgePlugin": "bugbout.core.contract.types",
        "KeepOptions": "bugbout.core.judge.judge_policy",
        "Matrix": "bugbout.core.store.verdict_records",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "PatchEvidence": "bugbout.core.judge.judging",
        "SUITE": "bugbout.core.store.verdict_records",
        "ThresholdJudge": "bugbout.core.judge.judge_policy",
        "UNFIXED": "bugbout.core.store.verdict_records",
        "Verdict": "bugbout.core.store.verdict_records",
        "breakage_objection": "bugbout.core.judge.judge_policy",
        "create_plugin": "bugbout.core.contract.manager",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "keep_objection": "bugbout.core.judge.judge_policy",
        "outcome_of": "bugbout.core.judge.judge_evidence",
        "threshold_objection": "bugbout.core.judge.judge_policy",
        "unanimous_objection": "bugbout.core.judge.judge_policy",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import JudgePlugin, NoOptions, Options
    from bugbout.core.judge.judge_evidence import JudgeContext, outcome_of
    from bugbout.core.judge.judge_policy import (
        EvidenceJudge,
        JudgeOptions,
        KeepOptions,
        ThresholdJudge,
        breakage_objection,
        keep_objection,
        threshold_objection,
        unanimous_objection,
    )
    from bugbout.core.judge.judging import Judge, PatchEvidence
    from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix, Verdict
