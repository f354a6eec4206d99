"""A bout's report from its records in the store, and what its reporters return."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bugbout.core.contract.transcript import TranscriptReader
from bugbout.core.evidence import round_scores, stored_scores, with_earlier_rounds
from bugbout.core.report.costs import PriceTable
from bugbout.core.report.report import Report
from bugbout.core.report.report_build import build_report
from bugbout.core.report.report_tasks import AttemptLinks, attempt_links, fix_diffs
from bugbout.core.store.drafts import DRAFTS, Draft, Drafts
from bugbout.core.store.locks import held_by
from bugbout.core.store.race_records import Attempt, Audit
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import (
    AUDITS,
    JOB,
    MATRICES,
    ORACLES,
    RESOLUTIONS,
    TASKS,
    VERDICTS,
    Store,
)
from bugbout.core.store.verdict_records import (
    AuditSet,
    Job,
    Matrix,
    PatchResolution,
    ResolutionSet,
    Verdict,
    VerdictSet,
)


class Reporter(Protocol):
    """What a reporter plugin's factory returns."""

    filename: str | None
    """The file in the store the rendering is written to; ``None``: it is printed."""

    def render(self, report: Report) -> str:
        """``report`` as text."""
        ...


@dataclass(frozen=True)
class BoutRecords:
    """What a bout's report is built from, as its store holds it."""

    tasks: TaskSet
    oracles: OracleSet
    attempts: list[Attempt]
    """The first repeat's attempts, every round."""
    repeats: list[Attempt]
    resolutions: list[PatchResolution]
    verdicts: list[Verdict]
    audits: list[Audit]
    matrices: list[Matrix]
    round_scores: list[PatchResolution]
    repeat_scores: list[PatchResolution]
    links: dict[str, AttemptLinks]
    cutoffs: dict[str, str]
    drafts: list[Draft]
    """The drafts its tasks' statements came from (drafted, or refused and scrubbed)."""

    def build(
        self,
        prices: PriceTable | None = None,
        *,
        repository: Path | None = None,
        repositories: Mapping[str, str] | None = None,
    ) -> Report:
        """The report on these records (:func:`build_report`)."""
        return build_report(
            self.tasks,
            self.oracles,
            self.attempts,
            self.resolutions,
            self.verdicts,
            self.audits,
            self.matrices,
            prices=prices,
            round_scores=self.round_scores,
            fixes=fix_diffs(repository, self.tasks) if repository else None,
            links=self.links,
            cutoffs=self.cutoffs,
            repeats=self.repeats,
            repeat_scores=self.repeat_scores,
            repositories=repositories,
            drafts=self.drafts,
        )


def read_bout(
    store: Store,
    output: Store | None = None,
    links_to: Path | None = None,
    *,
    transcript: TranscriptReader | None = None,
) -> BoutRecords:
    """The records of the bout in ``output`` (default: the store's own, those of the last
    ``bugbout run``): the tasks its ``job.json`` holds, the shared ground truth, the
    attempts ``job.json`` names, its verdicts; its attempts' files linked relative to
    ``links_to`` (default: ``output``, where its reports are written), with the steps
    ``transcript`` reads from their logs (none: the end of what each agent printed)."""
    output = output or store
    job = output.read(JOB, Job)
    # the bout's own tasks, whatever a later bout mined
    tasks = job.tasks if job is not None else store.read(TASKS, TaskSet) or TaskSet()
    oracles = store.read(ORACLES, OracleSet) or OracleSet()
    stored = [
        (name, attempt)
        for used in (job.attempts if job else [])
        for name in with_earlier_rounds(store, used.path)
        if (attempt := store.read(name, Attempt)) is not None
    ]
    attempts = [attempt for _, attempt in stored if attempt.repeat == 1]
    repeats = [attempt for _, attempt in stored if attempt.repeat > 1]
    last = {(a.task_id, a.contestant, a.repeat): a for a in sorted(repeats, key=lambda a: a.round)}
    resolutions = output.read(RESOLUTIONS, ResolutionSet) or ResolutionSet()
    verdicts = output.read(VERDICTS, VerdictSet) or VerdictSet()
    audits = output.read(AUDITS, AuditSet) or AuditSet()
    drafts = store.read(DRAFTS, Drafts) or Drafts()
    return BoutRecords(
        tasks=tasks,
        oracles=oracles,
        attempts=attempts,
        repeats=repeats,
        resolutions=[r for scores in resolutions.root.values() for r in scores.patches.values()],
        verdicts=[v for by_policy in verdicts.root.values() for v in by_policy.values()],
        audits=[a for by_name in audits.root.values() for a in by_name.values()],
        matrices=[
            matrix
            for path in sorted(output.path(MATRICES).glob("*.json"))
            if (matrix := output.read(f"{MATRICES}/{path.name}", Matrix)) is not None
        ],
        round_scores=round_scores(store, tasks, oracles, attempts),
        repeat_scores=stored_scores(store, tasks, oracles, list(last.values())),
        links=attempt_links(stored, store.root, links_to or output.root, transcript),
        cutoffs=job.cutoffs if job is not None else {},
        drafts=[
            draft
            for task in tasks.tasks
            if (draft := drafts.root.get(task.id)) is not None
            and task.statement_origin == draft.origin
        ],
    )


def load_report(
    store: Store,
    output: Store | None = None,
    prices: PriceTable | None = None,
    *,
    repository: Path | None = None,
    transcript: TranscriptReader | None = None,
) -> Report:
    """The report of the bout whose records are in ``output`` (:func:`read_bout`); its
    costs at ``prices`` (default: the packaged table). Its task pages link each attempt's
    record and logs relative to ``output`` (where the reports are written), show the
    steps ``transcript`` reads from each attempt's logs and, given the project's
    ``repository``, each fix's diff."""
    output = output or store
    records = read_bout(store, output, transcript=transcript)
    report = records.build(prices, repository=repository)
    busy = running(output)
    partial = (
        f"{busy[0].upper()}{busy[1:]}: this report holds only what it has finished so far; "
        "run `bugbout report` again when it ends."
        if busy
        else None
    )
    return report.model_copy(update={"running": partial})


def running(output: Store) -> str | None:
    """``a bout is running on DIR (pid 412 (`bugbout run`))`` when another process holds
    ``output`` for a bout, else ``None``."""
    holder = held_by(output.root / "lock")
    if holder is None or holder.pid == os.getpid():
        return None
    who = holder.describe() if holder.pid else "its pid is not recorded"
    return f"a bout is running on {output.root} ({who})"
