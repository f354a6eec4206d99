"""A plugin asked for by name imports the modules of its kind that may register it: the
built-ins, and of bugbout's own entry points only the one named after it (a Python
project's mining loads no JavaScript test runner); ``bugbout tasks`` imports the test
runner only to run tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.errors import ConfigError
plugins = make_plugins(kinds=[])
try:
    found = plugins.get("test-runner", sys.argv[1]).name
except ConfigError as exc:
    found = str(exc)
runners = sorted(m.rsplit(".", 1)[1] for m in sys.modules
                 if m.startswith("bugbout.plugins.test_runners.") and m.count(".") >= 4)
print(json.dumps([found, runners]))
"""


def _ask(name: str) -> tuple[str, list[str]]:
    """The test runner ``name`` as a fresh process finds it, and the runner modules it
    imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, name], capture_output=True, text=True, check=True
    )
    found, runners = json.loads(done.stdout.strip().splitlines()[-1])
    return found, runners


def test_asking_for_pytest_imports_no_javascript_runner() -> None:
    found, runners = _ask("pytest")
    assert found == "pytest"
    assert not [runner for runner in runners if runner != "pytest"]


def test_asking_for_a_javascript_runner_imports_it_and_not_the_others() -> None:
    found, runners = _ask("jest")
    assert found == "jest"
    assert "jest" in runners
    assert not {"mocha", "vitest", "node_test", "auto"} & set(runners)


def test_an_unknown_runner_is_an_error_naming_every_runner() -> None:
    found, _ = _ask("nose")
    assert found.startswith("no test-runner plugin named 'nose'; choose one of:")
    for name in ("javascript", "jest", "mocha", "node-test", "pytest", "vitest"):
        assert name in found


RUNNERS = "bugbout.plugins.test_runners."
COMMAND = """
import json, sys
from bugbout.cli import main
code = main(["-q", "tasks"])
print(json.dumps([code, sorted(m for m in sys.modules if m.startswith("bugbout.plugins."))]))
"""


def test_ground_truth_imports_a_test_runner_only_by_its_name(tmp_path: Path) -> None:
    """``bugbout tasks`` on a history with no fix: mining asks for ``pytest`` (what a test
    file is) and nothing else of its kind; run again, its mining reused and no oracle to
    compute, it asks for no test runner."""
    (tmp_path / "src" / "calc").mkdir(parents=True)
    (tmp_path / "src" / "calc" / "__init__.py").write_text("ONE = 1\n")
    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject: {source: src/calc}\nissue-sources: {github: null}\n"
    )
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    runners = []
    for _ in range(2):
        command = [sys.executable, "-c", COMMAND]
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=True)
        code, loaded = json.loads(done.stdout.strip().splitlines()[-1])
        assert code == 0
        runners.append([name for name in loaded if name.startswith(RUNNERS)])
    assert runners == [["bugbout.plugins.test_runners.pytest"], []]
