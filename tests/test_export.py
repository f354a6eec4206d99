"""`bugbout export`: the one-bug repository's task, with its real ground truth, as a
SWE-bench dataset and as a Harbor task, each round-tripped: the gold patch on the base
commit makes the fail-to-pass tests pass, and they fail without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from bugbout.core.store.records import Oracle, Task, TaskIssue
from bugbout.export.harbor import dockerfile, write_harbor
from bugbout.export.instances import SweBenchInstance
from bugbout.export.swebench import FIELDS
from cli_runs import bugbout
from one_bug import BUGGY, one_bug_repository

SWE_BENCH_FIELDS = {
    "repo", "instance_id", "base_commit", "patch", "test_patch", "problem_statement",
    "hints_text", "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS",
    "environment_setup_commit",
}  # fmt: skip
"""The fields of SWE-bench's ``SWEbenchInstance`` (swebench/types.py), all text."""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one-bug repository with its task and ground truth computed by `bugbout tasks`."""
    repo = one_bug_repository(tmp_path_factory.mktemp("export") / "repo").path
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout("tasks", "environment=interpreter", cwd=repo)
    assert result.returncode == 0, result.stderr
    return repo


def pytest_run(tree: Path, ids: list[str]) -> int:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids],
        cwd=tree, env={**os.environ, "PYTHONPATH": "src"}, capture_output=True, check=False,
    ).returncode  # fmt: skip


def git(tree: Path, *args: str, stdin: str | None = None) -> None:
    subprocess.run(["git", *args], cwd=tree, input=stdin, text=True, check=True)


