#!/usr/bin/env python
"""What the coverage map costs: a real suite under the ``bugbout_coverage`` plugin against
the same suite run plainly, on each interpreter given.

click (cloned from the mirror into the cache when ``--repo`` is not given) at a fixed
commit; its suite run by ``python -m pytest`` of each interpreter, which must have
pytest. Each round times, in rotated order and each as a whole process in a session of
its own (``timing.run_process``), with the same options and the same shell around it:

- ``plain``: the suite (the baseline);
- ``coverage``: the suite with ``-p bugbout_coverage`` writing its map, as a base run
  does (``sys.monitoring`` on 3.12+, marked functions before);
- before 3.12, for the record of why the plugin does not use them: ``setprofile`` and
  ``settrace``, the cheapest tracer each allows (a function that keeps each code object
  it sees on a call event; the trace function returns ``None``, so no line is traced).

Wall and CPU time (cgroup) over ``plain`` of the same round, per pair and min / median
/ max, per interpreter, in ``.bench/coverage.md`` and ``.bench/coverage.json``.

    python benchmarks/bench_coverage.py [--python PY ...] [--repeat K] [--repo PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import timing

from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "coverage"
OUTPUT = HERE.parent / ".bench"
MIRROR = Path("/work/.mirror/pallets+click/repo")
COMMIT = "2c8cd3ac"
SOURCE = "src/click"
PROBE = """import os, sys, threading
seen = set()
kind = os.environ.get("BENCH_TRACER")
if kind == "setprofile":
    def profile(frame, event, arg):
        if event == "call":
            seen.add(frame.f_code)
    threading.setprofile(profile)
    sys.setprofile(profile)
elif kind == "settrace":
    def trace(frame, event, arg):
        seen.add(frame.f_code)
    threading.settrace(trace)
    sys.settrace(trace)
"""
"""A pytest plugin (``-p bench_tracer``) installing the tracer ``BENCH_TRACER`` names."""


def click(repo: Path | None) -> Path:
    """click's tree at ``COMMIT``, with the metadata its suite reads (``importlib.metadata``)."""
    tree = repo or CACHE / "click"
    if repo is None and not tree.exists():
        subprocess.run(["git", "clone", "-q", str(MIRROR), str(tree)], check=True)
        subprocess.run(["git", "-C", str(tree), "checkout", "-q", COMMIT], check=True)
    metadata = CACHE / "metadata" / "click-8.5.0.dev0.dist-info"
    metadata.mkdir(parents=True, exist_ok=True)
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: click\nVersion: 8.5.0.dev0\n")
    (CACHE / "metadata" / "bench_tracer.py").write_text(PROBE)
    return tree


def pytest_argv(python: str, plugins: list[str], map_file: Path) -> list[str]:
    """The suite's command, in a shell that opens the map's descriptor (fd 9) for every
    measure alike."""
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugins]
    command += ["-m", "not stress", "tests"]
    return ["sh", "-c", f"exec 9>{shlex.quote(str(map_file))} && exec {shlex.join(command)}"]


def measures(python: str, tree: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each measure's command and environment on ``python``."""
    path = os.pathsep.join([str(outcomes_plugin_dir()), str(CACHE / "metadata"), str(tree / "src")])
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONPATH": path,
        "PYTHONDONTWRITEBYTECODE": "1",
        "BUGBOUT_COVERAGE_FD": "9",
        "BUGBOUT_SOURCE_DIRS": json.dumps([SOURCE]),
    }
    map_file = CACHE / "map.jsonl"
    found = {
        "plain": (pytest_argv(python, [], map_file), env),
        "coverage": (pytest_argv(python, ["-p", "bugbout_coverage"], map_file), env),
    }
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    if version == "False":
        for kind in ("setprofile", "settrace"):
            argv = pytest_argv(python, ["-p", "bench_tracer"], map_file)
            found[kind] = (argv, {**env, "BENCH_TRACER": kind})
    return found


def bench(python: str, tree: Path, repeat: int) -> tuple[str, dict[str, list[dict[str, float]]]]:
    """The interpreter's version, and each round's wall and CPU seconds of each measure."""
    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    found = measures(python, tree)
    for argv, env in found.values():  # warm-up, and a failed run fails loudly
        timing.run_process(argv, cwd=tree, env=env)
    kinds: dict[str, list[dict[str, float]]] = {"wall": [], "cpu": []}
    for order in timing.rotations(list(found), repeat):
        samples = {
            name: timing.run_process(found[name][0], cwd=tree, env=found[name][1]).sample
            for name in order
        }
        kinds["wall"].append({name: sample.wall for name, sample in samples.items()})
        if all(sample.cpu is not None for sample in samples.values()):
            kinds["cpu"].append({name: sample.cpu or 0.0 for name, sample in samples.items()})
    return version, kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", help="an interpreter with pytest (repeat)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--repo", type=Path, help="a click tree (default: cloned from the mirror)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    tree = click(options.repo)
    lines = [f"click at {COMMIT}: its suite, plain and under the coverage plugin", ""]
    result: dict[str, object] = {"benchmark": "coverage", "repeat": options.repeat, "by_python": {}}
    for python in options.python or [sys.executable]:
        version, kinds = bench(python, tree, options.repeat)
        table, ratios = timing.kind_tables(kinds, "plain")
        lines += [f"## Python {version}", "", *table]
        result["by_python"][version] = {"python": python, "rounds": kinds, **ratios}  # type: ignore[index]
    timing.write_result(options.output, "coverage", result, "\n".join(lines))
    sys.exit(0)


if __name__ == "__main__":
    main()
