"""The command line end to end, in fresh repositories, as a user runs it."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import history
from bugbout import AssignmentPlugin, Options, hookimpl
from bugbout.config import compose_settings
from bugbout.layout import detect_tests, find_packages


def bugbout(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )


@pytest.fixture
def repo(calc_repo: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    """A fresh copy of the synthetic history, without any bugbout files."""
    source, _ = calc_repo
    target = tmp_path / "calc"
    shutil.copytree(source, target)
    return target


@pytest.fixture
def initialised(repo: Path) -> Path:
    result = bugbout("init", cwd=repo)
    assert result.returncode == 0, result.stderr
    return repo


@pytest.mark.slow
def test_init_finds_the_layout_and_writes_a_commented_config(repo: Path) -> None:
    result = bugbout("init", cwd=repo / "src")
    assert result.returncode == 0, result.stderr
    config = (repo / "bugbout.yaml").read_text()
    assert "  source: src/calc" in config
    assert "  tests: tests" in config
    assert "# " in config
    again = bugbout("init", cwd=repo)
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"error: {repo / 'bugbout.yaml'} already exists; pass --force to overwrite it"
    ]
    assert bugbout("init", "--force", cwd=repo).returncode == 0


@pytest.mark.slow
def test_init_says_how_to_keep_a_bout_short_on_a_large_suite(initialised: Path) -> None:
    repo = initialised
    assert "Note:" not in (repo / "bugbout.yaml").read_text()  # a small suite
    cases = ", ".join(str(case) for case in range(100))
    module = "".join(
        f"@pytest.mark.parametrize('x', [{cases}])\ndef test_{number}(x):\n    pass\n"
        for number in range(25)
    )
    (repo / "tests" / "test_big.py").write_text(f"import pytest\n{module}")
    result = bugbout("init", "--force", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "note: the tests define at least 2,5" in result.stderr
    assert "`verdicts.run-suite: false`" in result.stderr
    config = (repo / "bugbout.yaml").read_text()
    assert config.startswith("# Note: the tests define at least 2,5")
    chosen = bugbout("tasks", "--cfg", "job", cwd=repo)
    assert chosen.returncode == 0, chosen.stderr


def test_init_refuses_a_directory_that_is_not_a_repository(tmp_path: Path) -> None:
    result = bugbout("init", cwd=tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {tmp_path} is not a git repository: bugbout replays the fixes in a "
        "repository's history; run `bugbout init` in a clone of your project"
    )
    assert not (tmp_path / "bugbout.yaml").exists()


@pytest.mark.slow
def test_init_races_the_agents_installed_here(repo: Path, tmp_path: Path) -> None:
    """An agent whose program is installed and whose key is set is a contestant; the
    others are written commented out, with what they lack."""
    programs = tmp_path / "bin"
    programs.mkdir()
    (programs / "codex").write_text("#!/bin/sh\necho codex-cli 1.0\n")
    (programs / "codex").chmod(0o755)
    (programs / "claude").write_text("#!/bin/sh\n")
    (programs / "claude").chmod(0o755)
    (programs / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = {"PATH": str(programs), "OPENAI_API_KEY": "sk-test"}
    for variable in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env[variable] = ""
    result = bugbout("init", cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert "contestants: my-codex)" in result.stderr
    config = (repo / "bugbout.yaml").read_text()
    assert "\ncontestants:\n" in config
    assert "\n  my-codex: {agent: codex}\n" in config
    assert "  # my-claude-code: {agent: claude-code}   # ANTHROPIC_API_KEY is not set" in config
    assert "  # my-gemini-cli: {agent: gemini-cli}   # `gemini` is not installed" in config
    shown = bugbout("tasks", "--cfg", "job", cwd=repo, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "\ncontestants:\n  my-codex:\n    agent: codex\n" in shown.stdout
    settings, _ = compose_settings(repo)  # none chosen: the core races every defined one
    assert settings.chosen("contestant") == {"my-codex": {"agent": "codex"}}


@pytest.mark.slow
def test_flags_and_help_are_bugbouts_own(initialised: Path) -> None:
    bogus = bugbout("run", "--bogus", cwd=initialised)
    assert bogus.returncode == 2
    assert bogus.stderr.strip() == (
        "error: bugbout run: unknown option --bogus; it takes overrides (KEY=VALUE), the flags "
        "that `bugbout run --help` lists, and --cfg, --info, --multirun, --package, --resolve, "
        "-c, -i, -m, -p"
    )
    helped = bugbout("run", "--help", cwd=initialised)
    assert helped.returncode == 0, helped.stderr
    assert "  --retry-failed " in helped.stdout
    assert "  judge        majority | cross-vendor | strict | unanimous\n" in helped.stdout
    assert "  tasks.       reruns, timeout, jobs, repair-imports\n" in helped.stdout
    assert "  judge.       quorum, threshold\n" in helped.stdout
    assert "  reporters.html. title\n" in helped.stdout
    hydra_help = bugbout("run", "--hydra-help", cwd=initialised)
    assert (hydra_help.returncode, hydra_help.stdout) == (0, helped.stdout)
    chosen = ("contestant=codex", "+reporters.mine={reporter: html}", "~reporters.json")
    helped = bugbout("run", *chosen, "--help", cwd=initialised)
    assert helped.returncode == 0, helped.stderr
    assert "  reporters.mine. title\n" in helped.stdout
    assert "  contestant.codex. model, " in helped.stdout
    assert "reporters.json." not in helped.stdout
    hydra_help = bugbout("run", *chosen, "--hydra-help", cwd=initialised)
    assert (hydra_help.returncode, hydra_help.stdout) == (0, helped.stdout)
    piped = subprocess.run(
        f"{sys.executable} -m bugbout run --help | head -1",
        shell=True, cwd=initialised, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert piped.stderr == ""


class EdgeCases:
    """An installed assignment that takes an option."""

    @hookimpl
    def bugbout_assignments(self) -> list[AssignmentPlugin]:
        class Scope(Options):
            scope: str = ""

        return [AssignmentPlugin(name="edge-cases", factory=Scope, options=Scope)]


def test_completion_offers_the_chosen_plugins_options(tmp_path: Path) -> None:
    """A plugin's options complete under the key that sets them: the default miner's and
    judge's, a default reporter's; a plugin chosen on the line or in ``bugbout.yaml``
    offers its own, as do the entries ``bugbout.yaml`` adds to a map."""
    from bugbout.core.contract.manager import make_plugins
    from bugbout.usage import complete, project_choices

    plugins = make_plugins()
    assert complete(["run", "miner.l"], plugins) == ["miner.limit="]
    assert "miner.max-source-files=" in complete(["tasks", "miner."], plugins)
    assert complete(["run", "reporters.html.t"], plugins) == ["reporters.html.title="]
    assert complete(["run", "judge.t"], plugins) == ["judge.threshold="]
    assert complete(["run", "judge=strict", "judge.k"], plugins) == ["judge.keep-assignments="]
    assert "issue-sources.file.path=" in complete(["run", "issue-sources."], plugins)
    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, {override judge: strict}, _self_]\n"
        "contestants: {mine: {agent: codex}}\n"
        "reporters: {short: {reporter: html}, html: null}\n"
    )
    chosen = project_choices(tmp_path / "sub")
    assert "contestants.mine.model=" in complete(["run", "contestants.mine."], plugins, chosen)
    assert complete(["run", "judge.k"], plugins, chosen) == ["judge.keep-assignments="]
    assert complete(["run", "reporters."], plugins, chosen) == [
        "reporters.terminal.width=", "reporters.terminal.color=",
        "reporters.json.indent=", "reporters.short.title=",
    ]  # fmt: skip
    plugins.register(EdgeCases(), name="edge-cases", distribution="bugbout-edge-cases")
    (tmp_path / "bugbout.yaml").write_text(
        "examiners: {mine: {agent: codex, assignment: {assignment: edge-cases}}}\n"
    )
    chosen = project_choices(tmp_path)
    assert complete(["run", "examiners.mine.assignment."], plugins, chosen) == [
        "examiners.mine.assignment.scope="
    ]
    (tmp_path / "bugbout.yaml").write_text("contestants: [unclosed\n")
    assert complete(["run", "contestants."], plugins, project_choices(tmp_path)) == []


def test_completion_follows_the_instances_chosen_on_the_line(tmp_path: Path) -> None:
    """An entry the line adds to a map offers its plugin's options, one it removes none; the
    contestants chosen on the line offer their agents' options under ``contestant.NAME.``,
    and those defined in ``bugbout.yaml`` or on the line complete as the group's options."""
    from bugbout.core.contract.manager import make_plugins
    from bugbout.usage import complete, project_choices

    plugins = make_plugins()
    added = ["run", "reporters.mine.reporter=html", "reporters.mine.t"]
    assert complete(added, plugins) == ["reporters.mine.title="]
    assert complete(["run", "+reporters.short={reporter: html}", "reporters.sh"], plugins) == [
        "reporters.short.title="
    ]
    assert complete(["run", "reporters.json.reporter=html", "reporters.json."], plugins) == [
        "reporters.json.title="
    ]
    assert complete(["run", "~reporters.html", "reporters.h"], plugins) == []
    assert complete(["run", "reporters.html=null", "reporters.h"], plugins) == []
    source = ["run", "+issue-sources.mine.issue-source=file", "issue-sources.mine."]
    assert complete(source, plugins) == ["issue-sources.mine.path="]
    examiner = ["run", "+examiners.repro.agent=codex", "examiners.repro.r"]
    assert complete(examiner, plugins) == ["examiners.repro.reasoning-effort="]
    assert complete(["run", "contestant=codex", "contestant.codex.r"], plugins) == [
        "contestant.codex.reasoning-effort="
    ]
    several = complete(["run", "-m", "contestant=codex,claude-code", "contestant."], plugins)
    assert {"contestant.codex.local-provider=", "contestant.claude-code.effort="} <= set(several)
    assert complete(["run", "judge=majority,s"], plugins) == ["judge=majority,strict"]
    assert complete(["run", "-m", "judge=majority,strict", "judge.k"], plugins) == [
        "judge.keep-assignments="
    ]
    (tmp_path / "bugbout.yaml").write_text("contestants: {mine: {agent: codex}}\n")
    chosen = project_choices(tmp_path)
    assert complete(["run", "contestant=[claude-code,m"], plugins, chosen) == [
        "contestant=[claude-code,mine", "contestant=[claude-code,mini-swe-agent",
    ]  # fmt: skip
    mine = ["run", "contestant=[claude-code,mine]", "contestant.mine.r"]
    assert complete(mine, plugins, chosen) == ["contestant.mine.reasoning-effort="]
    changed = ["run", "contestants.mine.agent=claude-code", "contestant=mine", "contestant.mine.e"]
    assert complete(changed, plugins, chosen) == ["contestant.mine.env=", "contestant.mine.effort="]
    assert complete(["run", "examiner=[]", "examiner."], plugins, chosen) == []


