"""Choosing contestants and examiners: their agents' and assignments' options from the file
and the command line, entries added, removed or chosen none of, errors naming the entry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bugbout.cli.console import Console
from bugbout.config import HydraJob, compose_settings, run_with_hydra
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.pipeline import build_contestants
from bugbout.core.store.records import Task, TaskIssue
from probe_plugins import project
from runners import pytest_runner

TASK = Task(
    id="t", sha="0123abcd", parent="p", date="2024-01-01T00:00:00+00:00", title="Fix",
    issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
)  # fmt: skip


def assigned(settings: BoutSettings, plugins: Plugins) -> dict[str, dict[str, str]]:
    """The options each examiner's assignment was built with, read from its prompt."""
    return {
        racer.name: json.loads(
            racer.prompt(TASK, tests="tests", test_command="pytest", style=pytest_runner().style)
        )
        for racer in build_contestants(settings, plugins)
    }


def test_an_assignment_gets_its_options_from_the_file_and_the_command_line(
    probes: Plugins, tmp_path: Path
) -> None:
    """An examiner's ``assignment`` is a name, or a map naming its plugin under
    ``assignment`` with that plugin's options, set in the file or on the command line."""
    entry = {"agent": "probe", "assignment": {"assignment": "probe", "a": "file"}}
    root = project(tmp_path, {"examiners": {"mine": entry}})
    for override in ("examiners.mine.assignment.b=line", "examiner.mine.assignment.b=line"):
        settings, _ = compose_settings(root, [override], probes)
        assert assigned(settings, probes)["mine"] == {"a": "file", "b": "line", "name": ""}
    root = project(tmp_path, {"examiners": {"mine": {"agent": "probe", "assignment": "specify"}}})
    settings, _ = compose_settings(
        root, ["examiners.mine.assignment={assignment: probe, a: line}"], probes
    )
    assert assigned(settings, probes)["mine"]["a"] == "line"
    overrides = ["examiner=probe", "examiner.probe.assignment={assignment: probe, b: line}"]
    settings, _ = compose_settings(root, overrides, probes)
    assert assigned(settings, probes) == {"probe": {"a": "default", "b": "line", "name": ""}}


