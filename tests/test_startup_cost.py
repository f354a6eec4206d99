"""`bugbout tasks` run again with every result kept (its mining, each oracle) imports
only what reading those results needs: nothing that runs tests to find injected bugs,
resolves an era's environment with uv, parses requirements, asks the network or
composes with Hydra. What a user waits for on every re-run is its start-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bugbout.core.contract.manager import BUILTIN_PLUGINS
from bugbout.example import build_example

PROBE = """
import json, sys
from bugbout.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

NOT_NEEDED = (
    "bugbout.core.mine.injection",  # mining that runs the suite (mutants)
    "bugbout.core.plumbing.selection",  # which tests a patch affects
    "bugbout.core.plumbing.environments.era_resolution",  # uv resolving an era
    "bugbout.core.plumbing.environments.uv_resolution",
    "bugbout.core.plumbing.environments.package_index",
    "bugbout.core.plumbing.project.dist_info",
    "packaging.requirements",
    "packaging.markers",
    "urllib.request",
    "bugbout.sandbox.podman",  # the podman sandbox, not chosen
    "bugbout.plugins.environments.podman",
    "hydra",
    "omegaconf",
)


def test_tasks_with_every_result_kept_imports_only_what_reads_them(tmp_path: Path) -> None:
    repo = build_example(tmp_path / "tally")
    first = subprocess.run(
        [sys.executable, "-m", "bugbout", "tasks", "miner.limit=1"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    stored = repo / ".bugbout" / "oracles.json"
    oracles = json.loads(stored.read_text())
    assert len(oracles) == 1 and all(o["status"] == "ok" for o in oracles.values())
    written = stored.stat().st_mtime_ns

    done = subprocess.run(
        [sys.executable, "-c", PROBE, "tasks", "miner.limit=1"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0
    assert "reused mining" in done.stderr
    assert stored.stat().st_mtime_ns == written  # the oracle kept, not computed
    loaded = [
        name
        for name in found["modules"]
        if any(name == kept or name.startswith(f"{kept}.") for kept in NOT_NEEDED)
    ]
    assert loaded == []
    # what it reads is shown as when it was computed
    assert done.stdout.splitlines()[:-1] == first.stdout.splitlines()


ASKED = """
import json, sys
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.types import EnvironmentPlugin
plugins = make_plugins(entry_points=False, kinds=())
made = plugins.get(EnvironmentPlugin, "interpreter").name
by_name = sorted(m for m in sys.modules if m.startswith("bugbout.plugins.environments."))
every = sorted(plugins.of_kind(EnvironmentPlugin))
print(json.dumps({"made": made, "by_name": by_name, "every": every}))
"""


def test_a_builtin_is_imported_when_its_plugin_is_asked_for_by_name() -> None:
    """Not the other modules of its kind: they are imported when the kind is listed."""
    done = subprocess.run([sys.executable, "-c", ASKED], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    assert found["made"] == "interpreter"
    assert found["by_name"] == ["bugbout.plugins.environments.interpreter"]
    shipped = [m for m in BUILTIN_PLUGINS if m.startswith("bugbout.plugins.environments.")]
    assert len(shipped) > 1
    assert len(found["every"]) == len(shipped)