@pytest.mark.slow
def test_shell_completion_in_a_real_bash(initialised: Path, tmp_path: Path) -> None:
    """The bash script, sourced in bash, completes groups and their options: called as
    readline calls it, and typed into an interactive bash, where a word splits at '='."""
    shim = tmp_path / "bin" / "bugbout"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m bugbout "$@"\n')
    shim.chmod(0o755)
    script = bugbout("completion", "bash", cwd=initialised).stdout
    assert "complete -F _bugbout bugbout" in script
    env = {**os.environ, "PATH": f"{shim.parent}:{os.environ['PATH']}"}

    def reply(line: str) -> list[str]:
        """COMPREPLY for ``line``: what replaces readline's word, the text after an '='."""
        program = f"{script}\nCOMP_LINE={shlex.quote(line)}; COMP_POINT={len(line)}; _bugbout; "
        program += 'printf "%s\\n" "${COMPREPLY[@]}"'
        result = subprocess.run(
            ["bash", "-c", program], cwd=initialised, capture_output=True, text=True, env=env,
            check=True,
        )  # fmt: skip
        return result.stdout.split()

    assert reply("bugbout ru") == ["run"]
    assert reply("bugbout run jud") == ["judge=", "judge.quorum=", "judge.threshold="]
    assert reply("bugbout run judge=s") == ["strict"]
    assert reply("bugbout run 'judge=s") == ["'judge=strict"]
    assert "tasks.reruns=" in reply("bugbout tasks tasks.r")
    assert reply("bugbout run miner.l") == ["miner.limit="]
    assert reply("bugbout run reporters.mine.reporter=html reporters.mine.t") == [
        "reporters.mine.title="
    ]

    rc = tmp_path / "bashrc"
    rc.write_text(f"{script}PS1='$ '\n")

    def typed(line: str) -> str:
        """The line an interactive bash holds after ``line`` and a tab."""
        main, child = pty.openpty()
        shell = subprocess.Popen(
            ["bash", "--noprofile", "--rcfile", str(rc), "-i"], stdin=child, stdout=child,
            stderr=child, cwd=initialised, env={**env, "TERM": "dumb"}, start_new_session=True,
        )  # fmt: skip
        os.close(child)
        # the tab, then Ctrl-A and `echo` before the line, which runs: it prints the line
        os.write(main, f"{line}\t\x01echo LINE:\n".encode())
        shown = b""
        printed = None
        while printed is None and select.select([main], [], [], 60)[0]:
            shown += os.read(main, 4096)
            printed = re.search(rb"\nLINE:(.*)\r\n", shown)
        os.write(main, b"exit\n")
        shell.wait(timeout=60)
        os.close(main)
        assert printed, shown
        return printed[1].decode()

    assert typed("bugbout run judge=s") == "bugbout run judge=strict"
    assert typed("bugbout run reporters.mine.reporter=html reporters.mine.t") == (
        "bugbout run reporters.mine.reporter=html reporters.mine.title="
    )
    mine = "bugbout run +contestants.mine.agent=codex contestant=[claude-code,mine]"
    assert typed(f"{mine} contestant.mine.reas") == f"{mine} contestant.mine.reasoning-effort="
    for shell in ("zsh", "fish"):
        assert "bugbout __complete" in bugbout("completion", shell, cwd=initialised).stdout
    assert bugbout("completion", "tcsh", cwd=initialised).returncode == 2


