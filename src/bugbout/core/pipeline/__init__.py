"""The pipeline's wiring: the one place of the core that sees the whole bout's settings
and the plugin manager.

For each stage it derives a frozen spec, the sections of the settings that stage reads
(typed, nothing more), and builds the plugin implementations the stage uses; the stage
is then called with its spec, its input records and those plugins. Mining
(:mod:`bugbout.core.pipeline.mining`), ground truth (:mod:`bugbout.core.pipeline.truth`),
the contestants, the race and the stages after it (:mod:`bugbout.core.pipeline.stages`)
and the report (:mod:`bugbout.core.pipeline.report`) are wired apart, and each name is
imported the first time it is used, so that ``bugbout tasks --mine-only`` loads the
mining modules only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "TranscriptHook",
    "WorkerBenches",
    "WorkerRace",
    "attempt_spec",
    "build_contestants",
    "check_plugins",
    "check_verdict_plugins",
    "compute_oracles",
    "contestants_spec",
    "find_tasks",
    "ground_truth",
    "issue_resolver",
    "make_auditor",
    "make_drafter",
    "make_reporters",
    "mine_plugins",
    "mine_spec",
    "mine_tasks",
    "race",
    "race_plugins",
    "race_spec",
    "report_plugins",
    "suite_runner",
    "truth_plugins",
    "truth_spec",
    "verdicts",
    "verdicts_spec",
]

_MINING = "bugbout.core.pipeline.mining"
_TRUTH = "bugbout.core.pipeline.truth"
_STAGES = "bugbout.core.pipeline.stages"
_REPORT = "bugbout.core.pipeline.report"

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "WorkerBenches": _STAGES,
        "WorkerRace": _STAGES,
        "attempt_spec": _STAGES,
        "build_contestants": _STAGES,
        "check_plugins": _TRUTH,
        "check_verdict_plugins": _STAGES,
        "compute_oracles": _TRUTH,
        "contestants_spec": _STAGES,
        "find_tasks": _MINING,
        "ground_truth": _TRUTH,
        "issue_resolver": _MINING,
        "make_auditor": _STAGES,
        "make_drafter": _TRUTH,
        "make_reporters": _REPORT,
        "mine_plugins": _MINING,
        "mine_spec": _MINING,
        "mine_tasks": _MINING,
        "race": _STAGES,
        "race_plugins": _STAGES,
        "race_spec": _STAGES,
        "report_plugins": _REPORT,
        "suite_runner": _MINING,
        "TranscriptHook": _REPORT,
        "truth_plugins": _TRUTH,
        "truth_spec": _TRUTH,
        "verdicts": _STAGES,
        "verdicts_spec": _STAGES,
    },
)

if TYPE_CHECKING:
    from bugbout.core.pipeline.mining import (
        find_tasks,
        issue_resolver,
        mine_plugins,
        mine_spec,
        mine_tasks,
        suite_runner,
    )
    from bugbout.core.pipeline.report import TranscriptHook, make_reporters, report_plugins
    from bugbout.core.pipeline.stages import (
        WorkerBenches,
        WorkerRace,
        attempt_spec,
        build_contestants,
        check_verdict_plugins,
        contestants_spec,
        make_auditor,
        race,
        race_plugins,
        race_spec,
        verdicts,
        verdicts_spec,
    )
    from bugbout.core.pipeline.truth import (
        check_plugins,
        compute_oracles,
        ground_truth,
        make_drafter,
        truth_plugins,
        truth_spec,
    )
