"""The sweep summary: every job of a ``bugbout -m`` run, side by side.

A sweep directory (``.bugbout/sweeps/<date_time>/``) holds one directory per job, each
with the job's ``job.json`` (:class:`~bugbout.core.store.verdict_records.Job`) and ``report.json``
(:class:`~bugbout.core.report.report.Report`). :func:`load_sweep` reads them into a
:class:`SweepSummary`; a job whose files are missing or unreadable is listed as failed,
with the reason. :func:`write_sweep_summary` writes ``summary.md``, ``summary.json`` and
``summary.html`` beside the jobs (at the end of a sweep, and for ``bugbout report
--sweep``), :func:`render_summary` renders a summary in one format, and
:func:`render_sweep` renders a sweep directory's without writing anything. Nothing here
runs a job or reads the shared store.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bugbout.core.contract.errors import BugboutError
from bugbout.core.report.report import GateRow, PolicyPicks, Report
from bugbout.core.report.statistics import wilson
from bugbout.core.store.records import Record
from bugbout.core.store.store import JOB, write_atomic
from bugbout.core.store.verdict_records import Job

SWEEP_SCHEMA_VERSION = "bugbout.sweep/2"
"""The value of ``summary.json``'s ``schema`` key; it changes when the summary's shape does."""
REPORT_FILE = "report.json"
ERROR_FILE = "error.txt"
"""Written in a sweep job's directory when the job fails: why, in one line."""
SUMMARY_FILES = {"markdown": "summary.md", "json": "summary.json", "html": "summary.html"}
"""The files :func:`write_sweep_summary` writes, by format."""
FORMATS = ("terminal", "markdown", "json", "html")
TITLE = "bugbout sweep summary"

_Model = TypeVar("_Model", bound=BaseModel)


# -- the summary's records ----------------------------------------------------------------


class JobContestant(Record):
    """One contestant of one job: its patches against the hidden tests."""

    contestant: str
    agent: str = ""
    model: str | None = None
    scored: int = 0
    resolved: int = 0
    resolve_rate: float | None = None
    low: float | None = None
    """The resolve rate's 95% Wilson interval; ``None`` when nothing was scored."""
    high: float | None = None


class SweepJob(Record):
    """One job's figures, from its ``job.json`` and ``report.json``."""

    name: str
    """The job's directory, under the sweep directory (Hydra's job number by default)."""
    number: int | None = None
    """The job number, when the directory's name is one."""
    status: Literal["ok", "failed"] = "ok"
    reason: str | None = None
    """Why the job is listed as failed: its files are missing or unreadable."""
    has_job: bool = False
    """Its ``job.json`` was read: the overrides, the judge, the times and the runs."""
    has_report: bool = False
    """Its ``report.json`` was read: the resolve rates, the picks, the gate, the tokens."""
    overrides: list[str] = Field(default_factory=list)
    judge: str | None = None
    auditor: str | None = None
    contestants: list[JobContestant] = Field(default_factory=list)
    tasks: int = 0
    """Tasks the judge could pick on: scored, with at least one scored patch."""
    picks: int = 0
    picks_resolved: int = 0
    abstentions: int = 0
    picks_resolve_rate: float | None = None
    """``picks_resolved / tasks``: an abstention counts as a task not resolved."""
    precision: float | None = None
    """``picks_resolved / picks``."""
    gate_precision: float | None = None
    """The judge as a merge gate: approved patches that resolve their task."""
    tokens: int = 0
    """Tokens of every attempt the job used, run or reused."""
    wall_time: float | None = None
    """Seconds from the job's start to its reports."""
    started: str | None = None
    attempts_run: int = 0
    attempts_reused: int = 0


class SweepTotals(Record):
    """The whole sweep."""

    jobs: int = 0
    failed: int = 0
    attempts_run: int = 0
    """Agent runs the jobs made."""
    attempts_reused: int = 0
    """Agent runs the jobs found in the store instead of running them."""
    tokens: int = 0
    """Tokens of the agent runs the jobs used, each run counted once."""
    wall_time: float = 0.0
    """The jobs' wall times added up."""
    elapsed: float | None = None
    """Seconds from the first job's start to the last job's end."""


