"""The pipeline's wiring: each stage gets its own sections of the settings, a job sent to
another process ships those sections only and rebuilds there the plugins it uses, and
the store keys made from the sections are those made from the whole settings before."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

import bugbout
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.evidence import EvidenceKeys
from bugbout.core.mine import spec as mining
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.pipeline import (
    attempt_spec,
    build_contestants,
    mine_plugins,
    mine_spec,
    race,
    truth_spec,
    verdicts,
    verdicts_spec,
)
from bugbout.core.plumbing.tools import Tools
from bugbout.core.race.race import RemoteAttempt
from bugbout.core.store.race_records import Attempt, AttemptStatus
from bugbout.core.store.records import Oracle, Task, TaskIssue
from bugbout.core.store.store import Store
from bugbout.core.tasks import OracleJob

SECRET = "sk-contestant-secret-0123456789"
"""Held by a contestant's settings: no test run after the race has any use for it."""


def bout(root: Path) -> BoutSettings:
    return BoutSettings(
        project=ProjectSettings(source="src/p"),
        sandbox=PluginChoice(name="none"),
        environment=PluginChoice(name="interpreter"),
        auditor=PluginChoice.model_validate({"name": "recall", "threshold": 0.5}),
        contestants={
            "solo": {"agent": "command", "command": ["true"]},
            "other": {"agent": "command", "command": ["true"], "env": {"KEY": SECRET}},
        },
        prices={"unshipped-model": {"input": 1.0, "output": 2.0}},
        root=root,
    )


TASK = Task(
    id="t", sha="s" * 40, parent="p" * 40, date="2024-01-01T00:00:00+00:00", title="Fix",
    issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
)  # fmt: skip
ORACLE = Oracle(task_id="t", key="k", status="ok", fail_to_pass=["tests/test_a.py::test_x"])
ATTEMPT = Attempt(
    task_id="t", contestant="c", role="contestant", key="ak", agent="command",
    status=AttemptStatus.FINISHED, started="2024-01-01T00:00:00+00:00",
)  # fmt: skip


def test_a_remote_evidence_job_ships_its_sections_and_rebuilds_its_plugins(
    tmp_path: Path, plugins: Plugins
) -> None:
    settings = bout(tmp_path)
    tools = Tools.build(settings, plugins, Store(settings.store_dir))
    stages = verdicts(settings, plugins, tools)
    job = stages._job(TASK, ORACLE, [], suite=("tests",), in_process=False, width=1)
    shipped = pickle.dumps(job)
    assert SECRET.encode() not in shipped  # the contestants' settings stay in the driver
    assert b"unshipped-model" not in shipped  # nor the prices
    arrived = pickle.loads(shipped)
    benches, auditor = arrived.tools()  # in the worker: made from the sections it shipped
    assert benches is not tools and benches.project == settings.project
    assert type(benches.runner) is type(tools.runner)
    assert benches.sandbox.name == "none"
    assert type(auditor) is type(stages.auditor)
    assert auditor.options.threshold == 0.5  # type: ignore[attr-defined]


def test_a_remote_ground_truth_job_ships_its_sections_only(tmp_path: Path) -> None:
    settings = bout(tmp_path)
    spec = truth_spec(settings)
    shipped = pickle.dumps(OracleJob(spec, TASK, spec.key(TASK.sha)))
    assert SECRET.encode() not in shipped
    arrived = pickle.loads(shipped)
    assert arrived.spec.bench.repository == settings.repository
    assert arrived.spec.bench.store_dir == settings.store_dir
    assert arrived.spec.tasks == settings.tasks


