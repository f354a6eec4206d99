"""The report takes the plugins it uses from the pipeline: a bout's report reads its
attempts' transcripts with the bout's own plugins (one registered from Python too), and
``bugbout report`` with those installed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bugbout import hookimpl
from bugbout.bout import Bout, Project
from bugbout.core.contract.transcript import Step
from one_bug import AGENTS, bugbout, one_bug_repository, write_agent


class InlineReader:
    """Reads the command agent's transcripts: one step naming the folder it read."""

    @hookimpl
    def bugbout_transcript(self, agent: str, logdir: Path) -> list[Step] | None:
        if agent != "command":
            return None
        return [Step("command", f"read by the inline plugin in {logdir.name}", exit_code=0)]


def _steps(report: Path) -> list[list[str]]:
    """The text of each transcript's steps on the report's task pages."""
    pages = json.loads(report.read_text())["pages"]
    return [
        [step["text"] for step in patch["transcript"]["steps"]]
        for page in pages
        for patch in page["patches"]
        if patch["transcript"] is not None
    ]


@pytest.mark.slow
def test_a_bout_s_report_reads_transcripts_with_the_bout_s_own_plugins(tmp_path: Path) -> None:
    """A transcript reader registered on the project's plugins from Python reads the
    attempts' logs for the bout's report; ``bugbout report``, which has only the installed
    plugins, shows the end of what the agent printed instead."""
    repo = one_bug_repository(tmp_path / "repo").path
    agent = write_agent(tmp_path, "good", AGENTS["good"])
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 60},
        "contestants": {"good": {"agent": "command", "command": [sys.executable, str(agent)]}},
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    project = Project.load(repo, ["environment=interpreter"])
    project.plugins.register(InlineReader(), name="inline-reader")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
        Bout(project).run()
        [steps] = _steps(repo / ".bugbout" / "report.json")
        assert len(steps) == 1 and steps[0].startswith("read by the inline plugin in ")
        ran = bugbout("report", "--format", "json", cwd=repo)
    assert ran.returncode == 0, ran.stderr
    [patch_page] = [p for page in json.loads(ran.stdout)["pages"] for p in page["patches"]]
    transcript = patch_page["transcript"]
    assert transcript["steps"] == []
    assert "Fixed middle() for even-length input." in transcript["raw"]
