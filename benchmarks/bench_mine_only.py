#!/usr/bin/env python
"""``bugbout tasks --mine-only`` against the bare miner process, in wall time and in the
CPU of each process's whole tree (git included), paired round by round.

On a shared machine the wall time of a two-second process moves with its neighbours;
its CPU time does not, so the CPU ratio says what the command costs over the miner when
the machine's load hides it. Each measure is a separate process, rounds run in rotated
order after one untimed run of each, which writes the bytecode of the modules they import
(``PYTHONDONTWRITEBYTECODE`` is unset for them); the command mines (its kept
``mining.json`` is removed before every run) and reuses its composed settings, as a second
run does. It is a report, not a test: the exit code is 0 whatever the ratios.

    python benchmarks/bench_mine_only.py --repo CLICK [--source src/click,click] [--repeat K]

The repository's ``bugbout.yaml`` is written when it has none (``--source`` as a list).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from timing import Sample, kind_tables, rotations, run_process, write_result

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parent / ".bench"
MINER = "miner, whole process"
PIPELINE = "the core's task pipeline, whole process"
CLI = "bugbout tasks --mine-only"
TARGET = 1.3
"""The command, at most this many times the miner process."""


def commands(args: argparse.Namespace) -> dict[str, list[str]]:
    """Each measure's command line, run in the repository."""
    where = [str(args.repo), args.source, args.tests, args.ref]
    return {
        MINER: [sys.executable, str(HERE / "mine_process.py"), *where],
        PIPELINE: [sys.executable, str(HERE / "mine_tasks_process.py"), *where],
        CLI: [sys.executable, "-m", "bugbout", "tasks", "--mine-only"],
    }


def timed(name: str, argv: list[str], repo: Path, env: dict[str, str]) -> Sample:
    """One run of ``argv`` in ``repo``; the command's kept mining removed first."""
    if name == CLI:
        (repo / ".bugbout" / "mining.json").unlink(missing_ok=True)
    return run_process(argv, cwd=repo, env=env).sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="the repository mined")
    parser.add_argument("--source", default="src/click,click", help="its package folders")
    parser.add_argument("--tests", default="tests")
    parser.add_argument("--ref", default="main", help="the branch walked (default main)")
    parser.add_argument("--repeat", type=int, default=7, metavar="K")
    parser.add_argument("--output", type=Path, default=OUTPUT, metavar="DIR")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    config = repo / "bugbout.yaml"
    if not config.exists():
        source = json.dumps(args.source.split(","))
        config.write_text(
            f"defaults: [base, _self_]\nproject: {{source: {source}, tests: {args.tests}}}\n"
            f"miner: {{ref: {args.ref}}}\nissue-sources: {{github: null, file: null}}\n"
        )
    env = {**os.environ, "BUGBOUT_HOME": tempfile.mkdtemp(prefix="bugbout-bench-home-")}
    # bytecode is written by the untimed run, as an installation has it: without it, each
    # run compiles every module it imports that changed since its bytecode was written
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    measures = commands(args)
    print("warming up (one untimed run of each) ...", flush=True)
    for name, command in measures.items():
        timed(name, command, repo, env)
    walls: list[dict[str, float]] = []
    cpus: list[dict[str, float]] = []
    for index, order in enumerate(rotations(list(measures), args.repeat), start=1):
        samples = {name: timed(name, measures[name], repo, env) for name in order}
        walls.append({name: samples[name].wall for name in measures})
        if all(sample.cpu is not None for sample in samples.values()):
            cpus.append({name: samples[name].cpu or 0.0 for name in measures})
        shown = ", ".join(f"{name} {samples[name].wall:.2f}s" for name in measures)
        print(f"  round {index}/{args.repeat}: {shown}", flush=True)
    lines, found = kind_tables({"wall": walls, "cpu": cpus}, MINER)
    lines.append(f"target: {CLI} at most {TARGET}x the miner process")
    result = {"benchmark": "mine-only", "repository": str(repo), "target": TARGET, **found}
    write_result(args.output, "mine_only", result, "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
