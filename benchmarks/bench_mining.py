#!/usr/bin/env python
"""Mining benchmark: the ``git-history`` miner's whole walk, as a whole process, against
``git log --first-parent --numstat`` and against PyDriller doing the equivalent walk.

Generates (once, cached) a repository with N first-parent commits and realistic test
modules through ``git fast-import``, or takes an existing one (``--repo``), then times
each measure as a separate process, rounds interleaved in rotated order, and reports each
one's paired ratio (min / median / max) to the baseline of the same round. It is a
report, not a test: the exit code is 0 whatever the ratios.

    python benchmarks/bench_mining.py [--commits N] [--repeat K] [--repo DIR ...]

See ``benchmarks/README.md`` for what is generated and what is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mining_history import prepare
from timing import pair_ratios, paired_ratios, ratio_table, rotations, run_process

from bugbout.core.plumbing.trees.git import log_command

HERE = Path(__file__).resolve().parent
DEFAULT_WORKDIR = HERE / ".cache"
OUTPUT = HERE.parent / ".bench"
PYDRILLER_VENV = Path(tempfile.gettempdir()) / "bugbout-bench-pydriller"
BASELINE = "git log --first-parent --numstat"
MINER_LOG = "git log as the miner reads it"
MINER = "miner, whole process"
PYDRILLER = "PyDriller, same walk"
CLI = "bugbout tasks --mine-only"
CLI_REUSED = "bugbout tasks --mine-only, mining reused"
PIPELINE = "the core's task pipeline, whole process"
TARGET_CLI = 1.3
"""``bugbout tasks --mine-only`` (mining, not reusing) at most this many times the miner."""
TARGET_RATIO = 1.2
"""The miner as a whole process, at most this many times the baseline."""
TARGET_SPEEDUP = 10.0
"""PyDriller's equivalent walk, at least this many times the miner's."""
CONFIG = """defaults:
  - base
  - _self_
project:
  source: {source}
  tests: {tests}
miner:
  ref: {ref}
issue-sources: {{github: null, file: null}}
"""


def pydriller_python(venv: Path) -> tuple[Path | None, str]:
    """The Python of ``venv`` with PyDriller installed (the venv is made when missing),
    or ``None`` and why not."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import pydriller"]
    if python.exists() and not subprocess.run(check, capture_output=True, check=False).returncode:
        return python, ""
    print(f"installing PyDriller into {venv} ...", flush=True)
    uv = shutil.which("uv")
    if uv:
        make = [uv, "venv", "-q", str(venv)]
        install = [uv, "pip", "install", "-q", "--python", str(python), "pydriller"]
    else:
        make = [sys.executable, "-m", "venv", str(venv)]
        install = [str(python), "-m", "pip", "install", "-q", "pydriller"]
    steps = [make, install]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"cannot install PyDriller into {venv}: {last}"
    if subprocess.run(check, capture_output=True, check=False).returncode:
        return None, f"PyDriller does not import in {venv}"
    return python, ""


def commands(args: argparse.Namespace, repo: Path, pydriller: Path | None) -> dict[str, list[str]]:
    """Each measure's command line, run in the repository."""
    measures: dict[str, list[str]] = {
        BASELINE: ["git", "-C", str(repo), "log", "--first-parent", "--numstat", args.ref],
        MINER_LOG: log_command(repo, args.ref, secrets.token_hex(16)),
        MINER: [sys.executable, str(HERE / "mine_process.py"), str(repo), args.source],
    }
    measures[MINER] += [args.tests, args.ref]
    if pydriller is not None:
        walk = [str(pydriller), str(HERE / "pydriller_walk.py"), str(repo), args.ref]
        measures[PYDRILLER] = [*walk, args.tests.rstrip("/") + "/"]
    if args.cli:
        measures[CLI] = [sys.executable, "-m", "bugbout", "tasks", "--mine-only"]
        measures[CLI_REUSED] = measures[CLI]
        pipeline = [sys.executable, str(HERE / "mine_tasks_process.py"), str(repo), args.source]
        measures[PIPELINE] = [*pipeline, args.tests, args.ref]
    return measures


