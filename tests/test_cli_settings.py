"""Settings on the command line and in the file: overrides, old spellings, and one-line errors
before any work."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runs import bugbout


def test_overrides_and_cfg_job(initialised: Path) -> None:
    result = bugbout(
        "tasks", "miner.limit=5", "environment=interpreter", "--cfg", "job", cwd=initialised
    )
    assert result.returncode == 0, result.stderr
    assert "limit: 5" in result.stdout
    assert "name: interpreter" in result.stdout
    assert not (initialised / ".bugbout" / "tasks.json").exists()
    assert not (initialised / "outputs").exists()


def test_the_old_spellings_still_work_with_a_note(initialised: Path) -> None:
    """``env`` became ``environment`` and ``judge.run-suite`` ``verdicts.run-suite``."""
    result = bugbout(
        "tasks", "env=interpreter", "judge.run-suite=false", "--cfg", "job", cwd=initialised
    )
    assert result.returncode == 0, result.stderr
    assert "\nenvironment:\n  name: interpreter\n" in result.stdout
    assert "  run-suite: false\n" in result.stdout
    assert result.stderr.strip().splitlines() == [
        "warning: env=interpreter: `env` is now `environment`; write environment=interpreter "
        "(env still works)",
        "warning: judge.run-suite=false: `judge.run-suite` is now `verdicts.run-suite`; write "
        "verdicts.run-suite=false (judge.run-suite still works)",
    ]


def test_old_lists_of_reporters_and_issue_sources_still_work(initialised: Path) -> None:
    """``tasks.issue-sources`` and ``reporters`` were lists of plugin names."""
    result = bugbout(
        "tasks", "tasks.issue-sources=[commit]", "reporters=[json]", "reporter.json.indent=4",
        "--cfg", "job", cwd=initialised,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "\nissue-sources:\n  commit:\n    issue-source: commit\nreporters:\n" in result.stdout
    assert "\nreporters:\n  json:\n    reporter: json\n    indent: 4\n" in result.stdout
    notes = result.stderr.strip().splitlines()
    assert [note.split(":")[0] for note in notes] == [
        "warning", "warning", "warning"
    ]  # fmt: skip
    assert "write ~issue-sources.github ~issue-sources.file (the list still works)" in notes[0]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["environment=nope"],
            "error: environment=nope: no such environment; "
            "choose one of interpreter, npm, podman, uv",
        ),
        (["miner=nope"], "error: miner=nope: no such miner; choose one of git-history, mutants"),
        (
            ["miner.limit=many"],
            "error: miner 'git-history': limit: Input should be a valid integer",
        ),
        (
            ["+project.sourse=x"],
            "error: project.sourse: no such setting; did you mean project.source? (valid keys "
            "under project: env, github, interpreter, pytest-args, python, repository, source,",
        ),
        (
            ["+environment.exclude-newr=1"],
            "environment 'uv': exclude-newr: no such option; did you mean exclude-newer?",
        ),
        (
            ["+issue-sources.jira={issue-source: jira}"],
            "error: issue-sources.jira: no issue-source plugin named 'jira'; choose one of",
        ),
        (
            ["reporters.html.titel=x"],
            "error: reporters.html.titel: no such setting; did you mean reporters.html.title?",
        ),
        (
            ["tasks.rerunss=5"],
            "error: tasks.rerunss: no such setting; did you mean tasks.reruns? (valid keys under "
            "tasks: drafter, jobs, repair-imports, reruns, statement, timeout)",
        ),
        (["judg=strict"], "error: judg: no such setting; did you mean judge? (valid keys at"),
        (
            ["contestant=codex", "contestant.codex.reasoning-efort=high"],
            "error: contestant.codex.reasoning-efort: no such setting; did you mean "
            "contestant.codex.reasoning-effort? (valid keys under contestant.codex: agent,",
        ),
        (
            ["sandbox=bubblewrap", "sandbox.hide-rum=false"],
            "error: sandbox.hide-rum: no such setting; did you mean sandbox.hide-run? "
            "(valid keys under sandbox: executable, hide-run, name)",
        ),
        (["project.python=3.10"], "project.python: write the version as a string: '3.10'"),
        (["project.source=/abs/pkg"], "project.source: must be a path inside the repository"),
    ],
)
def test_bad_settings_are_one_line_errors(
    initialised: Path, overrides: list[str], message: str
) -> None:
    result = bugbout("tasks", *overrides, cwd=initialised)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert message in lines[0]


@pytest.mark.parametrize("override", ["judg=strict", "tasks.limt=2", "project.sorce=x"])
def test_a_misspelt_setting_is_refused_before_any_plugin_or_hydra_loads(
    initialised: Path, override: str
) -> None:
    """The quick path of a typo: nothing heavy is imported before the one-line error."""
    loaded = initialised / "loaded.txt"
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(loaded)!r}, 'w').write('\\n'.join(sys.modules)))\n"
        f"sys.argv = ['bugbout', 'run', {override!r}]\n"
        "from bugbout.cli import main\n"
        "sys.exit(main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=initialised, capture_output=True, text=True, check=False
    )
    assert result.returncode == 2, result.stderr
    assert "no such setting" in result.stderr
    modules = set(loaded.read_text().split())
    assert (
        not {"hydra", "omegaconf", "bugbout.core.contract.manager", "bugbout.core.store.records"}
        & modules
    )


@pytest.mark.slow
def test_missing_and_broken_config(repo: Path) -> None:
    result = bugbout("tasks", cwd=repo)
    assert result.returncode == 2
    assert "run `bugbout init`" in result.stderr
    (repo / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject:\n  source: [x\n  a: 1\n")
    result = bugbout("tasks", cwd=repo)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {repo / 'bugbout.yaml'}:4:4: not valid YAML: expected ',' or ']', but got ':' "
        "in `a: 1`; fix that line or rerun `bugbout init --force`"
    )
    (repo / "bugbout.yaml").write_text("project:\n  tests: tests\n")
    result = bugbout("tasks", cwd=repo)
    assert "must start with `defaults: [base, _self_]`" in result.stderr
    (repo / "bugbout.yaml").write_text("defaults: [base, _self_]\n")
    result = bugbout("tasks", cwd=repo)
    assert result.returncode == 2
    assert "project.source is not set" in result.stderr


def test_a_misspelt_section_of_the_file_gets_the_closest_name(initialised: Path) -> None:
    config = initialised / "bugbout.yaml"
    config.write_text(config.read_text() + "contestents:\n  mine: {agent: command}\n")
    result = bugbout("tasks", cwd=initialised)
    assert result.returncode == 2
    assert result.stderr.startswith(
        "error: contestents: no such setting; did you mean contestants? (valid keys at the top "
        "level: auditor, contestant, contestants,"
    ), result.stderr


def test_an_option_of_the_chosen_plugin_needs_no_plus(initialised: Path) -> None:
    """Options the packaged defaults do not set are still the plugin's: no `+` needed."""
    result = bugbout("tasks", "sandbox=bubblewrap", "sandbox.hide-run=false", "--cfg", "job",
                     cwd=initialised)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "sandbox:\n  name: bubblewrap\n  hide-run: false\n" in result.stdout


