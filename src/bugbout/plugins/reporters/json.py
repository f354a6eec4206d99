"""The ``json`` reporter: ``report.json``, valid against the shipped JSON Schema
(``bugbout/schemas/report.schema.json``; :func:`bugbout.core.report.report.report_schema`)."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from bugbout.reporters import Options, Report, ReporterPlugin, hookimpl


class JsonOptions(Options):
    """Options of the ``json`` reporter."""

    indent: int | None = Field(default=2, ge=0)
    """Spaces per level; ``null`` writes one line."""


class JsonReporter:
    """The report record as JSON, with its ``schema`` version first."""

    name = "json"
    filename: str | None = "report.json"

    def __init__(self, options: JsonOptions | None = None) -> None:
        self.options = options or JsonOptions()

    def render(self, report: Report) -> str:
        return report.to_json(indent=self.options.indent) + "\n"


def render_json(report: Report) -> str:
    """The report as JSON."""
    return JsonReporter().render(report)


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name=JsonReporter.name,
        factory=JsonReporter,
        options=JsonOptions,
        description="report.json: every figure, valid against the shipped JSON Schema",
    )
