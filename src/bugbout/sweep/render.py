"""The sweep summary as text: its headline, its tables (terminal and Markdown) and its
HTML page with charts, from a :class:`~bugbout.sweep.SweepSummary`."""

from __future__ import annotations

from html import escape

from bugbout.core.report.report import rate
from bugbout.render.html_page import Bar, Segment, bar_chart, page_html, section_html
from bugbout.render.report_sections import Section, Table, fmt_count, fmt_rate, fmt_seconds
from bugbout.sweep.summary import TITLE, JobContestant, SweepJob, SweepSummary


def headline(summary: SweepSummary) -> str:
    """One line: the best resolve rate of any contestant in any job (by its interval's
    lower bound, then its rate), then the jobs, the failed ones, and the agent runs
    made and reused."""
    totals = summary.totals
    failed = f", {totals.failed} failed" if totals.failed else ""
    counts = (
        f"{totals.jobs} jobs{failed}; agent runs: {totals.attempts_run} made, "
        f"{totals.attempts_reused} reused"
    )
    rows = [(job, row) for job in _ok(summary) for row in job.contestants if row.scored]
    if not rows:
        return counts
    labels = job_labels(summary)
    job, best = max(rows, key=lambda pair: (pair[1].low or 0.0, pair[1].resolve_rate or 0.0))
    return f"best: {best.contestant} in job {labels[job.name]}, {_rate_cell(best)}; {counts}"


def job_labels(summary: SweepSummary) -> dict[str, str]:
    """Each job's label: its name and the overrides that tell it from the other jobs
    (those every job shares are left out), ``2 (codex, strict)``; ``key=value`` where
    one value is given to two keys."""
    choices = [_choices(job) for job in summary.jobs]
    varying = {
        key
        for key in {key for choice in choices for key in choice}
        if len({choice.get(key) for choice in choices}) > 1
    }
    taken = [{choice[key] for choice in choices if key in choice} for key in varying]
    plain = sum(map(len, taken)) == len(set().union(*taken))  # no value under two keys
    labels = {}
    for job, choice in zip(summary.jobs, choices, strict=True):
        shown = [
            value if plain else f"{key}={value}" for key, value in choice.items() if key in varying
        ]
        labels[job.name] = f"{job.name} ({', '.join(shown)})" if shown else job.name
    return labels


def _choices(job: SweepJob) -> dict[str, str]:
    """A job's overrides as ``key -> value``."""
    return dict(override.partition("=")[::2] for override in job.overrides if "=" in override)


def _rate_cell(row: JobContestant) -> str:
    """``67% 2/3 (21-94%)``: the resolve rate, the count and its 95% interval."""
    counted = f"{_percent(row.resolve_rate)} {row.resolved}/{row.scored}"
    if row.low is None or row.high is None:
        return counted
    return f"{counted} ({round(row.low * 100)}-{round(row.high * 100)}%)"


def summary_sections(summary: SweepSummary) -> list[Section]:
    """The summary as sections of tables, for every text format."""
    return [_jobs_section(summary), _failed_section(summary), _totals_section(summary)]


def _percent(value: float | None) -> str:
    """A rate as a whole percentage (``67%``), ``-`` when there is none: a sweep's
    table is wide already."""
    return "-" if value is None else f"{value * 100:.0f}%"


def _contestant_cell(job: SweepJob, name: str) -> str:
    row = next((c for c in job.contestants if c.contestant == name), None)
    return "-" if row is None else _rate_cell(row)


def _job_row(job: SweepJob, label: str, contestants: list[str]) -> tuple[str, ...]:
    reported = (
        *(_contestant_cell(job, name) for name in contestants),
        "-"
        if job.picks_resolve_rate is None
        else f"{_percent(job.picks_resolve_rate)} {job.picks_resolved}/{job.tasks}",
        _percent(job.precision),
        str(job.abstentions),
        _percent(job.gate_precision),
        fmt_count(job.tokens),
    )
    runs = (
        "-" if job.wall_time is None else fmt_seconds(job.wall_time),
        f"{job.attempts_run}/{job.attempts_reused}",
    )
    return (
        label if job.status == "ok" else f"{label} (failed)",
        job.judge or "-",
        *(reported if job.has_report else ("-",) * len(reported)),
        *(runs if job.has_job else ("-",) * len(runs)),
    )


def _jobs_section(summary: SweepSummary) -> Section:
    labels = job_labels(summary)
    rows = [_job_row(job, labels[job.name], summary.contestants) for job in summary.jobs]
    fixed = 2 + len(summary.contestants)
    table = Table(
        ("job", "judge", *summary.contestants, "picks", "pick precision", "abstained",
         "gate precision", "tokens", "wall time", "runs made/reused"),
        rows,
        numeric=frozenset(range(2, fixed + 7)),
        empty="no jobs",
    )  # fmt: skip
    return Section(
        "jobs",
        "Jobs side by side",
        "One row per job, named by the choices that tell it from the others: each "
        "contestant's resolve rate against the hidden tests, with the count and its 95% "
        "Wilson interval; the judge's picks (their resolve rate over the tasks it could "
        "pick on, their precision, its abstentions); the judge as a merge gate (the "
        "precision of its approvals); the tokens of the attempts the job used; its wall "
        "time; and the agent runs it made and those it reused from the store.",
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
    from bugbout.render.markdown_text import escape, markdown_table

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
    labels = job_labels(summary)
    bars = [
        Bar(
            f"{labels[job.name]} · {row.contestant}"
            if len(job.contestants) > 1
            else labels[job.name],
            (Segment(row.resolve_rate or 0.0, "agent", f"{row.contestant}: resolved"),),
            f"{row.contestant}: {fmt_rate(row.resolve_rate)} ({row.resolved}/{row.scored})",
        )
        for job in _ok(summary)
        for row in job.contestants
    ]
    return bar_chart("Resolve rate per job and contestant", bars)


def _picks_chart(summary: SweepSummary) -> str:
    labels = job_labels(summary)
    bars = [
        Bar(
            labels[job.name],
            (Segment(job.precision or 0.0, "policy", f"{job.judge}: right picks"),),
            f"{fmt_rate(job.precision)} ({job.picks_resolved}/{job.picks} picks, "
            f"{job.abstentions} abstained)",
        )
        for job in _ok(summary)
    ]
    return bar_chart("The judge's picks: precision per job", bars)


def _gate_chart(summary: SweepSummary) -> str:
    labels = job_labels(summary)
    bars = [
        Bar(
            labels[job.name],
            (Segment(job.gate_precision or 0.0, "oracle", f"{job.judge}: right approvals"),),
            f"{fmt_rate(job.gate_precision)} of approvals right",
        )
        for job in _ok(summary)
    ]
    return bar_chart("The judge as a merge gate: precision per job", bars)


def _runs_chart(summary: SweepSummary) -> str:
    labels = job_labels(summary)
    bars = []
    for job in summary.jobs:
        total = job.attempts_run + job.attempts_reused
        share = rate(job.attempts_reused, total)
        bars.append(
            Bar(
                labels[job.name],
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
