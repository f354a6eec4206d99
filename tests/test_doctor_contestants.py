"""``bugbout doctor``'s checks of each contestant's CLI (found, version, flags) and
``--dry-run`` with scripted CLIs."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.pipeline import build_contestants
from bugbout.onboarding.doctor import DUMMY_KEY, KNOWN_AGENTS, probes
from bugbout.onboarding.doctor.clis import cli_checks
from doctor_runs import SECRETS, bugbout, configured_repo, executable, lines


@pytest.mark.slow
def test_missing_agents_fail_with_how_to_install_them(tmp_path: Path) -> None:
    repo = configured_repo(
        tmp_path / "repo",
        contestants={"ghost": {"agent": "command", "command": ["/nonexistent/agent"]}},
    )
    result = bugbout("--dry-run", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    hint = "install '/nonexistent/agent', or correct contestant.ghost's command"
    assert found["ghost"] == (
        f"FAIL  ghost: '/nonexistent/agent' is not installed (not on PATH); fix: {hint}"
    )
    assert found["ghost dry run"] == (
        f"FAIL  ghost dry run: '/nonexistent/agent' is not installed; fix: {hint}"
    )


@pytest.mark.slow
def test_examiners_are_checked_beside_the_contestants(tmp_path: Path) -> None:
    """An `examiners:` section is valid configuration: each examiner's program is checked
    like a contestant's, and no check fails for doctor's own reasons."""
    repo = configured_repo(
        tmp_path / "repo",
        contestants={"fixer": {"agent": "command", "command": ["/bin/true"]}},
        examiners={"prober": {"agent": "command", "command": ["/nonexistent/examiner"]}},
    )
    result = bugbout(cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["fixer"].startswith("ok    fixer"), result.stdout
    assert found["prober"] == (
        "FAIL  prober: '/nonexistent/examiner' is not installed (not on PATH); fix: install "
        "'/nonexistent/examiner', or correct examiner.prober's command"
    )
    assert "settings" not in " ".join(found), result.stdout


@pytest.mark.slow
def test_packaged_agents_missing_from_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    result = bugbout(
        "contestant=[claude-code,codex,gemini-cli,mini-swe-agent]",
        "contestant.mini-swe-agent.model=openai/gpt-5",
        cwd=configured_repo(tmp_path / "repo"),
        env={"PATH": str(bin_dir)},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    for name, program in (
        ("claude-code", "claude"), ("codex", "codex"), ("gemini-cli", "gemini"),
        ("mini-swe-agent", "mini"),
    ):  # fmt: skip
        assert found[name] == (
            f"FAIL  {name}: {program!r} is not installed (not on PATH); "
            f"fix: {KNOWN_AGENTS[name].install}"
        )
    assert "npm install -g @openai/codex" in found["codex"]
    assert "npm install -g @anthropic-ai/claude-code" in found["claude-code"]
    assert "npm install -g @google/gemini-cli" in found["gemini-cli"]
    assert "pip install mini-swe-agent" in found["mini-swe-agent"]
    assert found["git"].startswith("ok    git")


FAKE_CLI = """
    #!/bin/sh
    # A CLI whose help lists --known and, for its `run` subcommand, --sub-only.
    case "$1 $2" in
      "--version "*) printf '%s|%s\\n' "$HOME" "${{OPENAI_API_KEY:-no key}}" > {proof}
                    echo "fakecli version 1.2.3" ;;
      "--help "*) echo "usage: fakecli [--known] [--verbose] COMMAND" ;;
      "run --help") echo "usage: fakecli run [--sub-only]" ;;
      *) echo "fakecli was run for real: $*" > {ran} ;;
    esac
