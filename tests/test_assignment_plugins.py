"""Assignment plugins: listed as such and given to an examiner; the old examiner hook, kind
word and suite name still work, with a note."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bugbout.config import compose_settings
from bugbout.core.contract.errors import PluginError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.pipeline import build_contestants
from plugin_sites import install_distribution

EDGES_PLUGIN = """
from bugbout import {record}, hookimpl
from bugbout.core.race.examining import PromptAssignment


@hookimpl
def {hook}():
    yield {record}(
        name="{name}",
        factory=lambda options: PromptAssignment("{name}", "Test the edges.", True),
    )
"""


def examiner_given(plugins: Plugins, tmp_path: Path, assignment: str) -> Any:
    """The assignment the core gives an examiner whose entry names ``assignment``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject:\n  source: pkg\nexaminers:\n"
        f"  probe: {{agent: command, command: [probe], assignment: {assignment}}}\n"
    )
    settings, _ = compose_settings(repo, [], plugins)
    (probe,) = build_contestants(settings, plugins)
    return probe.assignment


def listed(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", "plugins", *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_an_assignment_plugin_is_listed_as_one_and_given_to_an_examiner(
    site: Path, tmp_path: Path
) -> None:
    """The plugin kind an examiner's ``assignment`` names is the assignment kind."""
    source = EDGES_PLUGIN.format(
        record="AssignmentPlugin", hook="bugbout_assignments", name="edges"
    )
    install_distribution(site, "bugbout-edges", "1.0", {"edges": "bugbout_edges"},
                         {"bugbout_edges": source})  # fmt: skip
    plugins = make_plugins()
    assert plugins.problems == []
    assert plugins.get("assignment", "edges").distribution == "bugbout-edges 1.0"
    assert examiner_given(plugins, tmp_path, "edges").name == "edges"
    listing = listed()
    assert listing.returncode == 0, listing.stderr
    rows = [line.split()[:3] for line in listing.stdout.splitlines()]
    assert ["assignment", "edges", "bugbout-edges"] in rows
    assert ["assignment", "reproduce", "bugbout"] in rows
    assert "examiner" not in {row[0] for row in rows if row}


def test_a_plugin_on_the_old_examiners_hook_still_works_with_a_note(
    site: Path, tmp_path: Path
) -> None:
    """A plugin written before the kind was renamed: ``bugbout_examiners`` yielding
    ``ExaminerPlugin`` records is an assignment still, and told the new names."""
    source = EDGES_PLUGIN.format(record="ExaminerPlugin", hook="bugbout_examiners", name="old")
    install_distribution(site, "bugbout-old", "0.9", {"old": "bugbout_old"},
                         {"bugbout_old": source})  # fmt: skip
    with pytest.warns(DeprecationWarning, match="ExaminerPlugin is now AssignmentPlugin"):
        plugins = make_plugins()
    note = (
        "plugin 'old' from bugbout-old 0.9: bugbout_examiners() is now bugbout_assignments(); "
        "rename the hook (the old name still works)"
    )
    assert plugins.problems == [note]
    assert examiner_given(plugins, tmp_path, "old").name == "old"
    assert plugins.problems == [note]  # said once, however often the kinds are collected
    listing = listed()
    assert listing.returncode == 0, listing.stderr
    assert ["assignment", "old", "bugbout-old"] in [
        line.split()[:3] for line in listing.stdout.splitlines()
    ]
    assert note in listing.stderr


def test_the_old_kind_word_and_suite_name_say_the_new_ones(plugins: Plugins) -> None:
    with pytest.raises(
        PluginError, match=r"^the plugin kind 'examiner' is now called 'assignment'$"
    ):
        plugins.of_kind("examiner")
    from bugbout.testing.suites import AssignmentSuite

    with pytest.warns(DeprecationWarning, match="ExaminerSuite is now AssignmentSuite"):
        from bugbout.testing.suites import ExaminerSuite
    assert ExaminerSuite is AssignmentSuite
