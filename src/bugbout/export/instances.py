"""Each exportable task as one SWE-bench-style instance: the fix split into its gold
patch (source) and test patch (tests), with the ground truth's test ids as stored."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.errors import ConfigError
from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.core.race.race import race_tasks
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskSet
from bugbout.core.store.store import ORACLES, TASKS, Store

_GITHUB = re.compile(r"github\.com[:/]+([^/\s]+)/([^/\s]+?)(?:\.git)?/?$")
NO_VERSION = "0.0"
"""``version`` when no tag precedes the task's base commit."""


@dataclass(frozen=True)
class SweBenchInstance:
    """One task as SWE-bench names its fields, with the oracle it came from."""

    task: Task
    oracle: Oracle
    fields: dict[str, str]

    @property
    def instance_id(self) -> str:
        return self.fields["instance_id"]


def instances(repository: Path, store: Store, repo: str | None = None) -> list[SweBenchInstance]:
    """Every scored task of ``store`` whose ground truth is ``ok``, read against the git
    ``repository``; ``repo`` (``owner/name``) defaults to ``origin``'s GitHub name."""
    tasks = store.read(TASKS, TaskSet)
    oracles = store.read(ORACLES, OracleSet)
    if tasks is None or oracles is None:
        raise ConfigError(f"{store.root} holds no ground truth yet; run `bugbout tasks` first")
    with Git(repository) as git:
        name = repo or _origin(git) or f"local/{repository.resolve().name}"
        if "/" not in name:
            raise ConfigError(f"--repo {name}: give it as owner/name")
        found = [
            _instance(git, name, task, oracles.root[task.id]) for task in race_tasks(tasks, oracles)
        ]
    if not found:
        raise ConfigError(f"{store.root} holds no scored task with ground truth; nothing to export")
    return found


def _instance(git: Git, repo: str, task: Task, oracle: Oracle) -> SweBenchInstance:
    owner, name = repo.split("/", 1)
    tests = sorted({*(task.changed_test_files or task.test_files), *task.deleted_test_files})
    fields = {
        "instance_id": f"{owner}__{name}-{task.id}",
        "repo": repo,
        "base_commit": task.parent,
        "patch": _diff(git, task, list(task.source_files)),
        "test_patch": _diff(git, task, tests),
        "problem_statement": task.problem_statement or task.title,
        "hints_text": "",
        "created_at": task.date,
        "version": _version(git, task.parent),
        "FAIL_TO_PASS": json.dumps(list(oracle.fail_to_pass)),
        "PASS_TO_PASS": json.dumps(list(oracle.pass_to_pass)),
        "environment_setup_commit": task.parent,
    }
    return SweBenchInstance(task, oracle, fields)


def _diff(git: Git, task: Task, paths: list[str]) -> str:
    if not paths:
        return ""
    try:
        return git.run(
            "diff", "--no-color", "--no-ext-diff", "--binary", "--no-renames",
            task.parent, task.sha, "--", *(f":(literal){path}" for path in paths),
        )  # fmt: skip
    except GitError:
        raise ConfigError(
            f"task {task.id}: its commits {task.parent[:12]}..{task.sha[:12]} are not in "
            f"{git.repository}; export from the repository it was mined from"
        ) from None


def _version(git: Git, commit: str) -> str:
    """The newest tag before ``commit``, without a leading ``v``."""
    try:
        tag = git.run("describe", "--tags", "--abbrev=0", commit).strip()
    except GitError:
        return NO_VERSION
    return tag.removeprefix("v") or NO_VERSION


def _origin(git: Git) -> str | None:
    try:
        url = git.run("remote", "get-url", "origin").strip()
    except GitError:
        return None
    match = _GITHUB.search(url)
    return f"{match[1]}/{match[2]}" if match else None
