#!/usr/bin/env python
"""Judge-only sweep jobs on one store: how many pytest processes they start and how long
each job takes, against the bout that made the evidence.

In each round: the demo repository (``bugbout.example``, scripted agents, tests run by
this interpreter) gets one whole bout, the baseline, which races, cross-examines, scores
and audits; then ``bugbout -m judge=majority,strict,unanimous`` sweeps three judges on
the same store. Every pytest process is counted: bugbout runs under ``strace``, which
logs every program started, inside the sandboxes too. The target for a job that
changes only the judge is no pytest process and a wall time of seconds. Then a
judge-only re-run, ``bugbout run judge=strict``. Every time is a whole process (what a
user waits for), each in a session of its own, under the same ``strace``; ratios are
paired per round, over the bout's: the sweep's, the sweep's per job, and the re-run's,
per pair and then min / median / max. Writes ``.bench/sweep.json`` and
``.bench/sweep.md``. A report, not a test: exit code 0.

    python benchmarks/bench_sweep.py [--repeat K]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from timing import pair_ratios, paired_ratios, run_process, spread, write_result

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
    """The wall time of bugbout as a whole process under ``strace`` (which logs every
    process it starts, sandboxes included)."""
    strace = shutil.which("strace")
    if strace is None:
        raise SystemExit("strace is needed to count the pytest processes (apt install strace)")
    argv = [strace, "-f", "--seccomp-bpf", "-qq", "-e", "trace=execve", "-o", str(trace)]
    try:
        finished = run_process([*argv, sys.executable, "-m", "bugbout", "--quiet", *args], cwd=repo)
    except RuntimeError as exc:
        raise SystemExit(f"bugbout {' '.join(args)} failed: {exc}") from None
    return finished.sample.wall


def one_round(scratch: Path) -> dict[str, object]:
    """The bout, then the sweep of judges, on a fresh demo repository."""
    os.environ["BUGBOUT_HOME"] = str(scratch / "home")
    repo = build_example(scratch / "tally")
    wall = bugbout(repo, scratch / "bout.trace", "run")
    sweep_wall = bugbout(repo, scratch / "sweep.trace", "-m", f"judge={','.join(JUDGES)}")
    rerun_wall = bugbout(repo, scratch / "rerun.trace", "run", "judge=strict")
    jobs = [
        json.loads(path.read_text())
        for path in sorted((repo / ".bugbout" / "sweeps").glob("*/*/job.json"))
    ]
    return {
        "bout_s": round(wall, 3),
        "bout_pytest": pytest_processes(scratch / "bout.trace"),
        "sweep_s": round(sweep_wall, 3),
        "sweep_pytest": pytest_processes(scratch / "sweep.trace"),
        "rerun_s": round(rerun_wall, 3),
        "rerun_pytest": pytest_processes(scratch / "rerun.trace"),
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
        "pytest processes, judge-only re-run": spread([float(r["rerun_pytest"]) for r in rounds]),  # type: ignore[arg-type]
        "a job's own wall time, inside its sweep (s)": spread(
            [float(job["wall_s"]) for job, _ in jobs]
        ),
        "bout, whole process (s)": spread([float(r["bout_s"]) for r in rounds]),  # type: ignore[arg-type]
    }
    walls = [
        {
            BASELINE: float(r["bout_s"]),  # type: ignore[arg-type]
            "sweep / bout": float(r["sweep_s"]),  # type: ignore[arg-type]
            "sweep per job / bout": float(r["sweep_s"]) / len(JUDGES),  # type: ignore[arg-type]
            "judge-only re-run / bout": float(r["rerun_s"]),  # type: ignore[arg-type]
        }
        for r in rounds
    ]
    pairs = pair_ratios(walls, BASELINE)
    for name, ratio in paired_ratios(walls, BASELINE).items():
        rows[f"{name}, whole processes (pairs: {' '.join(map(str, pairs[name]))})"] = ratio
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
    result = {"benchmark": "sweep", "judges": JUDGES, "summary": rows, "rounds": rounds}
    write_result(args.output, "sweep", result, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
