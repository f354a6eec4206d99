"""A bout's records written into a project's store by hand, so that `bugbout report` and
`load_report` read them as they would a real bout's: each contestant's outcome per task
(a score, or an attempt status that left it without one) and each judge policy's picks."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.store.race_records import Attempt, AttemptStatus, Score
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskIssue, TaskSet
from bugbout.core.store.store import Store
from bugbout.core.store.verdict_records import (
    Job,
    JobAttempt,
    PatchResolution,
    ResolutionSet,
    TaskResolutions,
    Verdict,
    VerdictSet,
)

Outcome = Score | AttemptStatus
"""A contestant's result on a task: its score (the attempt finished), or how its attempt
ended without a counted score (``infra-error``, ``quota``...)."""


def task_ids(count: int) -> list[str]:
    """``count`` task ids, in order: ``t00``, ``t01``, ..."""
    return [f"t{i:02d}" for i in range(count)]


def store_bout(
    project: Path,
    outcomes: dict[str, dict[str, Outcome]],
    picks: dict[str, dict[str, str | None]] | None = None,
    *,
    usage: dict[str, dict[str, dict[str, int]]] | None = None,
    errors: dict[str, dict[str, str]] | None = None,
) -> Store:
    """Write ``bugbout.yaml`` and a bout's store in ``project``: a scored task per task
    named in ``outcomes``, an attempt per contestant and task (with its ``usage`` and
    ``errors`` when given), a score for each finished one, and each policy's ``picks``
    (``None``: it abstained)."""
    project.mkdir(parents=True, exist_ok=True)
    config = "defaults: [base, _self_]\nproject:\n  source: src/calc\n"
    (project / "bugbout.yaml").write_text(config)
    store = Store(project / ".bugbout")
    ids = sorted({t for by_task in outcomes.values() for t in by_task})
    tasks = TaskSet(
        examined=len(ids),
        tasks=[
            Task(
                id=t,
                issue=TaskIssue(number=i + 1, title=f"bug {t}"),
                sha=f"{i:040x}",
                parent=f"{i + 1000:040x}",
                date="2026-01-01T00:00:00+00:00",
                title=f"bug {t}",
                problem_statement=f"bug {t}",
                source_files=["src/calc/core.py"],
                test_files=["tests/test_core.py"],
            )
            for i, t in enumerate(ids)
        ],
    )
    store.write("tasks.json", tasks)
    store.write(
        "oracles.json",
        OracleSet({t: Oracle(task_id=t, status="ok", fail_to_pass=["t::a"]) for t in ids}),
    )
    used, scores = [], ResolutionSet()
    for name, by_task in sorted(outcomes.items()):
        for t, outcome in sorted(by_task.items()):
            status = outcome if isinstance(outcome, AttemptStatus) else AttemptStatus.FINISHED
            attempt = Attempt(
                task_id=t,
                contestant=name,
                key=f"{t}-{name}",
                agent="command",
                model=f"{name}-model",
                status=status,
                usage=(usage or {}).get(name, {}).get(t, {}),
                wall_time=1.0,
                error=(errors or {}).get(name, {}).get(t),
            )
            path = f"attempts/{t}/{name}.json"
            store.write(path, attempt)
            used.append(JobAttempt(task_id=t, contestant=name, path=path, reused=False))
            score = outcome if isinstance(outcome, Score) else Score.NO_FIX
            scores.root.setdefault(t, TaskResolutions()).patches[name] = PatchResolution(
                task_id=t, contestant=name, score=score
            )
    store.write("resolutions.json", scores)
    verdicts = VerdictSet()
    for policy, chosen in (picks or {}).items():
        for t, pick in chosen.items():
            verdicts.root.setdefault(t, {})[policy] = Verdict(
                task_id=t, policy=policy, pick=pick, reason="picked" if pick else "abstained"
            )
    store.write("verdicts.json", verdicts)
    store.write(
        "job.json",
        Job(
            judge=next(iter(picks or {"majority": {}})),
            auditor="gate",
            contestants=sorted(outcomes),
            tasks=tasks,
            attempts=used,
            started="2026-01-01T00:00:00+00:00",
        ),
    )
    return store
