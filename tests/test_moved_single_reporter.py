"""The old `reporter=json` (one plugin by name) is renamed to what it meant, the map
holding only that reporter, and its note suggests a spelling that works."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bugbout.bout import Project
from cli_runs import bugbout

CONFIG = "defaults: [base, _self_]\nproject:\n  source: src/x\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bugbout.yaml").write_text(CONFIG)
    return tmp_path


def _note_and_reporters(project: Path, *args: str) -> tuple[str, list[str]]:
    """The notes ``bugbout run ARGS`` gives and the reporters it would use."""
    ran = bugbout("run", *args, "--cfg", "job", cwd=project)
    assert ran.returncode == 0, ran.stderr
    reporters = yaml.safe_load(ran.stdout)["reporters"]
    return ran.stderr, [name for name, entry in reporters.items() if entry is not None]


def test_the_note_for_reporter_json_suggests_a_form_that_works(project: Path) -> None:
    note, reporters = _note_and_reporters(project, "reporter=json")
    assert reporters == ["json"]
    (line,) = [line for line in note.splitlines() if "reporter=json" in line]
    suggested = line.split("; write ", 1)[1].split(" (", 1)[0].split()
    assert suggested == ["~reporters.terminal", "~reporters.markdown", "~reporters.html"]
    assert "(reporter=json still works)" in line
    followed_note, followed = _note_and_reporters(project, *suggested)
    assert followed == ["json"] and "warning" not in followed_note


def test_reporter_json_in_bugbout_yaml_and_from_python(project: Path) -> None:
    assert set(Project.load(project, ["reporter=json"]).settings.reporters) == {"json"}
    (project / "bugbout.yaml").write_text(CONFIG + "reporter: json\n")
    settings = Project.load(project).settings
    assert {name for name, entry in settings.reporters.items() if entry is not None} == {"json"}
