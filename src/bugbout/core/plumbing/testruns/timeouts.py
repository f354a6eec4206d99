"""Saying that test runs after the race were killed at ``verdicts.timeout``, and what to do.

A run killed at its timeout leaves its patch judged, scored or audited on partial
evidence: the sentence goes to the terminal as the task is decided, and to the report
(from the matrices' runs and the audits' ``timeout``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bugbout.core.store.race_records import Audit
from bugbout.core.store.records import RunStatus, TestRun
from bugbout.core.store.verdict_records import UNFIXED, Matrix

_KILLED = re.compile(r"killed after ([0-9.e+]+) s")
"""How :func:`bugbout.core.plumbing.testruns.testrun.run_tests` says a run hit its timeout."""


def killed(run: TestRun) -> str:
    """``killed after 600 s`` when ``run`` hit its timeout; ``""`` otherwise."""
    if run.status != RunStatus.TIMEOUT:
        return ""
    found = _KILLED.match(run.detail)
    return found[0] if found else "killed"


def timeouts(runs: Sequence[tuple[str, str]]) -> str | None:
    """The sentence that says on how many patches a run was killed, and what to do;
    ``None`` when none was. ``runs``: each killed run's patch (``UNFIXED`` for the unfixed
    code; prefixed with its task when several tasks are counted) and :func:`killed`."""
    if not runs:
        return None
    seconds = [float(m[1]) for _, how in runs if (m := _KILLED.match(how))]
    after = f" after {max(seconds):g} s" if seconds else ""
    names = {name for name, _ in runs}
    patches = sorted(name for name in names if not name.endswith(UNFIXED))
    where = [f"{len(patches)} {'patch' if len(patches) == 1 else 'patches'}"] if patches else []
    if len(patches) < len(names):
        where.append("the unfixed code")
    return (
        f"suite timed out{after} on {' and '.join(where)}: "
        "raise verdicts.timeout or use verdicts.tests=affected"
    )


def report_timeouts(matrices: Sequence[Matrix], audits: Sequence[Audit]) -> list[str]:
    """The report's sentence on every run killed, from the stored records (none: empty)."""
    runs = [
        (f"{matrix.task_id}/{name}", how)
        for matrix in matrices
        for name, run in matrix.runs.items()
        if (how := killed(run))
    ]
    runs += [(f"{a.task_id}/{a.contestant}", a.timeout) for a in audits if a.timeout]
    sentence = timeouts(runs)
    return [sentence] if sentence else []
