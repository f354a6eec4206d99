"""The sweep summary as text: its headline, its tables (terminal and Markdown) and its
HTML page with charts, from a :class:`~bugbout.sweep.SweepSummary`."""

from __future__ import annotations

from html import escape

from bugbout.core.report.report import rate
from bugbout.render.html_page import Bar, Segment, bar_chart, page_html, section_html
from bugbout.render.report_sections import Section, Table, fmt_count, fmt_rate, fmt_seconds
from bugbout.sweep import TITLE, SweepJob, SweepSummary


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
