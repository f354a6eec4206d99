"""A whole bout on a small JavaScript package for each runner (Vitest, Jest, Mocha,
``node --test``), each runner the real npm package installed by the real npm client (its
installation kept between sessions): the fix's ground truth, a race of scripted
contestants, cross-examination by a scripted examiner's tests, the judge, the scores, the
audit and the reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import dated_commit
from test_js_runs import JEST, MOCHA, STORE, VITEST

pytestmark = [pytest.mark.slow, pytest.mark.requires("js-runners")]

BUGGY = "function half(x) {\n  return Math.floor(x / 2);\n}\n"
FIXED = BUGGY.replace("Math.floor", "Math.ceil")
INEFFECTIVE = BUGGY.replace("x / 2", "x / 2.0")
ESM = "\nexport { half };\n"
CJS = "\nmodule.exports = { half };\n"
RUNNERS = {
    "vitest": ({"vitest": VITEST}, "import { describe, it } from 'vitest';", True),
    "jest": ({"jest": JEST}, "", False),
    "mocha": ({"mocha": MOCHA}, "", False),
    "node-test": ({}, "import { describe, it } from 'node:test';", True),
}
"""Each runner: the package's development dependencies, how a test file gets ``describe``
and ``it``, and whether the package is an ES module."""


def written_tests(runner: str, name: str, *cases: tuple[str, str]) -> str:
    """A test file in ``runner``'s style: ``describe(name)`` holding ``cases`` (title,
    assertion)."""
    _, imports, module = RUNNERS[runner]
    uses = (
        "import assert from 'node:assert';\nimport { half } from '../src/half.js';"
        if module
        else "const assert = require('node:assert');\nconst { half } = require('../src/half.js');"
    )
    its = "".join(f"  it('{title}', () => {{\n    {check}\n  }});\n" for title, check in cases)
    return f"{imports}\n{uses}\n\ndescribe('{name}', () => {{\n{its}}});\n".lstrip()


def source(runner: str, body: str) -> str:
    return body + (ESM if RUNNERS[runner][2] else CJS)


EVEN = ("halves even numbers", "assert.equal(half(4), 2);")
ODD = ("rounds odd numbers up", "assert.equal(half(5), 3);")
SEVEN = ("halves 7", "assert.equal(half(7), 4);")
THREE = ("of 3", "assert.equal(half(3), 2);")


def agent(files: dict[str, str]) -> str:
    """A scripted agent's Python source: it writes ``files`` into its checkout."""
    return "from pathlib import Path\nprint(Path('/proc/self/cgroup').read_text())\n" + "".join(
        f"Path({path!r}).write_text({text!r})\n" for path, text in files.items()
    )


def halves_repository(root: Path, runner: str) -> Path:
    """A package whose ``half`` rounds odd numbers down, fixed with a test (#1), its bout's
    settings choosing ``runner`` and the ``npm`` environment, raced by ``good`` (the fix
    and a test), ``ineffective`` (a change that fixes nothing) and ``empty``, examined by
    ``reproducer``."""
    dev, _, module = RUNNERS[runner]
    manifest = {"name": "halves", "private": True, "devDependencies": dev}
    repo = RepositoryBuilder(root / "repo")
    dated_commit(
        repo,
        "Initial",
        {
            "package.json": json.dumps({**manifest, **({"type": "module"} if module else {})}),
            "src/half.js": source(runner, BUGGY),
            "test/half.test.js": written_tests(runner, "half", EVEN),
        },
        "2026-11-02T10:00:00+00:00",
    )
    dated_commit(
        repo,
        "Round odd halves up (#1)\n\nhalf(5) is 2; it should be 3.",
        {
            "src/half.js": source(runner, FIXED),
            "test/half.test.js": written_tests(runner, "half", EVEN, ODD),
        },
        "2026-11-03T10:00:00+00:00",
    )
    scripts = root / "agents"
    scripts.mkdir()
    written = {
        "good": {
            "src/half.js": source(runner, FIXED),
            "test/odd.test.js": written_tests(runner, "odd", SEVEN),
        },
        "ineffective": {"src/half.js": source(runner, INEFFECTIVE)},
        "empty": {},
        "reproducer": {
            "test/repro.test.js": written_tests(runner, "repro", THREE),
        },
    }

    def command(name: str) -> dict[str, object]:
        script = scripts / f"{name}.py"
        script.write_text(agent(written[name]))
        return {"agent": "command", "command": [sys.executable, str(script)]}

    config = {
        "defaults": [
            "base",
            {"override environment": "npm"},
            {"override test-runner": runner},
            "_self_",
        ],
        "environment": {"store": str(STORE)},
        "project": {"source": "src", "tests": "test"},
        "miner": {"source-suffixes": [".js"]},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 60, "quotas": {"command": 3}},
        "contestants": {name: command(name) for name in ("good", "ineffective", "empty")},
        "examiners": {"reproducer": {**command("reproducer"), "assignment": "reproduce"}},
    }
    (repo.path / "bugbout.yaml").write_text(json.dumps(config))
    return repo.path


