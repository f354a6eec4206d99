"""The ``markdown`` reporter: ``report.md``, a heading and GitHub-flavoured tables per
section."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.reporters import (
    NoOptions,
    Report,
    ReporterPlugin,
    Section,
    Transcript,
    environment_line,
    escape,
    hookimpl,
    markdown_table,
    sections,
)


class MarkdownReporter:
    """The report as Markdown (GitHub-flavoured tables)."""

    name = "markdown"
    filename: str | None = "report.md"

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options

    def render(self, report: Report) -> str:
        parts = sections(report)
        lines = ["# bugbout report", "", *section_lines(parts[0])]
        lines += [
            "- " + escape(f"{report.found.scored} scored tasks of {report.found.tasks} found"),
            "- contestants: " + (", ".join(map(escape, report.contestants)) or "none"),
            "- examiners: " + (", ".join(map(escape, report.examiners)) or "none"),
            "- judge policies: " + (", ".join(map(escape, report.policies)) or "none"),
            "",
        ]
        for section in parts[1:]:
            lines += section_lines(section)
        lines += task_lines(report)
        return "\n".join(lines).rstrip() + "\n"


def section_lines(section: Section) -> list[str]:
    """A section as Markdown: its heading, introduction, tables and notes; one line when
    it has nothing to say."""
    nothing = section.nothing()
    if nothing is not None:
        return [f"*{escape(nothing)}*", ""]
    lines = [f"## {escape(section.title)}", ""]
    for part in section.intro.split("\n\n"):  # the decision in bold
        lines += [f"**{escape(part)}**" if section.key == "decision" else escape(part), ""]
    for table in section.tables:
        lines += [*markdown_table(table), ""]
    lines += [f"- {escape(note)}" for note in section.notes]
    return [*lines, ""] if section.notes else lines


SHOWN_FAILING = 3
"""Failing tests named per audit in the Markdown report (the HTML page lists them all)."""


def task_lines(report: Report) -> list[str]:
    """A short section per task: each patch's status, score and audit, each pick and why."""
    if not report.pages:
        return []
    titles = {row.id: f"{row.origin()} {row.title}" for row in report.tasks}
    lines = ["## Tasks one by one", ""]
    for page in report.pages:
        lines += [f"### {escape(page.id)}: {escape(titles.get(page.id, ''))}", ""]
        if page.environment or page.versions:
            lines.append(f"- environment: {escape(environment_line(page))}")
        for patch in page.patches:
            text = patch.status.value + ("" if patch.counted else " (not counted)")
            text += f": {patch.reason}" if patch.reason else ""
            text += f"; {patch.score.value}" if patch.score else ""
            if patch.audit:
                text += f"; audit {patch.audit.verdict.value}"
                failing = [f"{f.test} ({f.line})" for f in patch.audit.failing]
                if failing:
                    more = len(failing) - SHOWN_FAILING
                    text += ": " + ", ".join(failing[:SHOWN_FAILING])
                    text += f" and {more} more" if more > 0 else ""
            text += _transcript_text(patch.transcript)
            lines.append(f"- **{escape(patch.name)}**: {escape(text)}")
        for pick in page.picks:
            chosen = f"picks {pick.pick}" if pick.pick else "abstains"
            lines.append(f"- judge {escape(pick.policy)} {escape(chosen)}: {escape(pick.reason)}")
        lines.append("")
    return lines


def _transcript_text(transcript: Transcript | None) -> str:
    """Where the agent went wrong, in words: its first failing step and its test runs."""
    if transcript is None or not transcript.steps:
        return ""
    text = f"; {len(transcript.test_runs)} test runs"
    if transcript.first_failure is not None:
        step = transcript.steps[transcript.first_failure]
        code = f" (exit {step.exit_code})" if step.exit_code is not None else ""
        first = step.text.strip().splitlines()[0][:120] if step.text.strip() else step.kind
        text += f"; first failure, step {transcript.first_failure + 1}: {first}{code}"
    return text


def render_markdown(report: Report) -> str:
    """The report as Markdown."""
    return MarkdownReporter().render(report)


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name=MarkdownReporter.name,
        factory=MarkdownReporter,
        description="report.md: the report's sections as GitHub-flavoured Markdown tables",
    )