@pytest.mark.slow
def test_a_contestant_that_cannot_race_stops_the_bout_before_any_work(
    initialised: Path,
) -> None:
    config = initialised / "bugbout.yaml"
    config.write_text(
        config.read_text()
        + "contestants:\n"
        + "  ok: {agent: command, command: [/bin/true]}\n"
        + "  ghost: {agent: command, command: [/nonexistent/agent]}\n"
    )
    result = bugbout("run", "miner.limit=1", cwd=initialised)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: contestant 'ghost' needs '/nonexistent/agent', which is not installed: install "
        "'/nonexistent/agent', or correct contestant.ghost's command; or pass --keep-going to "
        "race the others"
    )
    assert not (initialised / ".bugbout" / "tasks.json").exists(), "nothing was mined"
    keep_going = bugbout("run", "miner.limit=1", "--keep-going", "--quiet", cwd=initialised)
    assert keep_going.returncode == 0, keep_going.stderr
    assert "contestant 'ghost' needs '/nonexistent/agent'" in keep_going.stderr
    attempts = initialised / ".bugbout" / "attempts"
    assert {path.parent.name for path in attempts.glob("*/*/*.json")} == {"ok"}


def test_an_agent_on_its_vendors_api_needs_the_key(initialised: Path) -> None:
    env = {"OPENAI_API_KEY": ""}
    result = bugbout("run", "contestant=codex", "miner.limit=1", cwd=initialised, env=env)
    assert result.returncode == 2
    assert result.stderr.strip() in (
        "error: contestant 'codex' (codex) needs OPENAI_API_KEY in the environment: export it, "
        "or point it at another endpoint with contestant.codex.base-url; or pass --keep-going "
        "to race the others",
        "error: contestant 'codex' needs 'codex', which is not installed: npm install -g "
        "@openai/codex; or pass --keep-going to race the others",
    )


