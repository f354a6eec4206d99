"""Settings written the old way (``env``, lists of reporters and issue sources,
``judge.run-suite``) still work, with a note saying the new way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bugbout.config import compose_settings
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import VerdictsSettings
from bugbout.core.pipeline import issue_resolver, report_plugins
from bugbout.core.plumbing.runtime.progress import SilentProgress
from bugbout.core.report.report import Report
from bugbout.core.report.reporters import write_reports
from bugbout.core.store.store import Store
from probe_plugins import project


def test_env_on_the_command_line_is_environment_with_a_note(tmp_path: Path) -> None:
    notes: list[str] = []
    root = project(tmp_path, {})
    settings, _ = compose_settings(
        root, ["env=interpreter", "env.path=/usr/bin/python3"], warn=notes.append
    )
    assert (settings.environment.name, settings.environment.options) == (
        "interpreter", {"path": "/usr/bin/python3"}
    )  # fmt: skip
    assert notes == [
        "env=interpreter: `env` is now `environment`; write environment=interpreter "
        "(env still works)",
        "env.path=/usr/bin/python3: `env` is now `environment`; write "
        "environment.path=/usr/bin/python3 (env still works)",
    ]


def test_env_in_bugbout_yaml_is_environment_with_a_note(tmp_path: Path) -> None:
    notes: list[str] = []
    config = {
        "defaults": ["base", {"override env": "interpreter"}, "_self_"],
        "env": {"path": "/usr/bin/python3"},
        "judge": {"run-suite": False},
    }
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, [], warn=notes.append)
    assert (settings.environment.name, settings.environment.options) == (
        "interpreter", {"path": "/usr/bin/python3"}
    )  # fmt: skip
    assert settings.verdicts.run_suite is False
    assert "run-suite" not in settings.judge.options
    where = root / "bugbout.yaml"
    assert notes == [
        f"{where}: `override env: interpreter` is now `override environment: interpreter`; "
        "rename it (env still works)",
        f"{where}: `env:` is now `environment:`; rename it (env still works)",
        f"{where}: `judge.run-suite:` is now `verdicts.run-suite:`; rename it "
        "(judge.run-suite still works)",
    ]


def test_the_python_api_warns_of_an_old_spelling(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    with pytest.warns(FutureWarning, match="`judge.run-suite` is now `verdicts.run-suite`"):
        settings, _ = compose_settings(root, ["judge.run-suite=false"])
    assert settings.verdicts.run_suite is False


def test_an_assignment_chosen_as_an_examiner_is_a_one_line_error(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    with pytest.raises(ConfigError, match=r"^examiner=reproduce: reproduce is an assignment"):
        compose_settings(root, ["examiner=reproduce"])


def test_lists_of_reporters_and_issue_sources_in_bugbout_yaml_still_work(
    probes: Plugins, tmp_path: Path
) -> None:
    """``reporters: [...]``, ``reporter:``, ``tasks.issue-sources: [...]`` and
    ``issue-source:`` as written before they were maps: exactly the plugins listed, in
    their order, with their options, and a note each."""
    notes: list[str] = []
    config = {
        "reporters": ["probe", "json"],
        "reporter": {"probe": {"a": "file"}, "html": {"title": "Not written"}},
        "tasks": {"issue-sources": ["probe", "commit"], "reruns": 3},
        "issue-source": {"probe": {"a": "file"}, "github": {"timeout": 2}},
    }
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, ["reporter.probe.b=line"], probes, notes.append)
    written = write_reports(Report(), Store(tmp_path / "out"), report_plugins(settings, probes))
    assert written.files == ["report.json"]
    assert json.loads(written.printed["probe"])["a"] == "file"
    assert json.loads(written.printed["probe"])["b"] == "line"
    sources = issue_resolver(settings, probes, SilentProgress()).sources
    assert [name for name, _ in sources] == ["probe", "commit"]
    assert sources[0][1].options.a == "file"
    assert settings.tasks.reruns == 3
    where = root / "bugbout.yaml"
    assert notes == [
        "reporter.probe.b=line: `reporter` is now `reporters`; write reporters.probe.b=line "
        "(reporter still works)",
        f"{where}: `reporters: [...]` is now `reporters: {{terminal: null, markdown: null, "
        "html: null, probe: {reporter: probe, order: 0}, json: {reporter: json, order: 1}}`; "
        "rename it "
        "(reporters still works)",
        f"{where}: `tasks.issue-sources: [...]` is now `issue-sources: {{github: null, "
        "file: null, probe: {issue-source: probe, order: 0}, commit: {issue-source: commit, "
        "order: 1}}`; rename it (tasks.issue-sources still works)",
        f"{where}: `issue-source:` is now `issue-sources:`; rename it (issue-source still works)",
        f"{where}: `reporter:` is now `reporters:`; rename it (reporter still works)",
    ]


def test_lists_of_reporters_and_issue_sources_on_the_command_line_still_work(
    probes: Plugins, tmp_path: Path
) -> None:
    notes: list[str] = []
    root = project(tmp_path, {"reporters": {"html": {"title": "Mine"}}})
    overrides = ["tasks.issue-sources=[probe,commit]", "reporters=[json,probe]"]
    settings, _ = compose_settings(root, overrides, probes, notes.append)
    written = write_reports(Report(), Store(tmp_path / "out"), report_plugins(settings, probes))
    assert (written.files, list(written.printed)) == (["report.json"], ["probe"])
    sources = issue_resolver(settings, probes, SilentProgress()).sources
    assert [name for name, _ in sources] == ["probe", "commit"]
    assert notes == [
        "tasks.issue-sources=[probe,commit]: `tasks.issue-sources` is now `issue-sources`, "
        "a map of instances by name now; write ~issue-sources.github ~issue-sources.file "
        "+issue-sources.probe={issue-source: probe} and give each its place, "
        "issue-sources.NAME.order=0, 1, ... (the list still works)",
        "reporters=[json,probe]: `reporters` is a map of instances by name now; write "
        "~reporters.terminal ~reporters.markdown ~reporters.html "
        "+reporters.probe={reporter: probe} (the list still works)",
    ]


def test_moving_run_suite_keeps_the_stores_evidence_keys() -> None:
    """The matrix's key holds ``run-suite`` on its own, as when it was the judge's; the
    other evidence keys hold the rest of ``verdicts:`` only, as before it moved there."""
    assert VerdictsSettings(run_suite=False).key() == VerdictsSettings().key()
    assert VerdictsSettings(timeout=5).key() != VerdictsSettings().key()