def test_layout_detection(tmp_path: Path) -> None:
    files = [
        "docs/__init__.py", "alpha/__init__.py", "mypkg/__init__.py", "mypkg/sub/__init__.py",
        "src/beta/__init__.py", ".hidden/__init__.py", "tests/helpers/__init__.py",
    ]  # fmt: skip
    assert find_packages(files) == ["src/beta", "alpha", "mypkg"]
    (tmp_path / "mypkg" / "tests").mkdir(parents=True)
    assert detect_tests(tmp_path, "mypkg") == "mypkg/tests"


@pytest.mark.slow
def test_init_then_tasks_with_the_default_environment(initialised: Path) -> None:
    """The default uv environment, built for real, gives the same ground truth."""
    result = bugbout("tasks", "miner.limit=3", cwd=initialised)
    assert result.returncode == 0, result.stderr
    tasks = json.loads((initialised / ".bugbout" / "tasks.json").read_text())
    oracles = json.loads((initialised / ".bugbout" / "oracles.json").read_text())
    assert tasks["examined"] == 13
    assert tasks["excluded"]["over-limit"] == 4
    assert [task["issue"]["number"] for task in tasks["tasks"]] == [11, 10, 9]
    assert set(tasks["tasks"][0]) >= {
        "id", "sha", "parent", "date", "title", "issue", "problem_statement",
        "source_files", "test_files", "scored", "reason",
    }  # fmt: skip
    parametrize = oracles[tasks["tasks"][1]["id"]]
    assert parametrize["status"] == "ok"
    assert parametrize["fail_to_pass"] == ["tests/test_clamp.py::test_clamp[11-10]"]
    assert parametrize["environment"].startswith("uv: Python 3.12")
    assert "3 tasks from 13 commits" in result.stdout
    assert (initialised / ".bugbout" / ".gitignore").read_text().strip().endswith("*")
    status = subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=initialised,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".bugbout" not in status.stdout


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
            "error: environment=nope: no such environment; choose one of interpreter, podman, uv",
        ),
        (["miner=nope"], "error: miner=nope: no such miner; choose one of git-history"),
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
            "environment 'uv': exclude-newr: Extra inputs are not permitted",
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
            "tasks: jobs, repair-imports, reruns, timeout)",
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


