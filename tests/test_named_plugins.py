"""A plugin asked for by name imports the modules of its kind that may register it: the
built-ins, and of bugbout's own entry points only the one named after it (a Python
project's mining loads no JavaScript test runner)."""

from __future__ import annotations

import json
import subprocess
import sys

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
