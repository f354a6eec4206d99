"""The sweep summary: every job of a ``bugbout -m`` run, side by side.

A sweep directory (``.bugbout/sweeps/<date_time>/``) holds one directory per job, each
with the job's ``job.json`` (:class:`~bugbout.core.records.Job`) and ``report.json``
(:class:`~bugbout.core.report.Report`). :func:`load_sweep` reads them into a
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
from html import escape
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bugbout.core.errors import BugboutError
from bugbout.core.html_page import Bar, Segment, bar_chart, page_html, section_html
from bugbout.core.records import Job, Record
from bugbout.core.report import GateRow, PolicyPicks, Report, rate
from bugbout.core.report_sections import Section, Table, fmt_count, fmt_rate, fmt_seconds
from bugbout.core.statistics import wilson
from bugbout.core.store import write_atomic

SWEEP_SCHEMA_VERSION = "bugbout.sweep/2"
"""The value of ``summary.json``'s ``schema`` key; it changes when the summary's shape does."""
JOB_FILE = "job.json"
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
            f"{sweep_dir} holds no sweep jobs (directories with {JOB_FILE} and {REPORT_FILE}); "
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
        and (path.name.isdigit() or (path / JOB_FILE).exists() or (path / REPORT_FILE).exists())
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
    job, job_problem = _read(path / JOB_FILE, Job)
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
    _check_format(format)
    if format == "json":
        return summary.to_json() + "\n"
    if format == "markdown":
        return render_markdown(summary)
    if format == "html":
        return render_html(summary)
    from bugbout.plugins.reporters.terminal import TerminalOptions, TerminalReporter

    title = f"{TITLE} {summary.sweep}: {headline(summary)}"
    return TerminalReporter(TerminalOptions(width=width)).render_sections(
        title, summary_sections(summary)
    )


def headline(summary: SweepSummary) -> str:
    """One line: the jobs, the failed ones, and the agent runs made and reused."""
    totals = summary.totals
    failed = f", {totals.failed} failed" if totals.failed else ""
    return (
        f"{totals.jobs} jobs{failed}; agent runs: {totals.attempts_run} made, "
        f"{totals.attempts_reused} reused"
    )


def job_label(job: SweepJob) -> str:
    """The job's name and its overrides: ``0: contestant=a judge=majority``."""
    return f"{job.name}: {' '.join(job.overrides)}" if job.overrides else job.name


def summary_sections(summary: SweepSummary) -> list[Section]:
    """The summary as sections of tables, for every text format."""
    return [_jobs_section(summary), _failed_section(summary), _totals_section(summary)]


def _contestant_cell(job: SweepJob, name: str) -> str:
    row = next((c for c in job.contestants if c.contestant == name), None)
    if row is None:
        return "-"
    if row.low is None or row.high is None:
        return f"{fmt_rate(row.resolve_rate)} ({row.resolved}/{row.scored})"
    interval = f"{round(row.low * 100)}-{round(row.high * 100)}%"
    return f"{fmt_rate(row.resolve_rate)} ({row.resolved}/{row.scored}; 95% CI {interval})"


def _job_row(job: SweepJob, contestants: list[str]) -> tuple[str, ...]:
    reported = (
        *(_contestant_cell(job, name) for name in contestants),
        "-"
        if job.picks_resolve_rate is None
        else f"{fmt_rate(job.picks_resolve_rate)} ({job.picks_resolved}/{job.tasks})",
        fmt_rate(job.precision),
        str(job.abstentions),
        fmt_rate(job.gate_precision),
        fmt_count(job.tokens),
    )
    runs = (
        "-" if job.wall_time is None else fmt_seconds(job.wall_time),
        str(job.attempts_run),
        str(job.attempts_reused),
    )
    return (
        job.name if job.status == "ok" else f"{job.name} (failed)",
        " ".join(job.overrides) or "-",
        job.judge or "-",
        *(reported if job.has_report else ("-",) * len(reported)),
        *(runs if job.has_job else ("-",) * len(runs)),
    )


def _jobs_section(summary: SweepSummary) -> Section:
    rows = [_job_row(job, summary.contestants) for job in summary.jobs]
    fixed = 3 + len(summary.contestants)
    table = Table(
        ("job", "overrides", "judge", *(f"{name} resolve rate" for name in summary.contestants),
         "picks resolve rate", "pick precision", "abstentions", "merge-gate precision", "tokens",
         "wall time", "runs made", "runs reused"),
        rows,
        numeric=frozenset(range(3, fixed + 9)),
        empty="no jobs",
    )  # fmt: skip
    return Section(
        "jobs",
        "Jobs side by side",
        "One row per job: each contestant's resolve rate against the hidden tests, with "
        "its 95% Wilson interval; the "
        "judge's picks (their resolve rate over the tasks it could pick on, their "
        "precision, its abstentions); the judge as a merge gate (the precision of its "
        "approvals); the tokens of the attempts the job used; its wall time; and the agent "
        "runs it made and those it reused from the store.",
        [table],
    )


