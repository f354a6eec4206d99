"""Chaos: bouts killed with ``kill -9`` at random points, resumed until they complete.

A bout on a one-bug repository with three scripted contestants (under bubblewrap) is
started, its whole process group killed with SIGKILL after a random delay, and started
again, until a run completes; then a new bout begins, until the number of kill points is
reached. After every kill, and at the end of every bout, it checks:

- no unreadable record: every JSON file under ``.bugbout`` parses with its model;
- no finished attempt lost or run again: a stored attempt stays stored and unchanged,
  and its agent never starts again (each agent run leaves a marker file outside the
  sandbox, in a state directory);
- no agent process outlives its bout: each agent leaves a daemon that would run for ten
  minutes, and within ``SURVIVOR_GRACE`` seconds of the kill none may be left;
- the final report equals an uninterrupted run's (``report.json`` without times and
  paths).

``python tests/adversarial/chaos.py --kills 100 --seed 7`` (``nox -s chaos``) runs it;
tests/adversarial/test_chaos.py runs 10 kill points.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from effects import survivors
from pydantic import BaseModel, ValidationError

from bugbout.core.report.report import Report
from bugbout.core.store.race_records import Attempt
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.verdict_records import AuditSet, Job, Matrix, ResolutionSet, VerdictSet
from bugbout.testing.fixtures import build_fixed_bug_repository

MODELS: dict[str, type[BaseModel]] = {
    "tasks.json": TaskSet,
    "oracles.json": OracleSet,
    "resolutions.json": ResolutionSet,
    "verdicts.json": VerdictSet,
    "audits.json": AuditSet,
    "job.json": Job,
    "report.json": Report,
    "attempts": Attempt,
    "matrices": Matrix,
}
"""Each store record's model, by file name or by top folder."""

VOLATILE = {"wall_time", "wall_time_per_resolved", "started", "logdir", "logs", "record",
            "duration", "path"}  # fmt: skip
"""Report keys that differ between two runs of the same bout: times, and paths (an
attempt's logs live in a folder of a random name; its record is named by its key, which
holds the contestant's command, so the bout's folder)."""

AGENT = """#!/bin/bash
# A scripted contestant: marks its start and end outside the sandbox, leaves a daemon
# that would outlive it (a new session, deaf to SIGHUP and SIGTERM), then acts.
name=$1; logdir=$2; marks={marks}
task=$(basename "$(dirname "$(dirname "$logdir")")")
run="$marks/$task.$name.$(date +%s%N).$$"
touch "$run.start"
setsid bash -c 'trap "" HUP TERM; sleep 600; :' &
sleep {pause}
{action}
touch "$run.end"
"""

ACTIONS = {
    "fixer": """python3 - <<'EOF'
from pathlib import Path
area = Path("src/shapes/area.py")
area.write_text(area.read_text().replace(
    "    return shape / reference\\n",
    "    if reference == 0:\\n        return 0.0\\n    return shape / reference\\n"))
print("Fixed ratio().")
EOF""",
    "wrong": 'echo "# looked at this" >> src/shapes/area.py',
    "empty": 'echo "nothing to do"',
}
PAUSES = {"fixer": 1.0, "wrong": 0.5, "empty": 0.2}
SURVIVOR_GRACE = 3.0
"""Seconds after a kill by which no process of an agent may be left (the guards notice
bugbout's end within a fifth of a second)."""


@dataclass
class Outcome:
    """What a chaos session did and found."""

    seed: int
    kills: int = 0
    bouts: int = 0
    agent_runs: int = 0
    problems: list[str] = field(default_factory=list)


def build(root: Path) -> Path:
    """The fixed-bug repository of :mod:`bugbout.testing` (``ratio`` by zero, #12) with
    its ``bugbout.yaml``; the agents and their marker folder beside it."""
    repository = build_fixed_bug_repository(root / "repo")
    marks, agents = root / "marks", root / "agents"
    marks.mkdir()
    agents.mkdir()
    contestants = {}
    for name, action in ACTIONS.items():
        script = agents / f"{name}.sh"
        script.write_text(AGENT.format(marks=marks, pause=PAUSES[name], action=action))
        contestants[name] = {
            "agent": "command",
            "command": ["/bin/bash", str(script), name, "{logdir}"],
            "state-dirs": [str(marks)],
        }
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": repository.source, "tests": repository.tests},
        "issue-sources": {"github": None, "file": None},
        "tasks": {"reruns": 1},
        "run": {"timeout": 60, "quotas": {"command": 2}},
        "verdicts": {"run-suite": False},
        "contestants": contestants,
    }
    (repository.path / "bugbout.yaml").write_text(json.dumps(config))
    return repository.path


