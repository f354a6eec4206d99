#!/usr/bin/env python
"""Podman's cost per test run: one ``run_tests`` in a container against the same run with uv.

Builds a small src-layout project whose suite has ``--tests`` trivial tests, and its
environment twice: with the ``uv`` builder (a virtual environment on the host) and with the
``podman`` builder (an image; each run a container with no network, the tree
bind-mounted). Both builds are untimed. Then, interleaved in rotated order and repeated,
it times ``bugbout.core.plumbing.testruns.testrun.run_tests`` on the same tree and targets with
each, exactly as ground truth runs them (uv's run switched offline by bubblewrap or unshare,
podman's contained by its container).

It reports podman's wall time over uv's in each pair (both runs started by bugbout, each
in a session of its own), their min / median / max, and podman's overhead per run in
seconds. Wall time only: a container's processes are in podman's cgroups, not the
benchmark's, so their CPU is not read here. A report, not a test: the exit code is 0
whatever the numbers, and 0 with a message when podman cannot run here.

    python benchmarks/bench_podman.py [--repeat K] [--tests T]
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from timing import measure, pair_ratios, paired_ratios, ratio_table, rotations, spread

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import RunStatus
from bugbout.plugins.environments.podman import PodmanBuilder, PodmanOptions
from bugbout.plugins.environments.uv import UvBuilder

CACHE = Path(__file__).parent / ".cache"
RESULTS = CACHE / "results-podman.json"
HOME = CACHE / "podman-home"
TIMEOUT = 300.0


def project(root: Path, tests: int) -> Path:
    """A src-layout project ``bench`` with ``tests`` trivial tests in one module."""
    tree = root / f"podman-tree-{tests}"
    (tree / "src" / "bench").mkdir(parents=True, exist_ok=True)
    (tree / "tests").mkdir(exist_ok=True)
    (tree / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
    (tree / "src" / "bench" / "__init__.py").write_text("def double(x):\n    return 2 * x\n")
    body = "from bench import double\n\n"
    body += "".join(
        f"\n\ndef test_double_{n}():\n    assert double({n}) == {2 * n}\n" for n in range(tests)
    )
    (tree / "tests" / "test_double.py").write_text(body)
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each (default 10)")
    parser.add_argument("--tests", type=int, default=20, help="tests in the suite (default 20)")
    options = parser.parse_args()
    HOME.mkdir(parents=True, exist_ok=True)
    tree = project(CACHE, options.tests)
    settings = ProjectSettings(source="src/bench", tests="tests")
    request = EnvironmentRequest(project=settings, tree=tree, home=HOME)
    podman_builder = PodmanBuilder(PodmanOptions())
    try:
        try:
            contained = podman_builder.build(request)
        except Exception as exc:  # a report: say why and stop
            print(f"podman cannot run here: {exc}")
            return
        environments: dict[str, Environment] = {
            "uv": UvBuilder().build(request),
            "podman": contained,
        }
        rounds: list[dict[str, float]] = []
        for order in rotations(list(environments), options.repeat + 1):
            walls: dict[str, float] = {}
            for name in order:
                sample, run = measure(
                    lambda name=name: run_tests(  # type: ignore[misc]
                        environments[name],
                        tree,
                        ["tests"],
                        project=settings,
                        label=name,
                        timeout=TIMEOUT,
                    )
                )
                assert run.status == RunStatus.OK, run.detail
                assert len(run.outcomes) == options.tests, run.outcomes
                walls[name] = sample.wall
            rounds.append(walls)
        rounds = rounds[1:]  # the first round warms caches up
    finally:
        podman_builder.close()
    ratio = paired_ratios(rounds, "uv")["podman"]
    overheads = [one["podman"] - one["uv"] for one in rounds]
    result = {
        "benchmark": "podman",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "tests": options.tests,
        "repeat": options.repeat,
        "rounds": rounds,
        "environments": {name: env.description for name, env in environments.items()},
        "podman_over_uv": ratio,
        "podman_over_uv_per_pair": pair_ratios(rounds, "uv")["podman"],
        "overhead_s": spread(overheads),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"one test run, {options.tests} tests, {options.repeat} pairs (wall time):")
    print("\n".join(ratio_table(rounds, "uv", unit="s")))
    print(
        f"podman over uv, per pair: min / median / max {ratio['min']} / {ratio['median']} / "
        f"{ratio['max']}; overhead {spread(overheads)['median']:+.3f} s a run (median pair)"
    )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
