"""The command line's flags, help and shell completion, down to a real bash."""

from __future__ import annotations

import os
import pty
import re
import select
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout import AssignmentPlugin, Options, hookimpl
from cli_runs import bugbout


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
    assert "  tasks.       reruns, timeout, jobs, repair-imports, statement, drafter\n" in (
        helped.stdout
    )
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
    from bugbout.cli.usage import complete, project_choices
    from bugbout.core.contract.manager import make_plugins

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
    from bugbout.cli.usage import complete, project_choices
    from bugbout.core.contract.manager import make_plugins

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


def test_help_and_unknown_command(tmp_path: Path) -> None:
    assert "commands:" in bugbout("--help", cwd=tmp_path).stdout
    result = bugbout("frobnicate", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr.strip() == "error: unknown command 'frobnicate'; "
        "the commands are init, doctor, tasks, run, report, compare, export, plugins, demo, "
        "completion"
    )