def stored(repo: Path, name: str) -> dict:
    return json.loads((repo / ".bugbout" / name).read_text())


PODMAN_STORAGE = f"/var/tmp/bugbout-podman-js-tests{os.environ.get('PYTEST_XDIST_WORKER', '')}"
"""The podman sandbox's storage for these tests (its containers mirror this machine)."""


@pytest.mark.parametrize(
    ("runner", "sandbox"),
    [
        *(pytest.param(runner, [], id=runner) for runner in RUNNERS),
        pytest.param(
            "node-test",
            ["sandbox=podman", f"+sandbox.storage={PODMAN_STORAGE}"],
            marks=pytest.mark.requires("podman"),
            id="node-test-podman",
        ),
    ],
)
def test_a_bout_on_a_javascript_package(runner: str, sandbox: list[str], tmp_path: Path) -> None:
    """The same bout in either sandbox: bubblewrap (``auto``'s choice here) or podman."""
    repo = halves_repository(tmp_path, runner)

    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", *sandbox],
        cwd=repo, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    [oracle] = stored(repo, "oracles.json").values()
    assert oracle["status"] == "ok", oracle["reason"]
    assert oracle["fail_to_pass"] == ["test/half.test.js::half > rounds odd numbers up"]
    assert oracle["pass_to_pass"] == ["test/half.test.js::half > halves even numbers"]
    [matrix_file] = (repo / ".bugbout" / "matrices").glob("*.json")
    matrix = json.loads(matrix_file.read_text())
    assert set(matrix["patches"]) == {"(unfixed)", "good", "ineffective"}
    assert set(matrix["authors"]) == {"(suite)", "good", "reproducer"}
    [scores] = stored(repo, "resolutions.json").values()
    assert {name: score["score"] for name, score in scores["patches"].items()} == {
        "good": "resolved",
        "ineffective": "wrong-fix",
        "empty": "no-fix",
    }
    assert scores["picks"] == {"majority": "resolved"}
    [verdicts] = stored(repo, "verdicts.json").values()
    assert verdicts["majority"]["pick"] == "good", verdicts["majority"]["reason"]
    [audits] = stored(repo, "audits.json").values()
    assert audits["good"]["verdict"] == "resolved"
    report = stored(repo, "report.json")
    assert {row["contestant"]: row["resolved"] for row in report["agents"]}["good"] == 1
    assert "## Agents" in (repo / ".bugbout" / "report.md").read_text()
    [good] = (repo / ".bugbout" / "attempts").glob("*/good/*.json")
    log = Path(json.loads(good.read_text())["logdir"]) / "stdout.log"
    assert ("libpod" in log.read_text()) == bool(sandbox)  # it ran in a podman container
