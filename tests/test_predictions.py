"""The ``predictions`` agent: SWE-bench predictions (the one-bug task's gold patch, a
wrong patch, none) replayed as contestants of a real bout, and scored like any other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.errors import ConfigError
from bugbout.plugins.agents.predictions import PredictionsAgent, read_predictions
from one_bug import one_bug_repository

WRONG = """\
diff --git a/src/mid/core.py b/src/mid/core.py
--- a/src/mid/core.py
+++ b/src/mid/core.py
@@ -1,3 +1,3 @@
 def middle(values):
     ordered = sorted(values)
-    return ordered[len(ordered) // 2]
+    return ordered[(len(ordered) - 1) // 2]
"""


def predictions(path: Path, rows: list[tuple[str, str]], model: str) -> Path:
    path.write_text(
        "".join(
            json.dumps({"instance_id": i, "model_name_or_path": model, "model_patch": p}) + "\n"
            for i, p in rows
        )
    )
    return path


@pytest.mark.slow
def test_stored_patches_are_raced_scored_and_reported(tmp_path: Path) -> None:
    repo = one_bug_repository(tmp_path / "repo").path
    fix = subprocess.run(
        ["git", "diff", "HEAD~1", "HEAD", "--", "src"], cwd=repo, capture_output=True,
        text=True, check=True,
    ).stdout  # fmt: skip
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    task = sha[:12]
    files = {
        "gold": predictions(tmp_path / "gold.jsonl", [(f"me__mid-{task}", fix)], "gold-model"),
        "wrong": predictions(tmp_path / "wrong.jsonl", [(task, WRONG)], "wrong-model"),
        "absent": predictions(tmp_path / "absent.jsonl", [("other-1234", fix)], "m"),
    }
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "contestants": {
            name: {"agent": "predictions", "file": str(path)} for name, path in files.items()
        },
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter"],
        cwd=repo, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads((repo / ".bugbout" / "report.json").read_text())
    (row,) = report["tasks"]
    assert row["scores"] == {"gold": "resolved", "wrong": "wrong-fix", "absent": "no-fix"}
    agents = {a["contestant"]: a for a in report["agents"]}
    assert agents["gold"]["agent"] == "predictions" and agents["gold"]["model"] == "gold-model"
    absent = json.loads(
        next((repo / ".bugbout/attempts" / task / "absent").glob("*.json")).read_text()
    )
    assert absent["status"] == "agent-error", absent
    assert f"no prediction for task {task}" in (absent["error"] or ""), absent


def test_an_instance_id_names_a_task_or_ends_with_one(tmp_path: Path) -> None:
    path = predictions(
        tmp_path / "p.jsonl", [("owner__repo-abc123def456", "P1"), ("0123456789ab", "P2")], "m"
    )
    agent = PredictionsAgent(file=path, name="replay")
    assert agent.patch_for("abc123def456") == "P1"
    assert agent.patch_for("0123456789ab") == "P2"
    assert agent.patch_for("c123def456") is None
    assert agent.model == "m"
    other = predictions(tmp_path / "q.jsonl", [("0123456789ab", "P3")], "m")
    assert agent.settings_key() != PredictionsAgent(file=other, name="replay").settings_key()


def test_a_json_list_reads_as_its_lines_and_its_content_keys_the_attempts(
    tmp_path: Path,
) -> None:
    """The same predictions as a JSON list at another path: the same patches, the same
    attempts (their key is the file's content, not its path)."""
    rows = [("owner__repo-abc123def456", "P1"), ("0123456789ab", "P2")]
    lines = predictions(tmp_path / "p.jsonl", rows, "m")
    listed = tmp_path / "elsewhere" / "p.json"
    listed.parent.mkdir()
    listed.write_text(json.dumps([json.loads(line) for line in lines.read_text().splitlines()]))
    assert read_predictions(listed) == read_predictions(lines)
    agent = PredictionsAgent(file=lines, name="replay")
    assert agent.settings_key() == PredictionsAgent(file=listed, name="replay").settings_key()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json\n", "is not JSON lines"),
        ('{"model_patch": "x"}\n', "entry 1: no instance_id"),
        (None, "predictions file"),
    ],
)
def test_a_bad_predictions_file_is_one_line(tmp_path: Path, text: str | None, words: str) -> None:
    path = tmp_path / "p.jsonl"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError, match=words) as raised:
        read_predictions(path)
    assert "\n" not in str(raised.value)
