"""Two instruction arms raced on the demo: the same scripted agent given the team's
instruction file, and with every instruction file removed. The report shows them side by
side with the probe's result, and the arm leaves nothing in either's patches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bugbout.example import build_example

READER = """\
import pathlib, re, runpy, sys

guide = pathlib.Path("AGENTS.md")
if guide.exists():
    print("I read AGENTS.md:", *re.findall(r"bugbout-[0-9a-f]{16}", guide.read_text()))
sys.argv = ["agents", "correct"]
runpy.run_module("bugbout.example.agents", run_name="__main__")
"""


@pytest.mark.slow
def test_two_arms_on_the_demo_are_reported_with_the_probe(tmp_path: Path) -> None:
    demo = build_example(tmp_path / "demo")
    reader = tmp_path / "reader.py"
    reader.write_text(READER)
    team = tmp_path / "team-AGENTS.md"
    team.write_text("Run the tests before you finish.\n")
    config = yaml.safe_load((demo / "bugbout.yaml").read_text())
    command = [sys.executable, str(reader)]
    config["contestants"] = {
        "guided": {"agent": "command", "command": command, "instructions": str(team)},
        "unguided": {"agent": "command", "command": command, "instructions": "remove"},
    }
    config.pop("examiners", None)
    (demo / "bugbout.yaml").write_text(yaml.safe_dump(config))
    run = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter", "--quiet"],
        cwd=demo, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    [report] = (demo / ".bugbout").glob("**/report.json")
    data = json.loads(report.read_text())
    rows = {row["contestant"]: row for row in data["agents"]}
    [pair] = data["confidence"]["pairs"]  # paired on the same tasks, as any two are
    assert ({pair["a"], pair["b"]}, pair["tasks"]) == ({"guided", "unguided"}, 3)
    guided, unguided = rows["guided"], rows["unguided"]
    assert guided["scored"] == unguided["scored"] == 3
    assert guided["resolved"] == unguided["resolved"] == 3
    assert (guided["probed"], guided["guidance_read"]) == (3, 3)
    assert (unguided["probed"], unguided["guidance_read"]) == (0, 0)
    markdown = (report.parent / "report.md").read_text()
    assert "read its guidance" in markdown
    assert "3 of 3" in markdown
    for path in (demo / ".bugbout").glob("attempts/*/*/*.json"):
        attempt = json.loads(path.read_text())
        assert "AGENTS.md" not in json.dumps(attempt["patch"]), attempt["contestant"]
