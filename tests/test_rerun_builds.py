"""A judge-only re-run decides again from the store's evidence: it builds no task's
environment (the interpreter environment's check starts a process of its own)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bugbout.bout import Bout, Project
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterEnvironment

pytestmark = pytest.mark.slow


def test_a_judge_only_re_run_builds_no_environment(
    bout_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {k: v for k, v in config["contestants"].items() if k == "good"}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    overrides = ["environment=interpreter"]
    first = Bout(Project.load(bout_repo, overrides)).run()
    assert first.job is not None and first.job.evidence_made > 0

    built: list[Path] = []
    build = InterpreterBuilder.build

    def counted(self: InterpreterBuilder, request: EnvironmentRequest) -> InterpreterEnvironment:
        built.append(request.tree)
        return build(self, request)

    monkeypatch.setattr(InterpreterBuilder, "build", counted)
    again = Bout(Project.load(bout_repo, [*overrides, "judge=strict"])).run()
    assert again.job is not None and again.job.evidence_made == 0, again.job
    assert again.job.evidence_reused == first.job.evidence_made + first.job.evidence_reused
    assert built == []
    assert again.report is not None
    assert {row.contestant: row.resolved for row in again.report.agents} == {"good": 1}
