"""The tasks as Harbor task directories (https://harborframework.com/docs/tasks): the
instruction, a Dockerfile with the repository at the task's base commit, a verifier that
applies the test patch and runs the ground truth's tests, and the gold patch as the
reference solution."""

from __future__ import annotations

import json
import re
import shlex
import tarfile
import tempfile
from pathlib import Path

from bugbout.core.contract.errors import ConfigError
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Oracle
from bugbout.export.instances import SweBenchInstance

WORKDIR = "/testbed"
"""Where the repository is in the task's container."""
SCHEMA_VERSION = "1.4"
"""The version of Harbor's ``task.toml`` schema written."""
AGENT_TIMEOUT = 1800.0
BUILD_TIMEOUT = 900.0
DEFAULT_PYTHON = "3.12"
"""The image's Python when the ground truth does not say which one ran."""

INSTRUCTION = """\
A user reported this issue in the Python project at `{workdir}`:

<issue>
{issue}
</issue>

Fix the issue by changing the project's source code. Keep the change focused on the issue.
"""

TEST_SH = """\
#!/bin/bash
# The ground truth's tests: the fail-to-pass tests must pass, and the pass-to-pass ones
# must still pass, with the fix's test files in place. Writes Harbor's reward.
here="$(cd "$(dirname "$0")" && pwd)"
rewards="${{REWARD_DIR:-/logs/verifier}}"
mkdir -p "$rewards"
echo 0 > "$rewards/reward.txt"
cd "${{TESTBED:-{workdir}}}" || exit 1
if [ -s "$here/test.patch" ]; then git apply --whitespace=nowarn "$here/test.patch" || exit 1; fi
python "$here/run_tests.py" --ids "$here/tests.json" && echo 1 > "$rewards/reward.txt"
"""

RUN_TESTS = '''\
"""Runs the test ids in the JSON list --ids names (ids may hold spaces); fails when one
of them does not pass."""

import json
import subprocess
import sys


def main() -> int:
    ids = json.load(open(sys.argv[sys.argv.index("--ids") + 1]))
    return subprocess.call([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *ids])


if __name__ == "__main__":
    sys.exit(main())
'''

SOLVE_SH = """\
#!/bin/bash
# The maintainers' fix, source files only.
here="$(cd "$(dirname "$0")" && pwd)"
cd "${{TESTBED:-{workdir}}}" && git apply --whitespace=nowarn "$here/fix.patch"
"""


def write_harbor(found: list[SweBenchInstance], repository: Path, directory: Path) -> list[Path]:
    """A Harbor task directory per instance under ``directory``; the directories."""
    written = []
    for one in found:
        task = directory / one.instance_id
        if task.exists():
            raise ConfigError(f"{task} already exists; remove it or export to another directory")
        for part in ("environment", "tests", "solution"):
            (task / part).mkdir(parents=True)
        _snapshot(repository, one.task.parent, task / "environment" / "repository.tar")
        (task / "environment" / "Dockerfile").write_text(dockerfile(one.oracle))
        (task / "instruction.md").write_text(
            INSTRUCTION.format(workdir=WORKDIR, issue=one.fields["problem_statement"].strip())
        )
        (task / "task.toml").write_text(task_toml(one))
        (task / "tests" / "test.patch").write_text(one.fields["test_patch"])
        ids = json.loads(one.fields["FAIL_TO_PASS"]) + json.loads(one.fields["PASS_TO_PASS"])
        (task / "tests" / "tests.json").write_text(json.dumps(ids, indent=1) + "\n")
        (task / "tests" / "run_tests.py").write_text(RUN_TESTS)
        _script(task / "tests" / "test.sh", TEST_SH.format(workdir=WORKDIR))
        (task / "solution" / "fix.patch").write_text(one.fields["patch"])
        _script(task / "solution" / "solve.sh", SOLVE_SH.format(workdir=WORKDIR))
        written.append(task)
    return written


def task_toml(one: SweBenchInstance) -> str:
    """``task.toml``: Harbor's schema version, the instance's metadata, the timeouts, and
    a verifier apart from the agent's sandbox, which gets the agent's checkout only."""
    metadata = {
        "source": "bugbout",
        "instance_id": one.instance_id,
        "repo": one.fields["repo"],
        "base_commit": one.fields["base_commit"],
        "fix_commit": one.task.sha,
        "created_at": one.fields["created_at"],
        "category": "debugging",
        "tags": ["python", "bug-fix"],
    }
    lines = [f"schema_version = {_toml(SCHEMA_VERSION)}", f"artifacts = {_toml([WORKDIR])}"]
    lines += ["", "[metadata]"]
    lines += [f"{key} = {_toml(value)}" for key, value in metadata.items()]
    lines += ["", "[verifier]", f"timeout_sec = {AGENT_TIMEOUT / 2}"]
    lines += ['environment_mode = "separate"', "", "[agent]"]
    lines += [f"timeout_sec = {AGENT_TIMEOUT}", "", "[environment]"]
    lines += [f"build_timeout_sec = {BUILD_TIMEOUT}", ""]
    return "\n".join(lines)


def dockerfile(oracle: Oracle) -> str:
    """The image: the Python the ground truth ran on, git, the versions it resolved
    (pytest, its plugins, the project's dependencies) and the repository unpacked."""
    pins = [f"{name}=={version}" for name, version in sorted(oracle.versions.items())]
    pins = [pin for pin in pins if not pin.startswith("python==")] or ["pytest"]
    return "\n".join(
        [
            f"FROM python:{python_of(oracle)}-slim",
            "RUN apt-get update && apt-get install -y --no-install-recommends git "
            "&& rm -rf /var/lib/apt/lists/*",
            f"RUN pip install --no-cache-dir {' '.join(shlex.quote(pin) for pin in pins)}",
            f"WORKDIR {WORKDIR}",
            f"ADD repository.tar {WORKDIR}/",
            "RUN if [ -f pyproject.toml ] || [ -f setup.py ]; then "
            "pip install --no-cache-dir --no-deps -e .; fi",
            "",
        ]
    )


def python_of(oracle: Oracle) -> str:
    """``3.11``: the Python the ground truth ran on (its resolved versions, else its
    environment's description), else :data:`DEFAULT_PYTHON`."""
    for text in (oracle.versions.get("python", ""), oracle.environment):
        found = re.search(r"(?:^|Python )(3\.[0-9]+)", text)
        if found:
            return found[1]
    return DEFAULT_PYTHON


def _snapshot(repository: Path, commit: str, path: Path) -> None:
    """The tree of ``commit`` as a tar, without history: what the agent starts from. The
    tree as :meth:`Git.export` writes it, not ``git archive``'s, whose ``export-ignore``
    and ``export-subst`` attributes (some projects mark ``tests/``) would change it."""
    with tempfile.TemporaryDirectory(prefix="bugbout-harbor-") as scratch, Git(repository) as git:
        git.export(commit, Path(scratch))
        with tarfile.open(path, "w") as archive:
            for entry in sorted(Path(scratch).iterdir()):
                archive.add(entry, arcname=entry.name)


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _toml(value: object) -> str:
    """A TOML value: strings and lists of strings, as JSON writes them (valid TOML)."""
    return json.dumps(value)
