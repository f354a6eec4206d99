"""Per-attempt orchestration overhead: a no-op agent raced under bubblewrap.

An attempt's overhead is everything bugbout does around the agent: the working copy,
the prompt and test script, the sandbox, the patch and the record. It is measured with
an agent that does nothing (``true``) and reported against a baseline measured in the
same run: starting ``true`` under a bare bubblewrap (``bwrap --ro-bind / / true``).

    python benchmarks/bench_race.py [--attempts N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bugbout.core.contestants import Contestant
from bugbout.core.manager import make_plugins
from bugbout.core.race import Race
from bugbout.core.settings import BoutSettings, PluginChoice, ProjectSettings, TasksSettings
from bugbout.core.store import Store
from bugbout.core.tasks import compute_oracles, mine_tasks
from bugbout.testing import RepositoryBuilder

RESULTS = Path(__file__).parent / ".cache" / "results-race.json"


def build_repository(path: Path, modules: int) -> None:
    """A package of ``modules`` modules and one fixed bug."""
    files = {f"src/pkg/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" * 20 for i in range(modules)}
    files |= {
        "src/pkg/__init__.py": "",
        "src/pkg/m0.py": "def f0(x):\n    return x + 1\n",
        "tests/test_m0.py": "def test_ok():\n    pass\n",
    }
    repo = RepositoryBuilder(path)
    repo.commit("Initial", files)
    repo.commit(
        "Fix f0 (#1)",
        {
            "src/pkg/m0.py": "def f0(x):\n    return x\n",
            "tests/test_m0.py": "from pkg.m0 import f0\n\ndef test_ok():\n    pass\n\n"
            "def test_f0():\n    assert f0(1) == 1\n",
        },
    )


def timed(action: object) -> float:
    started = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10)
    parser.add_argument("--modules", type=int, default=300)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.home() / ".cache") as scratch:
        root = Path(scratch)
        os.environ["BUGBOUT_HOME"] = str(root / "home")
        build_repository(root / "repo", options.modules)
        settings = BoutSettings(
            project=ProjectSettings(source="src/pkg", tests="tests"),
            tasks=TasksSettings(issue_sources=("commit",), reruns=1),
            env=PluginChoice(name="interpreter"),
            sandbox=PluginChoice(name="bubblewrap"),
            root=root / "repo",
        )
        plugins = make_plugins(entry_points=False)
        store = Store(root / "repo" / ".bugbout")
        tasks = mine_tasks(settings, plugins, store)
        oracles = compute_oracles(settings, plugins, store, tasks)
        assert tasks.tasks and tasks.tasks[0].scored, "the benchmark's task must be scored"
        race = Race(settings, plugins, store)
        bwrap = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--unshare-net", "true"]
        baseline, attempts = [], []
        for number in range(options.attempts):
            baseline.append(timed(lambda: subprocess.run(bwrap, check=True)))
            agent = plugins.create(
                "agent", "command", {"name": f"noop{number}", "command": ["true"]}
            )
            contestant = Contestant(f"noop{number}", agent)
            attempts.append(timed(lambda c=contestant: race.run(tasks, oracles, [c])))
    result = {
        "benchmark": "race",
        "modules": options.modules,
        "attempts": options.attempts,
        "bwrap_true_median_s": round(statistics.median(baseline), 4),
        "attempt_median_s": round(statistics.median(attempts), 4),
        "ratio": round(statistics.median(attempts) / statistics.median(baseline), 2),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"bare bwrap true:          {result['bwrap_true_median_s'] * 1000:8.1f} ms")
    print(f"one no-op attempt:        {result['attempt_median_s'] * 1000:8.1f} ms")
    print(f"attempt/bwrap ratio: {result['ratio']}x  ({options.modules} modules in the tree)")
    sys.exit(0)


if __name__ == "__main__":
    main()
