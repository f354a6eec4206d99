"""`bugbout doctor` fails what `bugbout run` would refuse or could not start: a vendor's
agent without its key, and a script the sandbox hides (one in HOME)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bugbout.bout import Project
from bugbout.onboarding.doctor.race_ready import race_checks
from doctor_runs import bugbout, configured_repo, executable, lines

NO_KEYS = {"OPENAI_API_KEY": "", "CODEX_API_KEY": ""}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository with a codex contestant (a stand-in CLI on PATH, no key) and a command
    contestant running a script kept in HOME, and the environment to run doctor in."""
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    executable(bin_dir / "codex", "#!/bin/sh\necho 'codex-cli 0.80.0'\n")
    script = executable(home / "fix.sh", "#!/bin/sh\necho fixing\n")
    contestants = {
        "codexy": {"agent": "codex"},
        "homely": {"agent": "command", "command": ["bash", str(script)]},
        "fine": {"agent": "command", "command": ["true"]},
    }
    repo = configured_repo(tmp_path / "repo", contestants=contestants)
    env = {**NO_KEYS, "HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return repo, env


def test_doctor_fails_a_contestant_run_refuses_and_a_script_the_sandbox_hides(
    setup: tuple[Path, dict[str, str]],
) -> None:
    repo, env = setup
    result = bugbout(cwd=repo, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["codexy can race"].startswith("FAIL  codexy can race: contestant 'codexy' (codex)")
    assert "needs OPENAI_API_KEY" in found["codexy can race"]
    assert found["homely in the sandbox"].startswith(
        f"FAIL  homely in the sandbox: its command names {Path(env['HOME']).resolve() / 'fix.sh'}"
    )
    assert found["fine can race"].startswith("ok    fine can race")
    assert "fine in the sandbox" not in found


def test_from_python(setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, env = setup
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    project = Project.load(repo)
    checks = {check.name: check for check in race_checks(project.settings, project.plugins)}
    assert not checks["codexy can race"].ok
    assert not checks["homely in the sandbox"].ok
    assert checks["fine can race"].ok and "fine in the sandbox" not in checks
