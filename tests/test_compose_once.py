"""One command, one job: its settings are composed once, not once more by each step of
Hydra's main."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.cli.console import Console
from bugbout.config import HydraJob, run_with_hydra
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from compositions import project


def test_one_job_is_composed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, composed: list[str]
) -> None:
    monkeypatch.chdir(project(tmp_path))
    jobs: list[tuple[BoutSettings, HydraJob]] = []

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        jobs.append((settings, hydra_job))

    code = run_with_hydra("run", ["judge=strict", "judge.quorum=0.6"], Console(quiet=True), job)
    assert code == 0
    assert composed == ["bugbout"]
    [(settings, hydra_job)] = jobs
    assert settings.judge.name == "strict"
    assert settings.judge.options["quorum"] == 0.6
    assert hydra_job == HydraJob(
        output=(tmp_path / ".bugbout").resolve(),
        overrides=["judge=strict", "judge.quorum=0.6"],
        multirun=False,
    )


def test_a_config_that_names_hydra_runs_through_hydras_main(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, composed: list[str]
) -> None:
    """Its own Hydra settings (callbacks, ``${hydra:...}``) are Hydra's main's to apply."""
    from hydra.core.hydra_config import HydraConfig

    monkeypatch.chdir(project(tmp_path, "hydra: {job: {name: mine}}\n"))
    labels: list[str] = []

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        labels.append(HydraConfig.get().job.name)

    assert run_with_hydra("tasks", [], Console(quiet=True), job) == 0
    assert labels == ["mine"]
    assert len(composed) > 1
