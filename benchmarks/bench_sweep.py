#!/usr/bin/env python
"""Judge-only sweep jobs on one store: how many pytest processes they start and how long
each job takes, against the bout that made the evidence.

In each round: the demo repository (``bugbout.example``, scripted agents, tests run by
this interpreter) gets one whole bout, the baseline, which races, cross-examines, scores
and audits; then ``bugbout -m judge=majority,strict,unanimous`` sweeps three judges on
the same store. Every pytest process is counted: bugbout runs under ``strace``, which
logs every program started, inside the sandboxes too. The target for a job that
changes only the judge is no pytest process and a wall time of seconds. Ratios are
paired per round: each job's wall time (``job.json``) over the bout's. Writes
``.bench/sweep.json`` and ``.bench/sweep.md``. A report, not a test: exit code 0.

    python benchmarks/bench_sweep.py [--repeat K]
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

from bugbout.example import build_example

OUTPUT = Path(__file__).resolve().parent.parent / ".bench"
JUDGES = ("majority", "strict", "unanimous")
BASELINE = "bout"


def pytest_processes(trace: Path) -> int:
    """The pytest processes started, from ``strace``'s log of every ``execve``."""
    return sum(
        1
        for line in trace.read_text(errors="replace").splitlines()
        if "execve(" in line and '"-m", "pytest"' in line and line.rstrip().endswith("= 0")
    )


def bugbout(repo: Path, trace: Path, *args: str) -> float:
    """Run bugbout under ``strace`` (every process it starts, sandboxes included)."""
    strace = shutil.which("strace")
    if strace is None:
        raise SystemExit("strace is needed to count the pytest processes (apt install strace)")
    argv = [strace, "-f", "--seccomp-bpf", "-qq", "-e", "trace=execve", "-o", str(trace)]
    started = time.perf_counter()
    result = subprocess.run(
        [*argv, sys.executable, "-m", "bugbout", "--quiet", *args],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode:
        raise SystemExit(f"bugbout {' '.join(args)} failed:\n{result.stderr[-2000:]}")
    return time.perf_counter() - started


def one_round(scratch: Path) -> dict[str, object]:
    """The bout, then the sweep of judges, on a fresh demo repository."""
    os.environ["BUGBOUT_HOME"] = str(scratch / "home")
    repo = build_example(scratch / "tally")
    wall = bugbout(repo, scratch / "bout.trace", "run")
    sweep_wall = bugbout(repo, scratch / "sweep.trace", "-m", f"judge={','.join(JUDGES)}")
    jobs = [
        json.loads(path.read_text())
        for path in sorted((repo / ".bugbout" / "sweeps").glob("*/*/job.json"))
    ]
    return {
        "bout_s": round(wall, 3),
        "bout_pytest": pytest_processes(scratch / "bout.trace"),
        "sweep_s": round(sweep_wall, 3),
        "sweep_pytest": pytest_processes(scratch / "sweep.trace"),
        "jobs": [
            {
                "judge": job["judge"],
                "wall_s": job["wall_time"],
                "evidence_made": job["evidence_made"],
                "evidence_reused": job["evidence_reused"],
                "truths_made": job.get("truths_made", 0),
                "attempts_run": sum(not used.get("reused") for used in job["attempts"]),
            }
            for job in jobs
        ],
    }


def spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    rounds = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bench-sweep-") as scratch:
            rounds.append(one_round(Path(scratch)))
    jobs = [(job, float(r["bout_s"])) for r in rounds for job in r["jobs"]]  # type: ignore[attr-defined]
    rows = {
        "pytest processes, whole bout": spread([float(r["bout_pytest"]) for r in rounds]),  # type: ignore[arg-type]
        "pytest processes, whole sweep": spread([float(r["sweep_pytest"]) for r in rounds]),  # type: ignore[arg-type]
        "evidence made, per job": spread([float(job["evidence_made"]) for job, _ in jobs]),
        "ground truths made, per job": spread([float(job["truths_made"]) for job, _ in jobs]),
        "job wall time (s)": spread([float(job["wall_s"]) for job, _ in jobs]),
        "bout wall time (s)": spread([float(r["bout_s"]) for r in rounds]),  # type: ignore[arg-type]
        "job / bout wall time": spread([float(job["wall_s"]) / bout for job, bout in jobs]),
    }
    table = "\n".join(
        [
            f"Judge-only sweep ({', '.join(JUDGES)}) on the demo's store, {args.repeat} rounds.",
            "",
            "| measure | min | median | max |",
            "|---|---|---|---|",
            *(
                f"| {name} | {row['min']:.3g} | {row['median']:.3g} | {row['max']:.3g} |"
                for name, row in rows.items()
            ),
        ]
    )
    print(table)
    result = {"benchmark": "sweep", "judges": JUDGES, "summary": rows, "rounds": rounds}
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "sweep.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.output / "sweep.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
