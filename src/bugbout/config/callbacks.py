"""Hydra callbacks: before a ``bugbout -m`` sweep's first job, say how many agent runs
it will make; when it ends, summarise its jobs.

Registered in the Hydra config::

    hydra:
      callbacks:
        sweep_summary:
          _target_: bugbout.config.callbacks.SweepSummaryCallback
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from bugbout.core.contract.errors import BugboutError
from bugbout.sweep.render import headline
from bugbout.sweep.summary import SUMMARY_FILES, render_summary, write_sweep_summary


class SweepSummaryCallback(Callback):
    """Says what a sweep will run; writes ``summary.md``, ``summary.json`` and
    ``summary.html`` beside its jobs."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """One line before the first job: the agent runs the sweep's jobs will make and
        their estimated cost (:mod:`bugbout.cli.dry_run`), each job's settings composed as
        Hydra composes them."""
        from hydra import compose

        from bugbout.cli.dry_run import plan, sweep_runs
        from bugbout.config.compose import job_settings, sweep_jobs
        from bugbout.config.layout import find_config
        from bugbout.core.contract.manager import make_plugins

        name = str(config.hydra.job.config_name)
        search = [f"hydra.searchpath=[{', '.join(config.hydra.searchpath)}]"]
        root = find_config(Path.cwd()).parent
        plugins = make_plugins()
        try:
            plans = [
                plan(job_settings(compose(name, [*job, *search]), root), plugins)
                for job in sweep_jobs(list(config.hydra.overrides.task))
            ]
        except Exception as exc:  # a courtesy line: the jobs say what is wrong
            print(f"warning: cannot count the sweep's agent runs: {exc}", file=sys.stderr)
            return
        print(sweep_runs(plans))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Summarise the jobs in ``hydra.sweep.dir``: print the jobs side by side, then
        where the summary files are, in one line."""
        sweep_dir = Path(str(config.hydra.sweep.dir))
        try:
            summary = write_sweep_summary(sweep_dir)
        except (BugboutError, OSError) as exc:
            print(f"warning: no sweep summary: {exc}", file=sys.stderr)
            return
        print(render_summary(summary, "terminal"), end="")
        print(f"sweep summary: {sweep_dir / SUMMARY_FILES['html']} ({headline(summary)})")
