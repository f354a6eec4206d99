"""The report as sections of text tables, in the order every text reporter (terminal,
Markdown, HTML) shows them, and the formats of their figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bugbout.core.report.reasons import SCORE_WORDS, STATUS_WORDS
from bugbout.core.report.report import Report, TierRate, rate
from bugbout.core.report.report_tampering import REASONS_SHOWN
from bugbout.core.store.race_records import AttemptStatus


def fmt_rate(value: float | None) -> str:
    """A rate as a percentage with one decimal, ``-`` when there is none."""
    return "-" if value is None else f"{value * 100:.1f}%"


def fmt_count(value: int) -> str:
    """A count, with thousands separated."""
    return f"{value:,}"


def fmt_seconds(seconds: float) -> str:
    """A duration: ``12.3s``, ``4m 05s``, ``2h 03m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def fmt_counts(counts: dict[str, int]) -> str:
    """``{"quota": 1, "timeout": 2}`` as ``quota 1, timeout 2``; ``-`` when empty."""
    return ", ".join(f"{key} {value}" for key, value in counts.items()) or "-"


def fmt_statuses(counts: dict[str, int]) -> str:
    """Attempts by how they ended, in words: ``timed out 2, could not run 1``."""
    return fmt_counts({STATUS_WORDS[AttemptStatus(key)]: n for key, n in counts.items()})


@dataclass(frozen=True)
class Table:
    """One table of a section: column headings and rows of text."""

    columns: tuple[str, ...]
    rows: Sequence[Sequence[str]]
    numeric: frozenset[int] = frozenset()
    """Indices of the columns that hold numbers (aligned right)."""
    caption: str = ""
    empty: str = "nothing to report"
    """What to show instead of a table without rows."""


@dataclass(frozen=True)
class Section:
    """One section of the report, as every text reporter shows it."""

    key: str
    """Its anchor: ``agents``, ``picking``, ``merge-gate``, ``separation``, ``found``,
    ``tasks``, ``totals``, ``costs``."""
    title: str
    intro: str
    tables: list[Table] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    """Lines shown after the tables (what each comparison means)."""

    def nothing(self) -> str | None:
        """The one line a section shows when it has nothing to say (every table empty,
        no note), else ``None``."""
        if not self.tables or self.notes or any(table.rows for table in self.tables):
            return None
        return f"{self.title}: " + "; ".join(table.empty for table in self.tables) + "."


def _agent_label(agent: str, model: str | None) -> str:
    return f"{agent} ({model})" if model else agent


def sections(report: Report) -> list[Section]:
    """The report's sections as tables of text, in the order reporters show them."""
    from bugbout.render.report_contamination import contamination_section  # they build on
    from bugbout.render.report_costs import costs_section  # this module
    from bugbout.render.report_decision import decision_section
    from bugbout.render.report_judging import gate_section, picking_section, separation_section
    from bugbout.render.report_pooled import repositories_section
    from bugbout.render.report_repeats import repeats_section

    return [
        decision_section(report),
        confidence_section(report),
        costs_section(report),
        _agents_section(report),
        *([repositories_section(report)] if len(report.pooled) > 1 else []),
        rounds_section(report),
        *([repeats_section(report)] if report.repeats.k > 1 else []),
        picking_section(report),
        gate_section(report),
        separation_section(report),
        _found_section(report),
        _tasks_section(report),
        reasons_section(report),
        _totals_section(report),
        tampered_section(report),
        contamination_section(report),
        *([_timeouts_section(report)] if report.timeouts else []),
    ]


def _agents_section(report: Report) -> Section:
    tiers = sorted({tier for row in report.agents for tier in row.tiers})
    split = tiers if len(tiers) > 1 else []
    probed = any(row.probed for row in report.agents)  # a guidance probe: its column
    rows = [
        (
            row.contestant,
            _agent_label(row.agent, row.model),
            str(row.attempted),
            str(row.scored),
            str(row.resolved),
            str(row.fixed_but_broke),
            str(row.wrong_fix),
            str(row.no_fix),
            fmt_rate(row.resolve_rate),
            *(_tier_rate(row.tiers.get(tier)) for tier in split),
            fmt_statuses(row.failures),
            str(row.not_counted),
            *([f"{row.guidance_read} of {row.probed}" if row.probed else "-"] if probed else []),
        )
        for row in report.agents
    ]
    table = Table(
        ("contestant", "agent", "attempted", "scored", "resolved", "fixed but broke",
         "wrong fix", "no fix", "resolve rate", *(f"on {tier}" for tier in split),
         "did not finish", "left out", *(["read its guidance"] if probed else [])),
        rows,
        numeric=frozenset({2, 3, 4, 5, 6, 7, 8, *range(9, 9 + len(split)), 10 + len(split)}),
        empty="no contestant attempts",
    )  # fmt: skip
    return Section(
        "agents",
        "Agents",
        f"Each contestant's patches against the maintainers' hidden tests, over "
        f"{report.found.scored} scored tasks{_tiers_used(report)}. Attempts stopped by a "
        "quota or an infrastructure failure are left out of the resolve rate; every attempt "
        "that did not finish is counted by how it ended."
        + (
            " Read its guidance: attempts whose agent said the code seeded into the "
            "instruction files it was given."
            if probed
            else ""
        ),
        [table],
        notes=tuple(
            f"{row.contestant}'s native setup opened {', '.join(row.opened)} beside its model."
            for row in report.agents
            if row.opened
        ),
    )


