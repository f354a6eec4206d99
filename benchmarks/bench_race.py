"""Per-attempt orchestration overhead: a no-op agent raced under bubblewrap.

An attempt's overhead is everything bugbout does around the agent: the working copy,
the prompt and test script, the sandbox, the patch and the record. It is measured with
an agent that does nothing (``true``), each attempt right after its baseline, starting
``true`` under a bare bubblewrap (``bwrap --ro-bind / / true``); reported as the paired
ratio (min / median / max) and as the overhead, the attempt's time less the baseline's
(target: at most 40 ms whatever the tree's size). It writes ``.bench/race.json`` and
``.bench/race.md``.

    python benchmarks/bench_race.py [--attempts N] [--modules M] [--checkouts METHOD]
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
from pathlib import Path

from timing import measure, paired_ratios

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    RunSettings,
    TasksSettings,
)
from bugbout.core.plumbing.git import Git
from bugbout.core.plumbing.tools import Tools
from bugbout.core.race.contestants import Contestant
from bugbout.core.race.race import Race
from bugbout.core.store.store import Store
from bugbout.core.tasks import compute_oracles, mine_tasks
from bugbout.testing import RepositoryBuilder

OUTPUT = Path(__file__).resolve().parent.parent / ".bench"
BASELINE = "bwrap true"
ATTEMPT = "no-op attempt"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10)
    parser.add_argument("--modules", type=int, default=3000)
    parser.add_argument("--checkouts", default="auto", help="run.checkouts (default auto)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.home() / ".cache") as scratch:
        root = Path(scratch)
        os.environ["BUGBOUT_HOME"] = str(root / "home")
        build_repository(root / "repo", options.modules)
        settings = BoutSettings(
            project=ProjectSettings(source="src/pkg", tests="tests"),
            issue_sources={"commit": {"issue-source": "commit"}},
            tasks=TasksSettings(reruns=1),
            environment=PluginChoice(name="interpreter"),
            sandbox=PluginChoice(name="bubblewrap"),
            run=RunSettings(checkouts=options.checkouts),
            root=root / "repo",
        )
        plugins = make_plugins(entry_points=False)
        store = Store(root / "repo" / ".bugbout")
        tasks = mine_tasks(settings, plugins, store)
        oracles = compute_oracles(settings, plugins, store, tasks)
        assert tasks.tasks and tasks.tasks[0].scored, "the benchmark's task must be scored"
        tools = Tools.build(settings, plugins, store)
        race = Race(tools)
        with Git(settings.repository) as git:
            method = tools.checkouts(git).method
        bwrap = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--unshare-net", "true"]
        rounds: list[dict[str, float]] = []
        cpu: list[dict[str, float]] = []
        for number in range(options.attempts + 1):  # the first warms the cached tree up
            agent = plugins.create(
                "agent", "command", {"name": f"noop{number}", "command": ["true"]}
            )
            contestant = Contestant(f"noop{number}", agent)
            base, _ = measure(lambda: subprocess.run(bwrap, check=True))
            attempt, _ = measure(lambda c=contestant: race.run(tasks, oracles, [c]))
            if number:
                rounds.append({BASELINE: base.wall, ATTEMPT: attempt.wall})
                cpu.append(
                    {
                        BASELINE: base.cpu_self + base.cpu_children,
                        ATTEMPT: attempt.cpu_self + attempt.cpu_children,
                    }
                )
    ratio = paired_ratios(rounds, BASELINE)[ATTEMPT]
    overheads = sorted(one[ATTEMPT] - one[BASELINE] for one in rounds)
    cpu_overheads = sorted(one[ATTEMPT] - one[BASELINE] for one in cpu)
    result = {
        "benchmark": "race",
        "modules": options.modules,
        "attempts": options.attempts,
        "checkouts": method,
        "bwrap_true_median_s": round(statistics.median(r[BASELINE] for r in rounds), 4),
        "attempt_median_s": round(statistics.median(r[ATTEMPT] for r in rounds), 4),
        "overhead_s": {
            "min": round(overheads[0], 4),
            "median": round(statistics.median(overheads), 4),
            "max": round(overheads[-1], 4),
        },
        "cpu_overhead_s": {
            "min": round(cpu_overheads[0], 4),
            "median": round(statistics.median(cpu_overheads), 4),
            "max": round(cpu_overheads[-1], 4),
        },
        "ratio": ratio,
        "rounds": rounds,
        "cpu_rounds": cpu,
    }
    table = (
        f"No-op attempts under bubblewrap, {options.modules} modules in the tree, "
        f"working copies by {method}, {options.attempts} attempts.\n\n"
        "| measure | min | median | max |\n|---|---|---|---|\n"
        f"| attempt / `bwrap true` | {ratio['min']:.2f} | {ratio['median']:.2f} | "
        f"{ratio['max']:.2f} |\n"
        "| overhead (attempt less `bwrap true`) | "
        + " | ".join(f"{result['overhead_s'][k] * 1000:.0f} ms" for k in ("min", "median", "max"))
        + " |\n"
        "| CPU time overhead (user+sys, bugbout and its children) | "
        + " | ".join(
            f"{result['cpu_overhead_s'][k] * 1000:.0f} ms"  # type: ignore[index]
            for k in ("min", "median", "max")
        )
        + " |\n"
    )
    print(table)
    options.output.mkdir(parents=True, exist_ok=True)
    (options.output / "race.json").write_text(json.dumps(result, indent=2) + "\n")
    (options.output / "race.md").write_text(table)
    sys.exit(0)


if __name__ == "__main__":
    main()