def _run(name: str, argv: list[str], repo: Path, env: dict[str, str]) -> tuple[float, str]:
    """Wall time of one process, in a session of its own, and its output (discarded for
    the baseline)."""
    keep = name not in (BASELINE, MINER_LOG)
    if name == CLI:  # mine: the walk, not the mining the last run kept
        (repo / ".bugbout" / "mining.json").unlink(missing_ok=True)
    try:
        finished = run_process(argv, cwd=repo, env=env, keep_output=keep)
    except RuntimeError as exc:
        raise SystemExit(f"{name} failed: {exc}") from None
    return finished.sample.wall, finished.stdout


def _last_json(output: str) -> dict[str, Any]:
    lines = [line for line in output.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def _table(rounds: list[dict[str, float]], found: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The Markdown table and the ratios: each measure to the baseline, and PyDriller to
    the miner."""
    ratios = paired_ratios(rounds, BASELINE)
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    lines = ratio_table(rounds, BASELINE, unit="s")
    result: dict[str, Any] = {"ratios": ratios, "medians_s": medians}
    miner = ratios[MINER]
    lines.append("")
    lines.append(
        f"miner as a whole process: {miner['median']:.2f}x the baseline (target <= {TARGET_RATIO}x)"
    )
    if CLI in medians:
        cli = [{MINER: r[MINER], CLI: r[CLI], CLI_REUSED: r[CLI_REUSED]} for r in rounds]
        result["cli_to_miner"] = over = paired_ratios(cli, MINER)
        pairs = pair_ratios(cli, MINER)
        for name in (CLI, CLI_REUSED):
            lines.append(
                f"{name} / the miner process, per pair {' '.join(map(str, pairs[name]))}; "
                f"min / median / max {_spread(over[name])} (target <= {TARGET_CLI}x)"
            )
        core = [{MINER: r[MINER], PIPELINE: r[PIPELINE]} for r in rounds]
        result["pipeline_to_miner"] = below = paired_ratios(core, MINER)[PIPELINE]
        app = [{PIPELINE: r[PIPELINE], CLI: r[CLI]} for r in rounds]
        result["cli_to_pipeline"] = above = paired_ratios(app, PIPELINE)[CLI]
        lines.append(
            f"{PIPELINE} / the miner process (the core's share), min / median / max "
            f"{_spread(below)}; {CLI} / {PIPELINE} (the application's), {_spread(above)}"
        )
    if PYDRILLER in medians:
        faster = paired_ratios([{MINER: r[MINER], PYDRILLER: r[PYDRILLER]} for r in rounds], MINER)
        speedup = faster[PYDRILLER]
        result["pydriller_to_miner"] = speedup
        lines.append(
            f"PyDriller's walk / the miner's (min / median / max): {speedup['min']:.1f} / "
            f"{speedup['median']:.1f} / {speedup['max']:.1f} (target >= {TARGET_SPEEDUP:.0f})"
        )
        lines.append(_ceiling(ratios[PYDRILLER], result))
    run = found.get(MINER, {})
    if run:
        lines.append(
            f"miner process, last round: {run['import_s']:.2f} s importing, "
            f"{run['walk_s']:.2f} s walking; {run['tasks']} tasks of {run['examined']} "
            f"commits; peak RSS {run['peak_rss_kib'] / 1024:.0f} MiB "
            f"(git {run['git_peak_rss_kib'] / 1024:.0f} MiB)"
        )
    return "\n".join(lines), result


def _spread(ratios: dict[str, float]) -> str:
    return f"{ratios['min']:.2f} / {ratios['median']:.2f} / {ratios['max']:.2f}"


def _ceiling(pydriller: dict[str, float], result: dict[str, Any]) -> str:
    """The speedup over PyDriller a miner exactly as fast as the baseline would have
    (PyDriller / the baseline, paired), and whether the target is within it."""
    ceiling = pydriller["median"]
    needed = ceiling / TARGET_SPEEDUP
    result["ceiling"] = pydriller
    result["target_speedup_needs_ratio"] = round(needed, 3)
    verdict = (
        "within reach of a miner as fast as the baseline"
        if ceiling >= TARGET_SPEEDUP
        else "out of reach of any miner that is not faster than the baseline"
    )
    return (
        f"ceiling, PyDriller's walk / the baseline (min / median / max): "
        f"{pydriller['min']:.1f} / {ceiling:.1f} / {pydriller['max']:.1f}: the "
        f"{TARGET_SPEEDUP:.0f}x target needs the miner at <= {needed:.2f}x the baseline, "
        f"{verdict}"
    )


def run_rounds(
    measures: dict[str, list[str]], repo: Path, env: dict[str, str], repeat: int
) -> tuple[list[dict[str, float]], dict[str, Any]]:
    """One untimed run of each measure, then ``repeat`` rounds in rotated order: each
    round's wall times, and what each measure printed last."""
    names = list(measures)
    print("warming up (one untimed run of each) ...", flush=True)
    found: dict[str, Any] = {}
    for name in names:
        found[name] = _last_json(_run(name, measures[name], repo, env)[1])
    rounds: list[dict[str, float]] = []
    for index, order in enumerate(rotations(names, repeat), start=1):
        timed: dict[str, float] = {}
        for name in order:
            timed[name], output = _run(name, measures[name], repo, env)
            found[name] = _last_json(output) or found[name]
        rounds.append({name: timed[name] for name in names})
        walls = ", ".join(f"{name} {timed[name]:.2f}s" for name in names)
        print(f"  round {index}/{repeat}: {walls}", flush=True)
    return rounds, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=5_000, metavar="N")
    parser.add_argument("--repeat", type=int, default=3, metavar="K")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, metavar="DIR")
    parser.add_argument("--output", type=Path, default=OUTPUT, metavar="DIR")
    parser.add_argument("--repo", type=Path, help="an existing repository instead")
    parser.add_argument("--source", default="src/pkg", help="with --repo: the package")
    parser.add_argument("--tests", default="tests", help="with --repo: the tests")
    parser.add_argument("--ref", default="main", help="the branch walked (default main)")
    parser.add_argument("--pydriller-venv", type=Path, default=PYDRILLER_VENV, metavar="DIR")
    parser.add_argument("--no-pydriller", action="store_true", help="skip PyDriller")
    parser.add_argument("--cli", action="store_true", help="also time the tasks command")
    args = parser.parse_args(argv)
    if args.commits < 2 or args.repeat < 1:
        parser.error("--commits must be at least 2 and --repeat at least 1")

    if args.repo is not None:
        repo, info = args.repo.resolve(), {"given": True}
    else:
        repo, info = prepare(args.workdir.resolve(), args.commits, args.seed)
    print(f"repository: {repo}")
    skipped = "--no-pydriller" if args.no_pydriller else ""
    pydriller = None
    if not args.no_pydriller:
        pydriller, skipped = pydriller_python(args.pydriller_venv)
    if skipped:
        print(f"PyDriller skipped: {skipped}")
    env = dict(os.environ)
    if args.cli:
        env["BUGBOUT_HOME"] = tempfile.mkdtemp(prefix="bugbout-bench-home-")
        config = repo / "bugbout.yaml"
        if not config.exists():
            config.write_text(CONFIG.format(source=args.source, tests=args.tests, ref=args.ref))
    rounds, found = run_rounds(commands(args, repo, pydriller), repo, env, args.repeat)
    table, result = _table(rounds, found)
    print()
    print(table)
    report = {
        "benchmark": "mining",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "repository": str(repo),
        "repository_info": info,
        "ref": args.ref,
        "environment": {
            "python": platform.python_version(),
            "git": subprocess.run(
                ["git", "--version"], capture_output=True, text=True, check=False
            ).stdout.strip(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "baseline": BASELINE,
        "rounds": rounds,
        "found": found,
        "pydriller_skipped": skipped or None,
        "target_ratio": TARGET_RATIO,
        "target_speedup": TARGET_SPEEDUP,
        **result,
    }
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "mining.md").write_text(table + "\n")
    (args.output / "mining.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"results written to {args.output / 'mining.md'} and mining.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