def test_core_does_not_import_hydra() -> None:
    code = (
        "import sys, bugbout.core.tasks, bugbout.core.contract.manager; "
        "print('hydra' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-m", "judge=majority,strict", "judge.treshold=1"],
            "error: judge.treshold: no such setting; did you mean judge.threshold? (valid keys "
            "under judge: name, quorum, threshold) (in the sweep's job judge=majority)",
        ),
        (
            ["-m", "judge=majority,unanimous", "judge.threshold=0.7"],
            "error: judge.threshold: no such setting (valid keys under judge: name, quorum) "
            "(in the sweep's job judge=unanimous)",
        ),
        (
            ["-m", "judge=majority,strict", "--cfg", "job"],
            "error: bugbout tasks: --cfg shows the settings of one job, not of a sweep; "
            "drop -m and give one value of each swept setting",
        ),
        (["--cfg"], "error: bugbout tasks: --cfg takes what to show: job (the settings), "),
        (["--resolve"], "error: bugbout tasks: --resolve goes with --cfg, e.g. "),
        (["--package", "judge"], "error: bugbout tasks: --package goes with --cfg, e.g. "),
        (
            ["judge.name=strict"],
            "error: judge.name: a judge is chosen by its group: `judge=strict`",
        ),
    ],
)
def test_sweeps_and_hydras_flags_are_checked_before_any_job(
    initialised: Path, args: list[str], message: str
) -> None:
    result = bugbout("tasks", *args, cwd=initialised)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr.startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_group_option_the_file_chooses_is_checked_like_one_on_the_line(
    initialised: Path,
) -> None:
    config = initialised / "bugbout.yaml"
    text = re.sub(r"(\n  - base[^\n]*\n)", r"\1  - override judge: strcit\n", config.read_text())
    assert "strcit" in text
    config.write_text(text)
    result = bugbout("tasks", cwd=initialised)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {config}: judge=strcit: no such judge; choose one of cross-vendor, majority, "
        "strict, unanimous"
    )


def test_a_new_map_entry_may_be_named_by_its_plugin_on_the_line(initialised: Path) -> None:
    result = bugbout(
        "tasks", "reporters.short.reporter=html", "reporters.short.title=Short", "--cfg", "job",
        cwd=initialised,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "  short:\n    reporter: html\n    title: Short\n" in result.stdout


def test_the_root_is_the_files_folder_and_not_a_setting(initialised: Path) -> None:
    config = initialised / "bugbout.yaml"
    config.write_text(config.read_text() + "root: /etc\n")
    result = bugbout("tasks", "--mine-only", cwd=initialised)
    assert (result.returncode, result.stderr.strip()) == (
        2,
        f"error: root: not a setting: the project's root is the folder of bugbout.yaml "
        f"({initialised}); remove `root` from it",
    )
