"""A third-party distribution with a plugin named ``probe`` of every kind, each keeping the
options it was built with, and a project whose ``bugbout.yaml`` sets them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from bugbout import hookimpl
from bugbout.core.contract.types import KINDS, PluginSpec
from bugbout.core.report.report import Report
from bugbout.core.store.records import Task, TaskSet


class ProbeOptions(BaseModel):
    """Two options to set, one in ``bugbout.yaml`` and one on the command line."""

    model_config = ConfigDict(extra="forbid")

    a: str = "default"
    b: str = "default"
    name: str = ""  # an agent is given its contestant's name


class Probe:
    """Any kind's implementation: it keeps the options it was built with."""

    filename = None  # a reporter that prints
    name = "probe"  # a sandbox's name

    def __init__(self, options: ProbeOptions) -> None:
        self.options = options

    def mine(self, request: object, titles: object, runner: object = None) -> TaskSet:
        """A miner that finds nothing and names its options as the reason."""
        found = TaskSet()
        found.exclude(self.options.model_dump_json())
        return found

    def problem(self) -> None:  # an executor that can run here
        return None

    def close(self) -> None:
        return None

    def render(self, report: Report) -> str:
        return self.options.model_dump_json()

    def prompt(
        self, task: Task, *, tests: str, test_command: str, style: Any
    ) -> str:  # an assignment's
        return self.options.model_dump_json()


def _records(kind: str) -> list[PluginSpec]:
    return [KINDS[kind](name="probe", factory=Probe, options=ProbeOptions)]


class ProbePlugins:
    """A third-party distribution with a plugin named ``probe`` of every kind."""

    @hookimpl
    def bugbout_miners(self) -> list[PluginSpec]:
        return _records("miner")

    @hookimpl
    def bugbout_issue_sources(self) -> list[PluginSpec]:
        return _records("issue-source")

    @hookimpl
    def bugbout_environments(self) -> list[PluginSpec]:
        return _records("environment")

    @hookimpl
    def bugbout_test_runners(self) -> list[PluginSpec]:
        return _records("test-runner")

    @hookimpl
    def bugbout_agents(self) -> list[PluginSpec]:
        return _records("agent")

    @hookimpl
    def bugbout_sandboxes(self) -> list[PluginSpec]:
        return _records("sandbox")

    @hookimpl
    def bugbout_executors(self) -> list[PluginSpec]:
        return _records("executor")

    @hookimpl
    def bugbout_assignments(self) -> list[PluginSpec]:
        return _records("assignment")

    @hookimpl
    def bugbout_judges(self) -> list[PluginSpec]:
        return _records("judge")

    @hookimpl
    def bugbout_auditors(self) -> list[PluginSpec]:
        return _records("auditor")

    @hookimpl
    def bugbout_reporters(self) -> list[PluginSpec]:
        return _records("reporter")


def project(root: Path, config: dict[str, Any]) -> Path:
    """A ``bugbout.yaml`` with bugbout's defaults and ``config``."""
    base = {"defaults": ["base", "_self_"], "project": {"source": "src/calc"}}
    (root / "bugbout.yaml").write_text(yaml.safe_dump({**base, **config}, sort_keys=False))
    return root
