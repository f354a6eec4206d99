"""The report, wired: the reporters ``reporters:`` defines and the transcript readers,
made from the bout's settings and the plugin manager."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.transcript import Step
from bugbout.core.contract.types import ReporterPlugin
from bugbout.core.report.reporters import Built, ReportPlugins, build_reporters


@dataclass
class TranscriptHook:
    """Reads an agent's transcript from its log folder through the ``bugbout_transcript``
    hook of ``plugins`` (default: every installed plugin). The plugins, and the agents'
    modules, are loaded at the first read: a report with no logs on disk loads none."""

    plugins: Plugins | None = None

    def __call__(self, *, agent: str, logdir: Path) -> list[Step] | None:
        if self.plugins is None:
            self.plugins = make_plugins()
        steps: list[Step] | None = self.plugins.hook.bugbout_transcript(agent=agent, logdir=logdir)
        return steps


def make_reporters(settings: BoutSettings, plugins: Plugins) -> list[Built]:
    """Each instance of ``reporters:``, made by ``plugins`` with its options."""
    return build_reporters(
        settings.reporters,
        lambda instance: instance.build(plugins, ReporterPlugin),
        lambda name: plugins.get(ReporterPlugin, name).distribution,
    )


def report_plugins(settings: BoutSettings, plugins: Plugins) -> ReportPlugins:
    """The plugin implementations the report uses: the reporters ``settings`` define, the
    transcript readers, the lifecycle hooks and where a broken reporter is noted."""
    return ReportPlugins(
        reporters=make_reporters(settings, plugins),
        transcript=TranscriptHook(plugins),
        notify=plugins.notify,
        problems=plugins.problems,
    )
