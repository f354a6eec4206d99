"""Configuration: a project's ``bugbout.yaml``, the packaged config groups and the
command line's overrides, composed by the Hydra adapter (:mod:`~bugbout.config.adapter`,
the only code that imports Hydra) into the core's settings."""

from bugbout.config.adapter import HydraJob, compose_settings, run_with_hydra
from bugbout.config.compose import job_settings, sweep_jobs

__all__ = ["HydraJob", "compose_settings", "job_settings", "run_with_hydra", "sweep_jobs"]
