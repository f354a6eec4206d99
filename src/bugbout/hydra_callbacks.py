"""Hydra callbacks: when a ``bugbout -m`` sweep ends, summarise its jobs.

Registered in the Hydra config::

    hydra:
      callbacks:
        sweep_summary:
          _target_: bugbout.hydra_callbacks.SweepSummaryCallback
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from bugbout.core.contract.errors import BugboutError
from bugbout.sweep import SUMMARY_FILES, render_summary, write_sweep_summary
from bugbout.sweep_render import headline


class SweepSummaryCallback(Callback):
    """Writes ``summary.md``, ``summary.json`` and ``summary.html`` beside a sweep's jobs."""

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