"""


@pytest.mark.slow
def test_flags_are_checked_against_the_cli_help(tmp_path: Path) -> None:
    proof, ran = tmp_path / "version-env.txt", tmp_path / "ran.txt"
    fake = executable(tmp_path / "fakecli", FAKE_CLI.format(proof=proof, ran=ran))
    script = tmp_path / "agent.py"
    script.write_text("print('an agent script')\n")
    contestants = {
        "stale": {"agent": "command", "vendor": "openai",
                  "command": [str(fake), "--known", "--missing=1", "--gone", "{prompt}"]},
        "fresh": {"agent": "command", "command": [str(fake), "run", "--sub-only", "--known"]},
        "script": {"agent": "command", "command": [sys.executable, str(script), "--model", "x"]},
        "bare": {"agent": "command", "command": [str(fake)]},
    }  # fmt: skip
    repo = configured_repo(tmp_path / "repo", contestants=contestants)
    result = bugbout(cwd=repo, env=SECRETS)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["stale"] == f"ok    stale: fakecli 1.2.3 at {fake}"
    assert found["stale flags"] == (
        "FAIL  stale flags: `fakecli --help` does not list --gone, --missing, which bugbout "
        "passes; fix: update the CLI or its command"
    )
    assert found["fresh flags"] == (
        "ok    fresh flags: the 2 --flags bugbout passes are all in `fakecli --help` and "
        "`fakecli run --help`"
    )
    assert found["script flags"] == (
        f"ok    script flags: not checked: they are {script}'s, not {Path(sys.executable).name}'s"
    )
    assert found["bare flags"] == "ok    bare flags: passes no --flags"
    assert not ran.exists()  # only --version and --help were run
    home, key = proof.read_text().strip().split("|")
    assert key == "no key"  # the user's keys never reach a probed CLI
    assert Path(home) != Path.home()
    assert not Path(home).exists()  # a private, temporary HOME


@pytest.mark.slow
def test_dry_run_with_a_command_contestant(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("print('done')\n")
    repo = configured_repo(
        tmp_path / "repo",
        contestants={"mine": {"agent": "command", "command": [sys.executable, str(script)]}},
    )
    result = bugbout("--dry-run", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    found = lines(result)
    assert found["mine"].startswith("ok    mine: python")
    assert found["mine dry run"] == (
        "ok    mine dry run: command cannot be scripted; its program exists"
    )


@pytest.mark.slow
def test_a_failed_dry_run_keeps_its_logs_and_no_key_of_the_user(tmp_path: Path) -> None:
    """A stand-in ``claude`` that fails: the report names its error and its logs, which show
    it got the scripted server's URL and a dummy key, not the user's."""
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    executable(
        stand_ins / "claude",
        """
        #!/bin/sh
        [ "$1" = --version ] && echo "9.9.9 (Claude Code)" && exit 0
        env
        echo "Error: scripted failure" >&2
        exit 1
        """,
    )
    result = bugbout(
        "--dry-run",
        "contestant=claude-code",
        cwd=tmp_path,
        env={**SECRETS, "PATH": f"{stand_ins}{os.pathsep}{os.environ['PATH']}"},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["claude-code"] == f"ok    claude-code: claude 9.9.9 at {stand_ins / 'claude'}"
    line = found["claude-code dry run"]
    assert line.startswith(
        "FAIL  claude-code dry run: ended agent-error (Error: scripted failure) after "
    ), line
    logs = Path(line.split("; logs in ")[1])
    (kept,) = [path for path in logs.parents if path.name.startswith("bugbout-doctor-")]
    try:
        printed = (logs / "stdout.log").read_text().splitlines()
        env = dict(entry.split("=", 1) for entry in printed if "=" in entry)
        assert env["ANTHROPIC_API_KEY"] == DUMMY_KEY
        assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
        assert not set(SECRETS.values()) & set(env.values())
    finally:
        shutil.rmtree(kept)


def test_a_cli_slow_to_answer_is_not_called_broken(
    tmp_path: Path, plugins: Plugins, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine a Node CLI can take long to print its version: doctor says it
    did not answer in time and to run again, never to reinstall a CLI that works."""
    slow = executable(tmp_path / "slowcli", "#!/bin/sh\nsleep 5\necho slowcli 1.0.0\n")
    monkeypatch.setattr(probes, "PROBE_TIMEOUT", 0.5)
    settings = BoutSettings.model_validate(
        {
            "project": {"source": "src/p"},
            "contestants": {"slow": {"agent": "command", "command": [str(slow), "{prompt}"]}},
        }
    )
    (contestant,) = build_contestants(settings, plugins)
    (check,) = list(cli_checks(contestant, tmp_path / "scratch"))
    assert not check.ok
    assert check.detail == "`slowcli --version` did not answer in 0.5 s"
    assert "reinstall" not in f"{check.detail} {check.fix}"
    assert check.fix == "run `bugbout doctor` again when the machine is less busy"