def _found_section(report: Report) -> Section:
    found = report.found
    rows: list[tuple[str, str]] = [("commits examined", str(found.examined))]
    rows += [(f"left out: {reason}", str(count)) for reason, count in found.excluded.items()]
    rows += [("tasks", str(found.tasks)), ("scored", str(found.scored))]
    rows += [(f"not scored: {reason}", str(count)) for reason, count in found.not_scored.items()]
    tables = [Table(("", "count"), rows, numeric=frozenset({1}))]
    if len(found.tiers) > 1:  # each tier's yield: the share of its tasks ground truth kept
        tiers = [
            (tier, str(row.tasks), str(row.scored), fmt_rate(rate(row.scored, row.tasks)))
            for tier, row in found.tiers.items()
        ]
        tables.append(
            Table(("tier", "tasks", "scored", "share scored"), tiers, numeric=frozenset({1, 2, 3}))
        )
    return Section(
        "found",
        "How the tasks were found",
        "How much history was examined, why fixes were left out, and which tasks could not "
        "be scored; with tasks of several tiers, how many of each tier's were scored.",
        tables,
    )


def _tiers_used(report: Report) -> str:
    """The tiers of the scored tasks, each with its count (`` (tiers: feature 3, fix 1)``)."""
    counts: dict[str, int] = {}
    for task in report.tasks:
        if task.scored:
            counts[task.tier] = counts.get(task.tier, 0) + 1
    shown = ", ".join(f"{tier} {count}" for tier, count in sorted(counts.items()))
    return f" (tiers: {shown})" if shown else ""


def _tier_rate(tier: TierRate | None) -> str:
    """A tier's resolve rate with its count (``50.0% of 4``)."""
    return f"{fmt_rate(tier.resolve_rate)} of {tier.scored}" if tier else "-"


def _tasks_section(report: Report) -> Section:
    rows = []
    for task in report.tasks:
        outcome = (
            [
                SCORE_WORDS[task.scores[name]]
                if name in task.scores
                else STATUS_WORDS[task.failures[name]]
                if name in task.failures
                else "-"
                for name in report.contestants
            ]
            if task.scored
            else ["-" for _ in report.contestants]
        )
        picks = [
            "-" if policy not in task.picks else task.picks[policy] or "(abstained)"
            for policy in report.policies
        ]
        rows.append(
            (
                task.id,
                task.origin(),
                task.title,
                "yes" if task.scored else f"no: {task.reason}",
                *outcome,
                *picks,
            )
        )
    table = Table(
        ("task", "origin", "title", "scored", *report.contestants,
         *(f"{policy} pick" for policy in report.policies)),
        rows,
        empty="no tasks",
    )  # fmt: skip
    return Section(
        "tasks",
        "Tasks",
        "Every task, each contestant's score on it, and each policy's pick.",
        [table],
    )


def _totals_section(report: Report) -> Section:
    totals = report.totals
    rows: list[tuple[str, ...]] = [
        (
            row.name,
            row.role,
            _agent_label(row.agent, row.model),
            str(row.attempts),
            str(row.tasks),
            fmt_count(row.tokens) if row.usage else "-",
            fmt_seconds(row.wall_time),
        )
        for row in totals.agents
    ]
    if rows:
        rows.append(
            ("total", "", "", str(sum(row.attempts for row in totals.agents)), "",
             fmt_count(totals.tokens), fmt_seconds(totals.wall_time))
        )  # fmt: skip
    return Section(
        "totals",
        "Tokens and time",
        "What each agent spent, every round included.",
        [
            Table(
                ("agent", "role", "runs as", "attempts", "tasks", "tokens", "wall time"),
                rows,
                numeric=frozenset({3, 4, 5, 6}),
                empty="no attempts",
            )
        ],
    )