def test_mine_only_writes_the_tasks_without_ground_truth(initialised: Path) -> None:
    result = bugbout("tasks", "--mine-only", "miner.limit=2", cwd=initialised)
    assert result.returncode == 0, result.stderr
    store = initialised / ".bugbout"
    tasks = json.loads((store / "tasks.json").read_text())
    assert len(tasks["tasks"]) == 2
    assert not (store / "oracles.json").exists()
    assert "not computed" in result.stdout
    assert f"wrote {store / 'tasks.json'}\n" in result.stderr


def test_corrupt_record_is_reported_and_kept(initialised: Path) -> None:
    store = initialised / ".bugbout"
    store.mkdir()
    (store / "oracles.json").write_text('{"abc": {"status": "maybe"}}')
    result = bugbout("tasks", "environment=interpreter", "~issue-sources.github", cwd=initialised)
    assert result.returncode == 2
    assert "oracles.json is corrupt" in result.stderr
    assert "move it aside" in result.stderr
    assert (store / "oracles.json").read_text() == '{"abc": {"status": "maybe"}}'


@pytest.mark.slow
def test_demo_builds_the_example_and_mines_it(tmp_path: Path) -> None:
    result = bugbout("demo", str(tmp_path / "demo"), "environment=interpreter", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tasks = json.loads((tmp_path / "demo" / ".bugbout" / "tasks.json").read_text())
    assert [task["issue"]["number"] for task in tasks["tasks"]] == [8, 5, 3]
    assert tasks["tasks"][2]["problem_statement"].startswith("median() is wrong")
    assert "Proposed fix" not in tasks["tasks"][2]["problem_statement"]
    assert all(task["scored"] for task in tasks["tasks"])
    again = bugbout("demo", str(tmp_path / "demo"), "environment=interpreter", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "resuming the demo bout" in again.stderr
    assert "no new attempts" in again.stdout


def test_core_does_not_import_hydra() -> None:
    code = (
        "import sys, bugbout.core.tasks, bugbout.core.contract.manager; "
        "print('hydra' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_help_and_unknown_command(tmp_path: Path) -> None:
    assert "commands:" in bugbout("--help", cwd=tmp_path).stdout
    result = bugbout("frobnicate", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr.strip() == "error: unknown command 'frobnicate'; "
        "the commands are init, doctor, tasks, run, report, plugins, demo, completion"
    )


def test_history_fixture_is_consistent() -> None:
    assert len(history.EXPECTED_ORDER) == 7


@pytest.mark.slow
def test_offline_github_fails_over_with_one_warning(initialised: Path) -> None:
    subprocess.run(
        ["git", "remote", "add", "origin", "https://github.com/calc/calc.git"],
        cwd=initialised,
        check=True,
    )
    with (initialised / "bugbout.yaml").open("a") as config:
        config.write("issue-sources:\n  github: {api-url: 'http://127.0.0.1:9', timeout: 2}\n")
    result = bugbout("tasks", "environment=interpreter", "miner.limit=2", cwd=initialised)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "github" in warnings[0]
    tasks = json.loads((initialised / ".bugbout" / "tasks.json").read_text())
    assert tasks["tasks"][0]["problem_statement"].startswith("Fix a regression in fmt (#11)")