def test_a_remote_attempt_ships_its_sections_and_its_own_contestant_only(
    tmp_path: Path, plugins: Plugins
) -> None:
    settings = bout(tmp_path)
    solo = next(c for c in build_contestants(settings, plugins) if c.name == "solo")
    tools = Tools.build(settings, plugins, Store(settings.store_dir))
    driver = race(settings, plugins, tools)
    spec, remote = driver.spec.attempt, driver.plugins.remote
    shipped = pickle.dumps(RemoteAttempt(spec, remote, TASK, solo, None))
    assert SECRET.encode() not in shipped  # the other contestant's settings stay here
    assert b"unshipped-model" not in shipped
    arrived = pickle.loads(shipped)
    assert arrived.spec == attempt_spec(settings)
    assert (arrived.spec.run, arrived.spec.limits, arrived.spec.tasks) == (
        settings.run,
        settings.limits,
        settings.tasks,
    )
    rebuilt = arrived.plugins()  # in the worker: made from the sections it shipped
    benches = rebuilt.benches
    assert benches is not tools and benches.project == settings.project
    assert (benches.repository, benches.store.root) == (settings.repository, settings.store_dir)
    assert benches.masked == tools.masked and type(benches.runner) is type(tools.runner)
    assert rebuilt.transcript(agent="no-such-agent", logdir=tmp_path) is None


def test_keys_made_from_a_stage_s_sections_are_those_made_from_the_whole_settings() -> None:
    """The values bugbout gave these records before the stages took their sections, so
    the evidence already in a store is found again."""
    keys = EvidenceKeys(TASK, ORACLE, verdicts_spec(bout(Path("/r"))).evidence, ("tests",))
    assert (keys.base, keys.matrix([ATTEMPT])) == ("b35b86249fe9da7d", "a553823fe29e68ad")
    assert (keys.score(ATTEMPT), keys.audit(ATTEMPT)) == ("405e2dea89041bea", "f01e7d03416f15c1")
    assert keys.confinement == "ffc040eca07ed0c3"


def test_the_mining_key_made_from_its_spec_is_the_one_made_from_the_whole_settings(
    plugins: Plugins, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Computed on the code before mining took its spec (bugbout's version fixed), then
    again when the miner's options gained ``same-behaviour-words`` (what is mined changed,
    so a stored mining must be mined again): a stored mining is found again."""
    monkeypatch.setattr(mining, "__version__", "pinned")
    chosen = bout(Path("/r")).model_copy(
        update={
            "miner": PluginChoice.model_validate({"name": "git-history", "limit": 5}),
            "issue_sources": {
                "commit": {"issue-source": "commit"},
                "gh": None,
                "file": {"issue-source": "file", "path": "issues.json", "order": 2},
            },
            "test_runner": PluginChoice(name="vitest"),
        }
    )
    keys = []
    for settings in (bout(Path("/r")), chosen):
        request = MiningRequest(
            repository=settings.repository,
            project=settings.project,
            github="o/n",
            test_runner=settings.test_runner,
        )
        made_by = mine_plugins(settings, plugins).made_by
        keys.append(mine_spec(settings).key(request, "h" * 40, made_by))
    assert keys == ["959b938fd456a209", "e1edb5e8ed2b7152"]


STAGES = ["mine", "truth", "race", "crossexam", "judge", "score", "audit", "report", "evidence.py"]
"""The stages, mining, the making of the contestants and the report included, and the
evidence the stages after the race share, under ``bugbout/core``."""
ORCHESTRATORS = ["tasks.py", "verdicts.py", "rounds.py"]
"""The orchestrators: ground truth, the stages after the race, the retry rounds."""


def test_only_the_pipeline_names_the_whole_settings_or_the_plugin_manager() -> None:
    """``BoutSettings`` shares its module with the sections a stage does take, so the
    import contracts (modules only) cannot say this: the names are read here."""
    core = Path(bugbout.__file__).parent / "core"
    found = []
    for where in [*STAGES, *ORCHESTRATORS]:
        for module in [core / where] if where.endswith(".py") else (core / where).rglob("*.py"):
            for node in ast.walk(ast.parse(module.read_text())):
                if isinstance(node, ast.ImportFrom):
                    names = {alias.name for alias in node.names}
                    found += [f"{module.name}: {n}" for n in names & {"BoutSettings", "Plugins"}]
    assert found == []