def confidence_section(report: Report) -> Section:
    """The section that opens every report: the headline, then the intervals and the
    comparisons behind it."""
    sure = report.confidence
    rates = Table(
        ("contestant", "resolved", "resolve rate", "95% interval"),
        [
            (row.name, f"{row.resolved}/{row.tasks}", _percent(row.rate),
             f"{_percent(row.low)}-{_percent(row.high)}" if row.tasks else "-")
            for row in sure.agents
        ],
        numeric=frozenset({1, 2}),
        empty="no contestant was scored",
    )  # fmt: skip
    compared = Table(
        ("compared", "tasks", "only the first", "only the second", "difference (interval)",
         "p", "p (Holm)"),
        [
            (f"{row.a} vs {row.b}", str(row.tasks), str(row.only_a), str(row.only_b),
             f"{row.difference:+.0%} ({row.level * 100:.3g}% CI {row.low:+.0%} to {row.high:+.0%})"
             if row.tasks else "-",
             f"{row.p_value:.2g}", f"{row.p_adjusted:.2g}")
            for row in [*sure.pairs, *sure.judges]
        ],
        numeric=frozenset({1, 2, 3, 5, 6}),
        empty="nothing to compare: one contestant and no judge",
    )  # fmt: skip
    return Section(
        "confidence",
        "How sure",
        f"{sure.headline} ({sure.method}.)",
        [rates, compared],
        tuple(row.sentence for row in [*sure.pairs, *sure.judges]),
    )


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{round(value * 100)}%"


def _timeouts_section(report: Report) -> Section:
    """Test runs after the race cut short by ``verdicts.timeout``: their evidence is partial."""
    return Section("timeouts", "Timeouts", "\n".join(report.timeouts))


def tampered_section(report: Report) -> Section:
    """The section naming every tampered patch."""
    rows = []
    for row in report.tampered:
        shown = row.reasons[:REASONS_SHOWN]
        more = len(row.reasons) - len(shown)
        reasons = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
        rows.append((row.task, row.contestant, ", ".join(row.found_by), reasons or "-"))
    table = Table(
        ("task", "contestant", "found by", "why"), rows, empty="no patch tampered with a test run"
    )
    return Section(
        "tampered",
        "Tampered",
        "Patches that meddled with a test run (a canary test that must fail passed, pytest "
        "changed under the tests, outcomes forged) or whose source does what a fix has no "
        "reason to: never resolved, never picked.",
        [table],
    )


def rounds_section(report: Report) -> Section:
    """pass@k per contestant and what each retry round added."""
    rows = [
        (
            agent.contestant if row.round == 1 else "",
            str(row.round),
            str(row.reached),
            f"{row.resolved}/{agent.tasks}",
            _percent(row.rate),
            f"{_percent(row.low)}-{_percent(row.high)}" if agent.tasks else "-",
            str(row.kept),
            str(row.lost),
            row.sentence or "-",
        )
        for agent in report.rounds.agents
        for row in agent.rounds
    ]
    left_out = [f"{a.contestant} {a.left_out}" for a in report.rounds.agents if a.left_out]
    note = (
        f" Left out, an earlier round having no score: {', '.join(left_out)}." if left_out else ""
    )
    return Section(
        "rounds",
        "Retry rounds",
        "For each contestant and round k: pass@k, the tasks the patch of any of its first "
        "k rounds resolves; kept, those the patch a bout keeps after k rounds resolves; "
        "lost, those an earlier round's patch resolved and round k's does not. Methods: "
        f"{report.rounds.method}.{note}",
        [
            Table(
                ("contestant", "round", "ran on", "pass@k", "rate", "95% interval", "kept",
                 "lost", "what the round added"),
                rows,
                numeric=frozenset({1, 2, 3, 4, 6, 7}),
                empty="one round only: no task was given another round",
            )
        ],
    )  # fmt: skip


def reasons_section(report: Report) -> Section:
    """Every attempt that did not finish and every judge abstention, with why."""
    why = report.reasons
    unfinished = Table(
        ("task", "contestant", "round", "ended", "why"),
        [
            (row.task, row.contestant, str(row.round), STATUS_WORDS[row.status], row.reason)
            for row in why.unfinished
        ],
        numeric=frozenset({2}),
        caption="Attempts that did not finish",
        empty="every attempt finished",
    )
    abstentions = Table(
        ("task", "policy", "why"),
        [(row.task, row.policy, row.reason) for row in why.abstentions],
        caption="Judge abstentions",
        empty="no judge abstained",
    )
    return Section(
        "reasons",
        "Why",
        "Why each last attempt that did not finish ended as it did, and why a judge picked "
        "no patch.",
        [unfinished, abstentions],
    )
