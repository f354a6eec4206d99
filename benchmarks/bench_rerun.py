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
import json
import os
import sys
import tempfile
from pathlib import Path

from timing import pair_ratios, paired_ratios, rotations, run_process

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
    lines = [
        f"Judge-only re-run against `{BASELINE}` on the demo's store, whole processes, "
        f"{len(walls)} pairs.",
        "",
        "| measure | time | per pair | min / median / max |",
        "|---|---|---|---|",
    ]
    result: dict[str, object] = {"benchmark": "rerun", "walls_s": walls, "cpus_s": cpus}
    for kind, rounds in (("wall", walls), ("cpu", cpus)):
        if not rounds:
            lines.append(f"| all | {kind} | not measured (no writable cgroup v2) | |")
            continue
        pairs, ratios = pair_ratios(rounds, BASELINE), paired_ratios(rounds, BASELINE)
        result[kind] = {name: {"per_pair": pairs[name], **ratios[name]} for name in ratios}
        for name, ratio in ratios.items():
            lines.append(
                f"| {name} | {kind} | {' '.join(f'{r:.2f}' for r in pairs[name])} | "
                f"{ratio['min']:.2f} / {ratio['median']:.2f} / {ratio['max']:.2f} |"
            )
    table = "\n".join(lines)
    print(table)
    options.output.mkdir(parents=True, exist_ok=True)
    (options.output / "rerun.json").write_text(json.dumps(result, indent=2) + "\n")
    (options.output / "rerun.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
