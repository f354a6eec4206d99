"""A ``bugbout -m`` sweep's summary: every job side by side
(:mod:`~bugbout.sweep.summary`), as text and an HTML page (:mod:`~bugbout.sweep.render`)."""

from bugbout.sweep.summary import (
    ERROR_FILE,
    FORMATS,
    SUMMARY_FILES,
    SWEEP_SCHEMA_VERSION,
    SweepJob,
    SweepSummary,
    load_sweep,
    render_summary,
    render_sweep,
    write_sweep_summary,
)

__all__ = [
    "ERROR_FILE",
    "FORMATS",
    "SUMMARY_FILES",
    "SWEEP_SCHEMA_VERSION",
    "SweepJob",
    "SweepSummary",
    "load_sweep",
    "render_summary",
    "render_sweep",
    "write_sweep_summary",
]