class SweepSummary(Record):
    """A sweep's jobs side by side; ``summary.json`` is this record's dump."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: str = Field(default=SWEEP_SCHEMA_VERSION, alias="schema")
    sweep: str
    """The sweep directory's name (its date and time)."""
    contestants: list[str] = Field(default_factory=list)
    """Every job's contestants, sorted."""
    jobs: list[SweepJob] = Field(default_factory=list)
    totals: SweepTotals = Field(default_factory=SweepTotals)

    def to_json(self, *, indent: int | None = 2) -> str:
        """``summary.json``."""
        return self.model_dump_json(by_alias=True, indent=indent)


# -- loading the jobs ---------------------------------------------------------------------


def load_sweep(sweep_dir: Path | str) -> SweepSummary:
    """The summary of the jobs under ``sweep_dir``; reads the jobs' files, writes nothing."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise BugboutError(
            f"{sweep_dir} is not a directory; pass a sweep's directory, "
            "e.g. .bugbout/sweeps/<date_time>"
        )
    dirs = job_dirs(sweep_dir)
    if not dirs:
        raise BugboutError(
            f"{sweep_dir} holds no sweep jobs (directories with {JOB} and {REPORT_FILE}); "
            "pass a directory under .bugbout/sweeps/"
        )
    loaded = [_load_job(path) for path in dirs]
    jobs = [job for job, _, _ in loaded]
    return SweepSummary(
        sweep=sweep_dir.resolve().name,
        contestants=sorted({c.contestant for job in jobs for c in job.contestants}),
        jobs=jobs,
        totals=SweepTotals(
            jobs=len(jobs),
            failed=sum(job.status == "failed" for job in jobs),
            attempts_run=sum(job.attempts_run for job in jobs),
            attempts_reused=sum(job.attempts_reused for job in jobs),
            tokens=_distinct_tokens(loaded),
            wall_time=sum(job.wall_time or 0.0 for job in jobs),
            elapsed=_elapsed(jobs),
        ),
    )


def job_dirs(sweep_dir: Path) -> list[Path]:
    """The job directories under ``sweep_dir``: each named by a job number or holding a
    job's files, in job order."""
    dirs = [
        path
        for path in sweep_dir.iterdir()
        if path.is_dir()
        and (path.name.isdigit() or (path / JOB).exists() or (path / REPORT_FILE).exists())
    ]
    return sorted(dirs, key=lambda p: (0, int(p.name), "") if p.name.isdigit() else (1, 0, p.name))


