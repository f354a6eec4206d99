"""Ground truth whose test runs never start: an environment error that names the cause,
computed again on the next run, never a verdict on the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from one_bug import bugbout, one_bug_repository

pytestmark = pytest.mark.requires("bubblewrap")

BROKEN_BWRAP = """#!/bin/sh
for last; do :; done
if [ "$last" = true ]; then exec {real} "$@"; fi
echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2
exit 1
"""
"""A bubblewrap that passes bugbout's probe (an empty sandbox running ``true``) and
cannot set up any other sandbox."""


def test_ground_truth_that_never_ran_says_why_and_is_tried_again(tmp_path: Path) -> None:
    repo = one_bug_repository(tmp_path / "repo").path
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    fake = tmp_path / "bwrap"
    fake.write_text(BROKEN_BWRAP.format(real=shutil.which("bwrap")))
    fake.chmod(0o755)
    result = bugbout("tasks", "sandbox=bubblewrap", f"sandbox.executable={fake}", cwd=repo)
    assert result.returncode == 0, result.stderr
    (oracle,) = json.loads((repo / ".bugbout" / "oracles.json").read_text()).values()
    assert oracle["status"] == "environment-error"
    assert "never started" in oracle["reason"], oracle["reason"]
    assert "Can't mount proc" in oracle["reason"]
    assert "executor lost" not in oracle["reason"]
    again = bugbout("tasks", cwd=repo)  # the machine mended: computed again
    assert again.returncode == 0, again.stderr
    (oracle,) = json.loads((repo / ".bugbout" / "oracles.json").read_text()).values()
    assert oracle["status"] == "ok", oracle
