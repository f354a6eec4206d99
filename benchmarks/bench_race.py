"""Per-attempt orchestration overhead: a no-op agent raced under bubblewrap.

An attempt's overhead is everything bugbout does around the agent: the working copy,
the prompt and test script, the sandbox, the patch and the record. It is measured with
an agent that does nothing (``true``), each attempt right after its baseline, starting
``true`` under a bare bubblewrap (``bwrap --ro-bind / / --unshare-net --unshare-pid true``,
in a session of its own as the attempt's processes are); reported as the paired
ratio (min / median / max) and as the overhead, the attempt's time less the baseline's
(target: at most 40 ms whatever the tree's size). Every round also runs a no-op attempt
under guard.py, the guard bugbout falls back to without a C compiler, in rotated order
with the attempt under the compiled guard: their paired ratio says what compiling it
saves. It writes ``.bench/race.json`` and ``.bench/race.md``.

    python benchmarks/bench_race.py [--attempts N] [--modules M] [--checkouts METHOD]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import measure, paired_ratios, rotations, spread

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    RunSettings,
    TasksSettings,
)
from bugbout.core.pipeline import compute_oracles, mine_tasks, race
from bugbout.core.plumbing.tools import Tools
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.race.contestants import Contestant
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder

OUTPUT = Path(__file__).resolve().parent.parent / ".bench"
BASELINE = "bwrap true"
ATTEMPT = "no-op attempt"
PYTHON_GUARD = "no-op attempt, guard.py"
UNSHARE = ("--unshare-net", "--unshare-pid")
"""The baseline's namespaces, as an attempt's sandbox has them; it starts in a session of
its own, as the attempt's processes do (the kernel's autogroups would favour it else)."""


SPREAD = ("min", "median", "max")


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
        assert tools.guard is not None, "the guard does not compile here (cc, or CC)"
        python_tools = dataclasses.replace(tools)
        vars(python_tools)["guard"] = None  # its cached guard: guard.py
        races = {
            ATTEMPT: race(settings, plugins, tools),
            PYTHON_GUARD: race(settings, plugins, python_tools),
        }
        with Git(settings.repository) as git:
            method = tools.checkouts(git).method
        bwrap = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", *UNSHARE, "true"]
        rounds: list[dict[str, float]] = []
        cpu: list[dict[str, float | None]] = []
        orders = rotations(list(races), options.attempts + 1)
        for number, order in enumerate(orders):  # the first warms the cached tree up
            base, _ = measure(lambda: subprocess.run(bwrap, check=True, start_new_session=True))
            walls, cpus = {BASELINE: base.wall}, {BASELINE: base.cpu}
            for name in order:
                label = f"noop{number}{'py' if name == PYTHON_GUARD else ''}"
                agent = plugins.create("agent", "command", {"name": label, "command": ["true"]})
                contestant = Contestant(label, agent)
                chosen = races[name]
                attempt, _ = measure(lambda r=chosen, c=contestant: r.run(tasks, oracles, [c]))
                walls[name] = attempt.wall
                cpus[name] = attempt.cpu
            if number:
                rounds.append(walls)
                cpu.append(cpus)
    report(options, method, rounds, cpu)


def report(
    options: argparse.Namespace,
    method: str,
    rounds: list[dict[str, float]],
    cpu: list[dict[str, float | None]],
) -> None:
    """Print the table, write it and the JSON result under ``options.output``, exit 0."""
    ratio = paired_ratios(rounds, BASELINE)[ATTEMPT]
    measured = [
        {name: value for name, value in one.items() if value is not None}
        for one in cpu
        if None not in one.values()
    ] or [dict.fromkeys(rounds[0], float("nan"))]  # no cgroup v2 to read CPU from
    saved = paired_ratios(rounds, PYTHON_GUARD)[ATTEMPT]
    result = {
        "benchmark": "race",
        "modules": options.modules,
        "attempts": options.attempts,
        "checkouts": method,
        "bwrap_true_median_s": round(statistics.median(r[BASELINE] for r in rounds), 4),
        "attempt_median_s": round(statistics.median(r[ATTEMPT] for r in rounds), 4),
        "overhead_s": spread([one[ATTEMPT] - one[BASELINE] for one in rounds]),
        "python_guard_overhead_s": spread([one[PYTHON_GUARD] - one[BASELINE] for one in rounds]),
        "cpu_overhead_s": spread([one[ATTEMPT] - one[BASELINE] for one in measured]),
        "python_guard_cpu_overhead_s": spread(
            [one[PYTHON_GUARD] - one[BASELINE] for one in measured]
        ),
        "ratio": ratio,
        "compiled_over_python_guard": saved,
        "rounds": rounds,
        "cpu_rounds": cpu,
    }

    def row(label: str, key: str) -> str:
        values = result[key]
        assert isinstance(values, dict)
        return f"| {label} | " + " | ".join(f"{values[k] * 1000:.0f} ms" for k in SPREAD) + " |\n"

    table = (
        f"No-op attempts under bubblewrap, {options.modules} modules in the tree, "
        f"working copies by {method}, {options.attempts} attempts.\n\n"
        "| measure | min | median | max |\n|---|---|---|---|\n"
        f"| attempt / `bwrap true` | {ratio['min']:.2f} | {ratio['median']:.2f} | "
        f"{ratio['max']:.2f} |\n"
        + row("overhead (attempt less `bwrap true`)", "overhead_s")
        + row("CPU time overhead (user+sys of everything, from a cgroup)", "cpu_overhead_s")
        + f"| attempt / attempt under guard.py (same round) | {saved['min']:.2f} | "
        f"{saved['median']:.2f} | {saved['max']:.2f} |\n"
        + row("overhead under guard.py (attempt less `bwrap true`)", "python_guard_overhead_s")
        + row("CPU time overhead under guard.py", "python_guard_cpu_overhead_s")
    )
    print(table)
    options.output.mkdir(parents=True, exist_ok=True)
    (options.output / "race.json").write_text(json.dumps(result, indent=2) + "\n")
    (options.output / "race.md").write_text(table)
    sys.exit(0)


if __name__ == "__main__":
    main()