def _read(path: Path, model: type[_Model]) -> tuple[_Model | None, str | None]:
    """The record in ``path``, or why there is none (one line)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, f"no {path.name}: the job failed or is still running"
    except OSError as exc:
        return None, f"cannot read {path.name}: {exc.strerror or exc}"
    try:
        return model.model_validate_json(data), None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        detail = f"{where}: {error['msg']}" if where else error["msg"]
        return None, f"{path.name} is unreadable ({detail})"


def _load_job(path: Path) -> tuple[SweepJob, Job | None, Report | None]:
    job, job_problem = _read(path / JOB, Job)
    report, report_problem = _read(path / REPORT_FILE, Report)
    problems = [problem for problem in (job_problem, report_problem) if problem]
    failure = path / ERROR_FILE
    if failure.is_file():  # the job said why it failed: that is the reason
        said = failure.read_text(errors="replace").strip().splitlines()
        problems = [said[0][:300] if said else f"the job failed ({ERROR_FILE} is empty)"]
    judge = job.judge if job else None
    figures = SweepJob(
        name=path.name,
        number=int(path.name) if path.name.isdigit() else None,
        status="failed" if problems else "ok",
        reason="; ".join(problems) or None,
        has_job=job is not None,
        has_report=report is not None,
        overrides=job.overrides if job else [],
        judge=judge,
        auditor=job.auditor if job else None,
        wall_time=job.wall_time if job else None,
        started=job.started if job else None,
        attempts_run=job.attempts_run if job else 0,
        attempts_reused=job.attempts_reused if job else 0,
    )
    if report is None:
        return figures, job, report
    figures.contestants = [
        JobContestant(
            contestant=row.contestant,
            agent=row.agent,
            model=row.model,
            scored=row.scored,
            resolved=row.resolved,
            resolve_rate=row.resolve_rate,
            low=interval.low if row.scored else None,
            high=interval.high if row.scored else None,
        )
        for row in report.agents
        for interval in [wilson(row.resolved, row.scored)]
    ]
    figures.tokens = report.totals.tokens
    figures.tasks = report.picking.tasks
    if judge is None and len(report.policies) == 1:
        figures.judge = judge = report.policies[0]
    picks = _of_policy(report.picking.policies, judge)
    if picks is not None:
        figures.picks = picks.picks
        figures.picks_resolved = picks.resolved
        figures.abstentions = picks.abstentions
        figures.picks_resolve_rate = picks.resolve_rate
        figures.precision = picks.precision
    gate = _of_policy(report.merge_gate.policies, judge)
    if gate is not None:
        figures.gate_precision = gate.precision
    return figures, job, report


_Row = TypeVar("_Row", PolicyPicks, GateRow)


def _of_policy(rows: list[_Row], policy: str | None) -> _Row | None:
    return next((row for row in rows if row.policy == policy), None)


def _distinct_tokens(loaded: Iterable[tuple[SweepJob, Job | None, Report | None]]) -> int:
    """Tokens of every agent run the jobs used, a run shared by several jobs counted once:
    an agent's usage is shared when it comes from the same attempt records."""
    usage: dict[tuple[object, ...], int] = {}
    for figures, job, report in loaded:
        if report is None:
            continue
        paths: dict[str, set[str]] = {}
        for attempt in job.attempts if job else []:
            paths.setdefault(attempt.contestant, set()).add(attempt.path)
        for row in report.totals.agents:
            used = frozenset(paths.get(row.name, ()))
            key = (row.name, row.role, row.agent, row.model, used or figures.name)
            usage[key] = row.tokens
    return sum(usage.values())


def _elapsed(jobs: list[SweepJob]) -> float | None:
    """From the first job's start to the last job's end, over the jobs that say when."""
    spans = []
    for job in jobs:
        if job.started is None or job.wall_time is None:
            continue
        try:
            start = datetime.fromisoformat(job.started)
        except ValueError:
            continue
        spans.append((start, start + timedelta(seconds=job.wall_time)))
    try:
        return (max(end for _, end in spans) - min(start for start, _ in spans)).total_seconds()
    except (TypeError, ValueError):  # naive and aware times mixed, or no span
        return None


# -- writing and rendering ----------------------------------------------------------------


def write_sweep_summary(sweep_dir: Path | str) -> SweepSummary:
    """Write ``summary.md``, ``summary.json`` and ``summary.html`` beside the jobs of
    ``sweep_dir``, atomically, and return the summary."""
    sweep_dir = Path(sweep_dir)
    summary = load_sweep(sweep_dir)
    for format, name in SUMMARY_FILES.items():
        write_atomic(sweep_dir / name, render_summary(summary, format))
    return summary


def render_sweep(sweep_dir: Path | str, format: str = "terminal") -> str:
    """The summary of the sweep in ``sweep_dir`` in one of :data:`FORMATS`, rebuilt from
    its jobs' files; writes nothing."""
    _check_format(format)
    return render_summary(load_sweep(sweep_dir), format)


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise BugboutError(
            f"unknown format {format!r} for a sweep; use one of {', '.join(FORMATS)}"
        )


def render_summary(summary: SweepSummary, format: str, *, width: int | None = None) -> str:
    """``summary`` as ``terminal`` text (``width`` columns), ``markdown``, ``json`` or
    ``html``."""
    from bugbout.sweep.render import headline, render_html, render_markdown, summary_sections

    _check_format(format)
    if format == "json":
        return summary.to_json() + "\n"
    if format == "markdown":
        return render_markdown(summary)
    if format == "html":
        return render_html(summary)
    from bugbout.render.terminal_text import render_sections

    sections = render_sections(f"{TITLE} {summary.sweep}", summary_sections(summary), width=width)
    return f"{headline(summary)}\n{sections}"