class Bout:
    """One chaos bout: a fresh copy of the repository, its own BUGBOUT_HOME and tag."""

    def __init__(self, template: Path, root: Path) -> None:
        self.root = root
        shutil.copytree(template, root, symlinks=True)
        self.repo = root / "repo"
        self.marks = root / "marks"
        self.tag = f"chaos-{uuid.uuid4().hex}"
        self.env = {**os.environ, "BUGBOUT_HOME": str(root / "home")}
        config = json.loads((self.repo / "bugbout.yaml").read_text())
        for contestant in config["contestants"].values():
            contestant["env"] = {"CHAOS_TAG": self.tag}
        (self.repo / "bugbout.yaml").write_text(json.dumps(config))
        self.seen: dict[str, tuple[str, int]] = {}
        """Each stored attempt (relative path): its text and its agent's runs then."""

    def start(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "bugbout", "run", "environment=interpreter"],
            cwd=self.repo, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip

    def runs(self) -> collections.Counter[str]:
        """How many times each agent started on each task (``task.contestant``)."""
        return collections.Counter(
            ".".join(path.name.split(".")[:2]) for path in self.marks.glob("*.start")
        )

    def check(self) -> list[str]:
        """The invariants after a kill or a completed run; remembers what is stored.
        The marker counts are read once no process of the bout is left."""
        problems = unreadable(self.repo / ".bugbout")
        alive = survivors(self.tag, self.root / "home", grace=SURVIVOR_GRACE)
        problems += [f"process outlived its bout: {p}" for p in alive]
        runs = self.runs()
        for stored, (text, count) in self.seen.items():
            where = self.repo / ".bugbout" / stored
            now = where.read_text() if where.exists() else None
            if now != text:
                problems.append(
                    f"stored attempt {stored} was {'lost' if now is None else 'changed'}"
                )
            if runs[".".join(Path(stored).parts[1:3])] != count:
                problems.append(f"finished attempt {stored}: its agent ran again")
        for path in (self.repo / ".bugbout").glob("attempts/*/*/*.json"):
            relative = str(path.relative_to(self.repo / ".bugbout"))
            if relative not in self.seen:
                key = ".".join(path.relative_to(self.repo / ".bugbout").parts[1:3])
                self.seen[relative] = (path.read_text(), runs[key])
        return problems


def unreadable(store: Path) -> list[str]:
    """Every JSON record under ``store`` that does not parse with its model."""
    problems = []
    for path in sorted(store.rglob("*.json")):
        relative = path.relative_to(store)
        model = MODELS.get(relative.parts[0])
        try:
            if model is None:
                json.loads(path.read_bytes())
            else:
                model.model_validate_json(path.read_bytes())
        except (ValueError, ValidationError) as error:
            problems.append(f"unreadable record {relative}: {str(error).splitlines()[0]}")
    return problems


def normalized(report: Any, roots: tuple[str, ...]) -> Any:
    """``report`` without the keys that hold times or paths, and without ``roots``."""
    if isinstance(report, dict):
        return {k: normalized(v, roots) for k, v in report.items() if k not in VOLATILE}
    if isinstance(report, list):
        return [normalized(item, roots) for item in report]
    if isinstance(report, str):
        for root in roots:
            report = report.replace(root, "<root>")
    return report


def report_of(bout: Bout) -> Any:
    text = (bout.repo / ".bugbout" / "report.json").read_text()
    return normalized(json.loads(text), (str(bout.root),))


def baseline(template: Path, root: Path) -> tuple[Any, float]:
    """An uninterrupted run's normalized report, and how long the run took."""
    bout = Bout(template, root)
    started = time.monotonic()
    process = bout.start()
    _, error = process.communicate(timeout=900)
    if process.returncode != 0:
        raise RuntimeError(f"the uninterrupted bout failed: {error.decode()[-2000:]}")
    return report_of(bout), time.monotonic() - started


def run_chaos(
    root: Path, kills: int, seed: int, log: Callable[[str], None] = lambda line: None
) -> Outcome:
    """Kill bouts at ``kills`` random points (``seed``), resuming each until it completes."""
    outcome, chance = Outcome(seed), random.Random(seed)
    template = root / "template"
    build(template)
    expected, span = baseline(template, root / "baseline")
    log(f"uninterrupted bout: {span:.1f} s; kill points: {kills}, seed {seed}")
    while outcome.kills < kills:
        outcome.bouts += 1
        bout = Bout(template, root / f"bout-{outcome.bouts}")
        while True:
            process = bout.start()
            delay = chance.uniform(0.0, span)
            try:
                process.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                outcome.kills += 1
                problems = bout.check()
                log(f"kill {outcome.kills} at {delay:.2f} s: {len(bout.seen)} attempts stored")
                outcome.problems += [f"kill {outcome.kills}: {p}" for p in problems]
                continue
            assert process.stderr is not None
            if process.returncode != 0:
                error = process.stderr.read().decode(errors="replace").strip().splitlines()
                outcome.problems.append(f"bout {outcome.bouts} failed on resume: {error[-1:]}")
                break
            outcome.problems += [f"bout {outcome.bouts}: {p}" for p in bout.check()]
            if report_of(bout) != expected:
                outcome.problems.append(
                    f"bout {outcome.bouts}: its report differs from an uninterrupted run's"
                )
            break
        outcome.agent_runs += sum(bout.runs().values())
        shutil.rmtree(bout.root, ignore_errors=True)
        log(f"bout {outcome.bouts} complete; {len(outcome.problems)} problem(s) so far")
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100, help="kill points (default 100)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: new)")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the bouts here")
    options = parser.parse_args(argv)
    seed = options.seed if options.seed is not None else random.randrange(1 << 32)
    root = options.workdir or Path(tempfile.mkdtemp(prefix="bugbout-chaos-"))
    root.mkdir(parents=True, exist_ok=True)
    outcome = run_chaos(root, options.kills, seed, log=lambda line: print(line, flush=True))
    for problem in outcome.problems:
        print(f"problem: {problem}")
    print(
        f"{outcome.kills} kill points over {outcome.bouts} bouts ({outcome.agent_runs} agent "
        f"runs), seed {seed}: {len(outcome.problems)} problem(s)"
    )
    return 1 if outcome.problems else 0


if __name__ == "__main__":
    sys.exit(main())
