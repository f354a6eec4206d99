"""A mistyped flag is one line that names the flag meant, on `bugbout run` (whose flags
Hydra's parsing sees first) and on the commands argparse reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.cli import main
from cli_runs import bugbout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject:\n  source: src/x\n")
    return tmp_path


def test_a_mistyped_run_flag_suggests_the_flag_meant(project: Path) -> None:
    ran = bugbout("run", "--retry-faild", cwd=project)
    assert ran.returncode == 2
    (line,) = ran.stderr.splitlines()
    assert line.startswith(
        "error: bugbout run: unknown option --retry-faild (did you mean --retry-failed?)"
    )
    assert not (project / ".bugbout").exists(), "nothing ran"


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["run", "--keep-goin"], "--keep-going"),
        (["report", "--fromat", "json"], "--format"),
        (["init", "--forse"], "--force"),
        (["run", "--multirn"], "--multirun"),
    ],
)
def test_each_command_suggests_its_own_flag(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    meant: str,
) -> None:
    monkeypatch.chdir(project)
    assert main(args) == 2
    assert f"(did you mean {meant}?)" in capsys.readouterr().err


def test_no_suggestion_for_a_flag_like_nothing_known(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    assert main(["run", "--zzzzzzzz"]) == 2
    assert "did you mean" not in capsys.readouterr().err
