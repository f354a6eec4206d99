"""A comparison as text: a section of tables for the terminal and Markdown, or JSON."""

from __future__ import annotations

from bugbout.compare.pairing import BoutChange, ContestantChange
from bugbout.core.contract.errors import ConfigError
from bugbout.core.report.statistics import LEVEL
from bugbout.render.report_sections import Section, Table, fmt_counts

FORMATS = ("terminal", "markdown", "json")
TITLE = "bugbout compare"


def render_change(change: BoutChange, format: str, *, width: int | None = None) -> str:
    """``change`` as ``terminal`` text (``width`` columns), ``markdown`` or ``json``."""
    check_format(format)
    if format == "json":
        return change.to_json() + "\n"
    title = f"{TITLE}: {change.after} against {change.before}"
    if format == "markdown":
        from bugbout.render.markdown_text import escape, markdown_table

        lines = [f"# {escape(TITLE)}", "", f"- before: {escape(change.before)}"]
        lines += [f"- after: {escape(change.after)}", ""]
        for section in change_sections(change):
            lines += [f"## {escape(section.title)}", "", escape(section.intro), ""]
            lines += [line for table in section.tables for line in (*markdown_table(table), "")]
        return "\n".join(lines).rstrip() + "\n"
    from bugbout.render.terminal_text import render_sections

    return render_sections(title, change_sections(change), width=width)


def check_format(format: str) -> None:
    """Raise unless ``format`` is one of :data:`FORMATS`."""
    if format not in FORMATS:
        raise ConfigError(f"--format {format}: choose one of {', '.join(FORMATS)}")


def change_sections(change: BoutChange) -> list[Section]:
    """The comparison's tables: each contestant's change, then what was left out."""
    rows = [
        (
            c.contestant,
            str(c.tasks),
            _rate(c.before.resolved, c.tasks),
            _rate(c.after.resolved, c.tasks),
            f"{c.difference:+.0%} ({c.level * 100:.3g}% CI {c.low:+.0%} to {c.high:+.0%})"
            if c.tasks
            else "-",
            f"{c.p_value:.2g}",
            f"{c.p_adjusted:.2g}",
            _verdict(c),
        )
        for c in change.contestants
    ]
    changes = Table(
        ("contestant", "paired tasks", "before", "after", "difference (interval)", "p",
         "p (Holm)", "change"),
        rows,
        numeric=frozenset({1, 2, 3, 5, 6}),
        empty="no contestant is in both bouts",
    )  # fmt: skip
    left = Table(
        ("contestant", "tasks left out"),
        [(c.contestant, fmt_counts(c.left_out)) for c in change.contestants if c.left_out],
        empty="every task of both bouts was paired",
    )
    alone = [f"{name} (first only)" for name in change.only_before]
    alone += [f"{name} (second only)" for name in change.only_after]
    threshold = (
        f"a drop of more than {change.threshold:g} points" if change.threshold else "any drop"
    )
    intro = (
        "Each contestant in both bouts, on the tasks both scored it on with the same "
        "ground truth: exact McNemar test, the difference's exact conditional interval, "
        f"Holm-adjusted across contestants. Regressed: {threshold} with a Holm-adjusted "
        "p below 0.05." + (f" Not compared: {', '.join(alone)}." if alone else "")
    )
    return [
        Section("changes", "What changed", intro, [changes]),
        Section("left-out", "Left out", "Tasks not paired, by reason.", [left]),
    ]


def _verdict(c: ContestantChange) -> str:
    """``regressed``, ``improved``, ``dropped`` (significantly, within the threshold) or
    ``no change`` (none the data can tell apart)."""
    if c.regressed:
        return "REGRESSED"
    if c.p_adjusted >= LEVEL or not c.tasks:
        return "no change"
    return "improved" if c.difference > 0 else "dropped"


def _rate(resolved: int, tasks: int) -> str:
    return f"{resolved}/{tasks} ({resolved / tasks:.0%})" if tasks else "-"
