"""A command composed before from the same things reuses its composition, without Hydra;
anything it was composed from that changes composes it again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.cli.console import Console
from bugbout.config import HydraJob, run_with_hydra
from bugbout.config.kept import FILE
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from compositions import project
from plugin_sites import TOY_PLUGIN, install_distribution


def _run(args: list[str], warnings: list[str] | None = None) -> tuple[BoutSettings, HydraJob]:
    """One command's job: its settings and its Hydra job."""
    jobs: list[tuple[BoutSettings, HydraJob]] = []

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        jobs.append((settings, hydra_job))

    console = Console(quiet=True)
    if warnings is not None:
        console.warn = warnings.append  # type: ignore[method-assign]
    assert run_with_hydra("tasks", args, console, job) == 0
    [found] = jobs
    return found


def test_the_same_command_again_composes_nothing_and_gets_the_same_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, composed: list[str]
) -> None:
    monkeypatch.chdir(project(tmp_path))
    args = ["judge=strict", "judge.quorum=0.6", "miner.limit=3"]
    first = _run(args)
    assert composed == ["bugbout"]
    again = _run(args)
    assert composed == ["bugbout"]
    assert again == first
    assert again[0].judge.options["quorum"] == 0.6
    assert again[1].overrides == args


def test_a_reused_composition_imports_no_hydra(tmp_path: Path) -> None:
    project(tmp_path)
    script = (
        "import sys\n"
        "from bugbout.cli.console import Console\n"
        "from bugbout.config import run_with_hydra\n"
        "seen = []\n"
        "code = run_with_hydra('tasks', ['miner.limit=4'], Console(quiet=True),\n"
        "                      lambda settings, plugins, job: seen.append(settings.miner))\n"
        "print(code, seen[0].options['limit'], 'hydra' in sys.modules)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs == [["0", "4", "True"], ["0", "4", "False"]]


@pytest.mark.parametrize(
    "change",
    ["the file", "an override", "a project folder shadowing a packaged option"],
)
def test_what_a_composition_is_made_of_composes_it_again(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, composed: list[str]
) -> None:
    monkeypatch.chdir(project(tmp_path))
    args = ["judge=strict"]
    assert _run(args)[0].judge.options["quorum"] == 0.5
    if change == "the file":
        project(tmp_path, "judge: {quorum: 0.7}\n")
    elif change == "an override":
        args = ["judge=strict", "judge.quorum=0.7"]
    else:
        (tmp_path / "judge").mkdir()
        (tmp_path / "judge" / "strict.yaml").write_text("name: strict\nquorum: 0.7\n")
    assert _run(args)[0].judge.options["quorum"] == 0.7
    assert composed == ["bugbout", "bugbout"]


def test_interpolations_are_resolved_on_each_reuse_and_hydras_own_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, composed: list[str]
) -> None:
    monkeypatch.chdir(project(tmp_path, "miner: {since: '${oc.env:SINCE}'}\n"))
    monkeypatch.setenv("SINCE", "2020-01-01")
    assert str(_run([])[0].miner.options["since"]) == "2020-01-01"
    monkeypatch.setenv("SINCE", "2021-02-02")
    assert str(_run([])[0].miner.options["since"]) == "2021-02-02"
    assert composed == ["bugbout"]

    store = tmp_path / ".bugbout" / FILE
    store.unlink()
    assert _run(["miner.since=${now:%Y-%m-%d}"])[0].miner.options["since"]
    assert not store.exists()


def test_notes_on_old_spellings_are_said_again_when_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, composed: list[str]
) -> None:
    monkeypatch.chdir(project(tmp_path, "env: {name: uv}\n"))
    first: list[str] = []
    again: list[str] = []
    _run([], first)
    _run([], again)
    assert composed == ["bugbout-renamed"]
    assert any("environment" in note for note in first)
    assert again == first


def test_a_plugin_chosen_by_name_that_is_gone_is_not_reused(
    tmp_path: Path, site: Path, monkeypatch: pytest.MonkeyPatch, composed: list[str]
) -> None:
    install_distribution(site, "bugbout-toy", "1.0", {"toy": "bugbout_toy"},
                         {"bugbout_toy": TOY_PLUGIN})  # fmt: skip
    monkeypatch.chdir(project(tmp_path))
    assert _run(["miner=toy"])[0].miner.name == "toy"
    kept = json.loads((tmp_path / ".bugbout" / FILE).read_text())
    assert [entry["plugins"] for entry in kept.values()] == [[["miner", "toy"]]]

    monkeypatch.setenv("BUGBOUT_DISABLE_PLUGINS", "toy")

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        raise AssertionError("a gone plugin's composition ran")

    with pytest.raises(ConfigError, match="miner=toy: no such miner"):
        run_with_hydra("tasks", ["miner=toy"], Console(quiet=True), job)
    assert composed == ["bugbout"]


def test_a_kept_composition_leaves_git_status_clean_when_the_job_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store folder the composition is kept in ignores itself, as every store does."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(project(tmp_path))
    subprocess.run(["git", "add", "bugbout.yaml"], cwd=tmp_path, check=True)

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        raise ConfigError("no contestants")

    assert run_with_hydra("run", [], Console(quiet=True), job) == 2
    assert (tmp_path / ".bugbout" / FILE).is_file()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert status.stdout == "A  bugbout.yaml\n"


def test_the_python_api_and_the_result_commands_reuse_a_composition_too(
    tmp_path: Path, composed: list[str]
) -> None:
    """``compose_settings`` (``Project.load``, ``bugbout report``) keeps and reuses as a
    command does, notes on old spellings warned again."""
    from bugbout.config import compose_settings

    project(tmp_path, "env: {name: uv}\n")
    with pytest.warns(FutureWarning, match="environment"):
        first, _ = compose_settings(tmp_path, ["judge=strict"])
    with pytest.warns(FutureWarning, match="environment"):
        again, _ = compose_settings(tmp_path, ["judge=strict"])
    assert composed == ["bugbout-renamed"]
    assert again == first
    assert again.judge.name == "strict"