@pytest.mark.slow
def test_swe_bench_export_round_trips_through_a_clone(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "tasks.jsonl"
    result = bugbout(
        "export", "--format", "swe-bench", str(target), "--repo", "me/mid", cwd=project
    )
    assert result.returncode == 0, result.stderr
    (line,) = target.read_text().splitlines()
    instance = json.loads(line)
    assert set(instance) == SWE_BENCH_FIELDS == set(FIELDS)
    assert all(isinstance(value, str) for value in instance.values())
    oracles = json.loads((project / ".bugbout" / "oracles.json").read_text())
    (oracle,) = oracles.values()
    assert (
        json.loads(instance["FAIL_TO_PASS"])
        == oracle["fail_to_pass"]
        == ["tests/test_core.py::test_even"]
    )
    assert json.loads(instance["PASS_TO_PASS"]) == oracle["pass_to_pass"]
    assert (
        instance["repo"] == "me/mid" and instance["instance_id"] == f"me__mid-{oracle['task_id']}"
    )
    assert instance["environment_setup_commit"] == instance["base_commit"]
    assert "src/mid/core.py" in instance["patch"] and "tests/" not in instance["patch"]
    assert "tests/test_core.py" in instance["test_patch"] and "src/" not in instance["test_patch"]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    git(clone, "checkout", "-q", instance["base_commit"])
    assert (clone / "src/mid/core.py").read_text() == BUGGY
    git(clone, "apply", "-", stdin=instance["test_patch"])
    fail_to_pass = json.loads(instance["FAIL_TO_PASS"])
    pass_to_pass = json.loads(instance["PASS_TO_PASS"])
    assert pytest_run(clone, fail_to_pass) != 0
    assert pytest_run(clone, pass_to_pass) == 0
    git(clone, "apply", "-", stdin=instance["patch"])
    assert pytest_run(clone, fail_to_pass + pass_to_pass) == 0


LOAD_WITH_SWEBENCH = """
import json, sys, typing
from swebench.harness.utils import load_swebench_dataset
from swebench.types import SWEbenchInstance
(loaded,) = load_swebench_dataset(sys.argv[1], "test")
wrong = [name for name, kind in typing.get_type_hints(SWEbenchInstance).items()
         if not isinstance(loaded[name], kind)]
print(json.dumps({"wrong": wrong, "instance_id": loaded["instance_id"]}))
"""
"""Loads an export with SWE-bench's own loader, in the harness's own environment, and
names the fields whose type is not the one its ``SWEbenchInstance`` declares."""


@pytest.mark.slow
@pytest.mark.requires("swebench")
def test_swe_bench_export_loads_with_swebench(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "tasks.jsonl"
    assert bugbout("export", "--format", "swe-bench", str(target), cwd=project).returncode == 0
    loaded = subprocess.run(
        [os.environ["BUGBOUT_SWEBENCH_PYTHON"], "-c", LOAD_WITH_SWEBENCH, str(target)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    result = json.loads(loaded.stdout.splitlines()[-1])
    assert result["wrong"] == []
    assert result["instance_id"] == json.loads(target.read_text().splitlines()[0])["instance_id"]


LOAD_WITH_HARBOR = """
import json, sys
from pathlib import Path
from harbor.lint.models import DEFAULT_RULES
from harbor.lint.task import lint_task
from harbor.models.task.task import Task
loaded = []
for path in sorted(Path(sys.argv[1]).iterdir()):
    task = Task(path)
    findings = [f"{f.rule}: {f.message}" for f in lint_task(path, selected_rules=DEFAULT_RULES)]
    config = task.config.model_dump(mode="json", exclude_unset=True)
    loaded.append({"name": task.name, "instruction": task.instruction,
                   "findings": findings, "config": config})
print(json.dumps(loaded))
"""
"""Loads every exported task with Harbor's own ``Task`` (its ``TaskConfig`` included) in
Harbor's own environment, and lints it with Harbor's default rules (unknown or invalid
fields, missing files, unpinned dependencies, a verifier sharing the agent's sandbox)."""


@pytest.mark.slow
@pytest.mark.requires("harbor")
def test_harbor_export_loads_and_lints_clean_with_harbor(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "harbor"
    assert bugbout("export", "--format", "harbor", str(target), cwd=project).returncode == 0
    (task,) = target.iterdir()
    # The ground truth ran in the interpreter, which does not say its versions: pin them
    # as a uv environment reports them, so that the linter sees the pins.
    oracle = Oracle(task_id="t", status="ok", versions={"python": "3.11.7", "pytest": "8.3.2"})
    (task / "environment" / "Dockerfile").write_text(dockerfile(oracle))
    loaded = subprocess.run(
        [os.environ["BUGBOUT_HARBOR_PYTHON"], "-c", LOAD_WITH_HARBOR, str(target)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    (result,) = json.loads(loaded.stdout.splitlines()[-1])
    assert result["findings"] == []
    assert result["name"] == task.name
    assert result["instruction"] == (task / "instruction.md").read_text()
    written = tomllib.loads((task / "task.toml").read_text())
    assert result["config"] == written  # Harbor keeps every field written, as written


@pytest.mark.slow
def test_harbor_task_verifies_the_gold_patch_and_rejects_the_unfixed_code(
    project: Path, tmp_path: Path
) -> None:
    target = tmp_path / "harbor"
    assert bugbout("export", "--format", "harbor", str(target), cwd=project).returncode == 0
    (task,) = target.iterdir()
    config = tomllib.loads((task / "task.toml").read_text())
    assert config["schema_version"] == "1.4"
    assert config["verifier"]["environment_mode"] == "separate"
    assert config["artifacts"] == ["/testbed"]
    assert config["metadata"]["instance_id"] == task.name
    assert config["verifier"]["timeout_sec"] > 0 and config["agent"]["timeout_sec"] > 0
    assert config["environment"]["build_timeout_sec"] > 0
    assert (
        "middle" in (task / "instruction.md").read_text()
        or "even" in (task / "instruction.md").read_text()
    )
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert dockerfile.startswith(
        f"FROM python:{sys.version_info.major}.{sys.version_info.minor}-slim"
    )
    assert "ADD repository.tar /testbed/" in dockerfile
    rewards = {}
    for solved in (False, True):
        testbed = tmp_path / f"testbed-{solved}"
        with tarfile.open(task / "environment" / "repository.tar") as archive:
            archive.extractall(testbed, filter="data")
        assert (testbed / "src/mid/core.py").read_text() == BUGGY
        env = {**os.environ, "TESTBED": str(testbed), "PYTHONPATH": "src"}
        env["REWARD_DIR"] = str(tmp_path / f"rewards-{solved}")
        if solved:
            subprocess.run([task / "solution" / "solve.sh"], env=env, check=True)
        subprocess.run([task / "tests" / "test.sh"], env=env, check=False, capture_output=True)
        rewards[solved] = (Path(env["REWARD_DIR"]) / "reward.txt").read_text().strip()
    assert rewards == {False: "0", True: "1"}


def test_export_without_ground_truth_or_with_a_bad_format_is_one_line(tmp_path: Path) -> None:
    repo = one_bug_repository(tmp_path / "repo").path
    (repo / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject: {source: src/mid}\n")
    for args in (["--format", "swe-bench", "out.jsonl"], ["--format", "csv", "out"]):
        result = bugbout("export", *args, cwd=repo)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_harbor_repository_tar_holds_the_whole_tree_despite_export_attributes(
    tmp_path: Path,
) -> None:
    """A project's ``export-ignore``/``export-subst`` (for its sdists) must not change the
    tree the Harbor task starts from: its tests are what the verifier runs."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    (repo / "version.txt").write_text("$Format:%H$\n")
    (repo / ".gitattributes").write_text("tests export-ignore\nversion.txt export-subst\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    task = Task(
        id=sha[:12], sha=sha, parent=sha, date="2024-01-01", title="t",
        issue=TaskIssue(number=1), source_files=[], test_files=["tests/test_x.py"],
    )  # fmt: skip
    oracle = Oracle(task_id=task.id, status="ok", fail_to_pass=["tests/test_x.py::test_x"])
    fields = {key: "" for key in FIELDS} | {"instance_id": "me__x-1", "repo": "me/x"}
    fields |= {"FAIL_TO_PASS": '["tests/test_x.py::test_x"]', "PASS_TO_PASS": "[]"}
    (written,) = write_harbor([SweBenchInstance(task, oracle, fields)], repo, tmp_path / "harbor")
    with tarfile.open(written / "environment" / "repository.tar") as archive:
        archive.extractall(tmp_path / "testbed", filter="data")
    assert (tmp_path / "testbed" / "tests" / "test_x.py").is_file()
    assert (tmp_path / "testbed" / "version.txt").read_text() == "$Format:%H$\n"