def _failed_section(summary: SweepSummary) -> Section:
    rows = [(job.name, job.reason or "") for job in summary.jobs if job.status == "failed"]
    return Section(
        "failed",
        "Failed jobs",
        "Jobs whose job.json or report.json is missing or unreadable; their figures are "
        "left out or partial.",
        [Table(("job", "reason"), rows, empty="none: every job wrote its records")],
    )


def _totals_section(summary: SweepSummary) -> Section:
    totals = summary.totals
    rows = [
        ("jobs", str(totals.jobs)),
        ("failed jobs", str(totals.failed)),
        ("agent runs made", str(totals.attempts_run)),
        ("agent runs reused", str(totals.attempts_reused)),
        ("tokens (each agent run once)", fmt_count(totals.tokens)),
        ("jobs' wall time, added up", fmt_seconds(totals.wall_time)),
        ("elapsed", "-" if totals.elapsed is None else fmt_seconds(totals.elapsed)),
    ]
    return Section(
        "totals",
        "The whole sweep",
        "A run reused is an attempt a job found in the store, run by an earlier job or bout "
        "with the same task and the same effective contestant settings.",
        [Table(("", "value"), rows, numeric=frozenset({1}))],
    )


def render_markdown(summary: SweepSummary) -> str:
    """``summary.md``: the sections as GitHub-flavoured Markdown tables."""
    from bugbout.plugins.reporters.markdown import escape, markdown_table

    lines = [f"# {TITLE}", "", f"- sweep: {escape(summary.sweep)}", f"- {headline(summary)}", ""]
    for section in summary_sections(summary):
        lines += [f"## {escape(section.title)}", "", escape(section.intro), ""]
        for table in section.tables:
            lines += [*markdown_table(table), ""]
    return "\n".join(lines).rstrip() + "\n"


def render_html(summary: SweepSummary) -> str:
    """``summary.html``: one self-contained page with the tables and SVG plots."""
    parts = summary_sections(summary)
    charts = {
        "jobs": [
            _resolve_chart(summary),
            _picks_chart(summary),
            _gate_chart(summary),
            _runs_chart(summary),
        ]
    }
    nav = "".join(f'<a href="#{section.key}">{escape(section.title)}</a>' for section in parts)
    body = [
        f"<h1>{escape(TITLE)}</h1>",
        f'<p class="summary">{escape(f"Sweep {summary.sweep}: {headline(summary)}.")}</p>',
        f"<nav>{nav}</nav>",
        *(section_html(section, charts.get(section.key, [])) for section in parts),
    ]
    return page_html(f"{TITLE}: {summary.sweep}", body)


def _ok(summary: SweepSummary) -> list[SweepJob]:
    return [job for job in summary.jobs if job.status == "ok"]


def _resolve_chart(summary: SweepSummary) -> str:
    bars = [
        Bar(
            f"{job_label(job)} · {row.contestant}" if len(job.contestants) > 1 else job_label(job),
            (Segment(row.resolve_rate or 0.0, "agent", f"{row.contestant}: resolved"),),
            f"{row.contestant}: {fmt_rate(row.resolve_rate)} ({row.resolved}/{row.scored})",
        )
        for job in _ok(summary)
        for row in job.contestants
    ]
    return bar_chart("Resolve rate per job and contestant", bars)


def _picks_chart(summary: SweepSummary) -> str:
    bars = [
        Bar(
            job_label(job),
            (Segment(job.precision or 0.0, "policy", f"{job.judge}: right picks"),),
            f"{fmt_rate(job.precision)} ({job.picks_resolved}/{job.picks} picks, "
            f"{job.abstentions} abstained)",
        )
        for job in _ok(summary)
    ]
    return bar_chart("The judge's picks: precision per job", bars)


def _gate_chart(summary: SweepSummary) -> str:
    bars = [
        Bar(
            job_label(job),
            (Segment(job.gate_precision or 0.0, "oracle", f"{job.judge}: right approvals"),),
            f"{fmt_rate(job.gate_precision)} of approvals right",
        )
        for job in _ok(summary)
    ]
    return bar_chart("The judge as a merge gate: precision per job", bars)


def _runs_chart(summary: SweepSummary) -> str:
    bars = []
    for job in summary.jobs:
        total = job.attempts_run + job.attempts_reused
        share = rate(job.attempts_reused, total)
        bars.append(
            Bar(
                job_label(job),
                (
                    Segment(rate(job.attempts_run, total) or 0.0, "run", f"{job.name}: made"),
                    Segment(share or 0.0, "reused", f"{job.name}: reused"),
                ),
                f"{job.attempts_run} made, {job.attempts_reused} reused",
            )
        )
    return bar_chart(
        "Agent runs per job: made, or reused from the store",
        bars,
        legend=(("run", "made"), ("reused", "reused")),
    )
