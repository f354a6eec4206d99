#!/usr/bin/env python
"""Judge-only sweep jobs on one store: how many pytest processes they start and how long
each job takes, against the bout that made the evidence.

In each round: the demo repository (``bugbout.example``, scripted agents, tests run by
this interpreter) gets one whole bout, the baseline, which races, cross-examines, scores
and audits; then ``bugbout -m judge=majority,strict,unanimous`` sweeps three judges on
the same store. Every pytest process is counted: the tests run through a wrapper
interpreter (``env.path``) that notes each ``-m pytest`` before it starts Python. The
target for a job that changes only the judge is no pytest process and a wall time of
seconds. Ratios are paired per round: each job's wall time (``job.json``) over the
bout's. Writes ``.bench/sweep.json`` and ``.bench/sweep.md``. A report, not a test:
exit code 0.

    python benchmarks/bench_sweep.py [--repeat K]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
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


def wrapper(folder: Path) -> tuple[Path, Path]:
    """An interpreter that appends a line to a log for each pytest it starts."""
    log, script = folder / "pytest.log", folder / "python"
    script.write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" -m pytest "*) echo pytest >> {shlex.quote(str(log))};; esac\n'
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )
    script.chmod(0o755)
    return script, log


def counted(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def bugbout(repo: Path, *args: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "--quiet", *args],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode:
        raise SystemExit(f"bugbout {' '.join(args)} failed:\n{result.stderr[-2000:]}")
    return time.perf_counter() - started


def one_round(scratch: Path) -> dict[str, object]:
    """The bout, then the sweep of judges, on a fresh demo repository."""
    os.environ["BUGBOUT_HOME"] = str(scratch / "home")
    python, log = wrapper(scratch)
    repo = build_example(scratch / "tally")
    config = repo / "bugbout.yaml"
    config.write_text(config.read_text() + f"\nenv:\n  path: {json.dumps(str(python))}\n")
    wall = bugbout(repo, "run")
    made = counted(log)
    sweep_wall = bugbout(repo, "-m", f"judge={','.join(JUDGES)}")
    jobs = [
        json.loads(path.read_text())
        for path in sorted((repo / ".bugbout" / "sweeps").glob("*/*/job.json"))
    ]
    return {
        "bout_s": round(wall, 3),
        "bout_pytest": made,
        "sweep_s": round(sweep_wall, 3),
        "sweep_pytest": counted(log) - made,
        "jobs": [
            {
                "judge": job["judge"],
                "wall_s": job["wall_time"],
                "evidence_made": job["evidence_made"],
                "evidence_reused": job["evidence_reused"],
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
