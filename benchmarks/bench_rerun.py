#!/usr/bin/env python
"""A judge-only re-run against ``bugbout report`` on the same store.

    python benchmarks/bench_rerun.py [--repeat K]

The demo repository (``bugbout.example``: scripted agents, tests run by this
interpreter) gets one whole bout, untimed. Then, paired in rotated order, each round
times as whole processes, each in a session of its own: ``bugbout report`` (the
baseline: it reads the records and renders the reports), ``bugbout run judge=strict``
(a judge-only re-run: every attempt, matrix, score and audit is reused, the judge
decides again) and ``bugbout run`` (the same bout again: nothing to decide anew). A
re-run can cost no less than reading its inputs and writing its report, so its ratio
to the report says what re-running adds: mining (reused), the checks of the
contestants, the store's lock, the evidence looked up. Wall time and CPU time (from a
cgroup) over the report's of the same round, per pair, then min / median / max. Writes
``.bench/rerun.json`` and ``.bench/rerun.md``. A report, not a test: exit code 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from timing import kind_tables, rotations, run_process, write_result

from bugbout.example import build_example

OUTPUT = Path(__file__).resolve().parent.parent / ".bench"
BASELINE = "bugbout report"
MEASURES = {
    BASELINE: ["report"],
    "bugbout run judge=strict": ["run", "judge=strict"],
    "bugbout run (the same bout)": ["run"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    walls: list[dict[str, float]] = []
    cpus: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as scratch:
        os.environ["BUGBOUT_HOME"] = str(Path(scratch) / "home")
        repo = build_example(Path(scratch) / "tally")

        def bugbout(*args: str) -> tuple[float, float | None]:
            argv = [sys.executable, "-m", "bugbout", "--quiet", *args]
            sample = run_process(argv, cwd=repo).sample
            return sample.wall, sample.cpu

        print("the bout (untimed) ...", flush=True)
        bugbout("run")
        for order in rotations(list(MEASURES), options.repeat + 1):
            timed = {name: bugbout(*MEASURES[name]) for name in order}
            walls.append({name: timed[name][0] for name in MEASURES})
            cpu = {name: timed[name][1] for name in MEASURES}
            if None not in cpu.values():
                cpus.append({name: value for name, value in cpu.items() if value is not None})
    walls, cpus = walls[1:], cpus[1:]  # the first round warms the caches up
    tables, ratios = kind_tables({"wall": walls, "cpu": cpus}, BASELINE)
    table = "\n".join(
        [
            f"Judge-only re-run against `{BASELINE}` on the demo's store, whole processes, "
            f"{len(walls)} pairs.",
            "",
            *tables,
        ]
    ).rstrip()
    result = {"benchmark": "rerun", "walls_s": walls, "cpus_s": cpus, **ratios}
    write_result(options.output, "rerun", result, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