def test_a_wrong_assignment_or_option_is_one_line_naming_the_entry(
    probes: Plugins, tmp_path: Path
) -> None:
    entry = {"agent": "probe", "assignment": {"assignment": "probe", "c": "x"}}
    root = project(tmp_path, {"examiners": {"mine": entry}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(ConfigError, match=r"^examiners\.mine\.assignment: assignment 'probe': c: "):
        build_contestants(settings, probes)
    settings, _ = compose_settings(root, ["examiners.mine.assignment.assignment=edges"], probes)
    with pytest.raises(
        ConfigError, match=r"^examiners\.mine\.assignment: no assignment plugin named 'edges'; "
    ):
        build_contestants(settings, probes)
    settings, _ = compose_settings(root, ["examiner=probe", "examiner.probe.assignment=e"], probes)
    with pytest.raises(ConfigError, match=r"^examiner\.probe\.assignment: no assignment plugin "):
        build_contestants(settings, probes)
    overrides = ["examiner=probe", "examiner.probe.assignment.a=x"]
    with pytest.raises(
        ConfigError, match=r"^examiner\.probe\.assignment\.a: no such setting \(valid keys under "
    ):  # its assignment is reproduce, which takes no options
        compose_settings(root, overrides, probes)
    with pytest.raises(
        ConfigError, match=r"^examiners\.mine\.assignment\.d: no such setting \(valid keys under "
    ):
        compose_settings(root, ["examiners.mine.assignment.d=1"], probes)


def test_a_wrong_agent_option_is_one_line_naming_the_entry(probes: Plugins, tmp_path: Path) -> None:
    root = project(tmp_path, {"contestants": {"mine": {"agent": "command", "command": []}}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(ConfigError, match=r"^contestants\.mine: agent 'command': command: ") as bad:
        build_contestants(settings, probes)
    assert "\n" not in str(bad.value)
    overrides = ["contestants.mine.command=[x]", "examiner=codex", "examiner.codex.quota=[1]"]
    settings, _ = compose_settings(root, overrides, probes)
    with pytest.raises(ConfigError, match=r"^examiner\.codex: agent 'codex': quota: "):
        build_contestants(settings, probes)


def test_a_contestant_added_on_the_command_line_can_be_chosen_by_name(
    probes: Plugins, tmp_path: Path
) -> None:
    root = project(tmp_path, {"contestants": {"mine": {"agent": "command", "command": ["x"]}}})
    added = "+contestants.fresh={agent: command, command: [y]}"
    settings, _ = compose_settings(root, [added, "contestant=fresh"], probes)
    assert [racer.name for racer in build_contestants(settings, probes)] == ["fresh"]
    with pytest.raises(ConfigError, match=r"^contestants\.codex: contestant 'codex' has the name"):
        compose_settings(root, ["+contestants.codex={agent: command}"], probes)


def test_an_assignments_options_are_in_the_attempts_key_when_set(
    probes: Plugins, tmp_path: Path
) -> None:
    """The key of an examiner given its assignment by name is the one it had before
    assignments took options, so stored attempts are found again; options that differ
    from the plugin's defaults make another key."""

    def key(assignment: object) -> str:
        """The key of examiner ``spec`` given ``assignment`` (``None``: left out)."""
        examiner: dict[str, Any] = {"agent": "command", "command": ["true"]}
        if assignment is not None:
            examiner["assignment"] = assignment
        settings = BoutSettings.model_validate(
            {"project": {"source": "src/p"}, "examiners": {"spec": examiner}}
        )
        (racer,) = build_contestants(settings, probes)
        return racer.key(TASK)

    assert key("specify") == key({"assignment": "specify"}) == "cf9e7c425063fcdc"
    assert key(None) == "0cb7e075965e7e6b"  # reproduce, the default
    assert key("probe") == key({"assignment": "probe", "a": "default"})
    assert len({key("probe"), key({"assignment": "probe", "a": "x"}), key("specify")}) == 3


ROLES = ["contestant", "examiner"]


def racing(settings: BoutSettings, plugins: Plugins) -> dict[str, list[str]]:
    """The names of the contestants and of the examiners the core builds, by role."""
    racers = build_contestants(settings, plugins)
    return {role: [racer.name for racer in racers if racer.role == role] for role in ROLES}


def defined_agents(root: Path) -> Path:
    """Two contestants and an examiner defined in ``bugbout.yaml``."""
    agent = {"agent": "probe"}
    examiner = {**agent, "assignment": "probe"}
    return project(root, {"contestants": {"a": agent, "b": agent}, "examiners": {"x": examiner}})


@pytest.mark.parametrize("role", ROLES)
def test_choosing_none_of_a_role_races_none_of_it(
    role: str, probes: Plugins, tmp_path: Path
) -> None:
    """``examiner=[]`` chooses no examiner (``contestant=[]`` no contestant), the others
    all race; choosing nothing races every one defined, in a sweep's jobs too."""
    root = defined_agents(tmp_path)
    every = {"contestant": ["a", "b"], "examiner": ["x"]}
    settings, _ = compose_settings(root, [], probes)
    assert racing(settings, probes) == every
    settings, _ = compose_settings(root, [f"{role}=[]"], probes)
    assert racing(settings, probes) == {**every, role: []}
    settings, _ = compose_settings(root, ["contestant=b", "examiner=[]"], probes)
    assert racing(settings, probes) == {"contestant": ["b"], "examiner": []}


def test_a_sweep_with_no_examiner_races_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bugbout run -m contestant=a,b 'examiner=[]'``: no job races an examiner."""
    command = {"agent": "command", "command": ["bugbout-no-such-program"]}
    config = {
        "contestants": {"a": command, "b": command},
        "examiners": {"x": {**command, "assignment": "reproduce"}},
    }
    monkeypatch.chdir(project(tmp_path, config))
    jobs: list[dict[str, list[str]]] = []

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        jobs.append(racing(settings, plugins))

    args = ["-m", "contestant=a,b", "examiner=[]"]
    assert run_with_hydra("run", args, Console(quiet=True), job) == 0
    assert jobs == [{"contestant": ["a"], "examiner": []}, {"contestant": ["b"], "examiner": []}]


@pytest.mark.parametrize("role", ROLES)
def test_a_defined_agent_set_to_null_is_removed(role: str, probes: Plugins, tmp_path: Path) -> None:
    """``contestants.a=null`` removes ``a``, as ``reporters.html=null`` removes a reporter."""
    agent = {"agent": "probe", "assignment": "probe"} if role == "examiner" else {"agent": "probe"}
    root = project(tmp_path, {f"{role}s": {"a": agent, "b": agent}})
    settings, _ = compose_settings(root, [f"{role}s.a=null"], probes)
    assert racing(settings, probes)[role] == ["b"]


@pytest.mark.parametrize("role", ROLES)
def test_an_agent_that_names_no_agent_is_one_line_naming_the_entry(
    role: str, probes: Plugins, tmp_path: Path
) -> None:
    root = project(tmp_path, {f"{role}s": {"mine": {"a": "file"}}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(
        ConfigError,
        match=rf"^{role}s\.mine names no plugin; add `agent: <plugin>` to it, e\.g\. "
        rf"`{role}s: {{mine: {{agent: codex}}}}`$",
    ):
        build_contestants(settings, probes)


def test_an_assignment_map_that_names_no_assignment_is_one_line(
    probes: Plugins, tmp_path: Path
) -> None:
    """A map without ``assignment:`` is a mistake, not the default ``reproduce``."""
    root = project(tmp_path, {"examiners": {"mine": {"agent": "probe", "assignment": "probe"}}})
    settings, _ = compose_settings(root, ["examiners.mine.assignment={a: x}"], probes)
    with pytest.raises(
        ConfigError,
        match=r"^examiners\.mine\.assignment names no plugin; add `assignment: <plugin>` to it",
    ):
        build_contestants(settings, probes)


def test_a_run_with_no_contestant_left_is_the_one_line_error(tmp_path: Path) -> None:
    """``bugbout run 'contestant=[]'`` leaves the examiners alone, with nothing to examine."""
    command = {"agent": "command", "command": ["bugbout-no-such-program"]}
    root = project(tmp_path, {"contestants": {"a": command}, "examiners": {"x": command}})
    ran = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "contestant=[]"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr.startswith("error: no contestants: define some under `contestants:`")
    assert ran.stderr.count("\n") == 1


def test_a_contestant_set_to_null_in_the_file_is_removed(probes: Plugins, tmp_path: Path) -> None:
    entries = {"kept": {"agent": "command", "command": ["x"]}, "gone": None}
    root = project(tmp_path, {"contestants": entries})
    settings, _ = compose_settings(root, [], probes)
    assert [racer.name for racer in build_contestants(settings, probes)] == ["kept"]
