"""A test run in the ``interpreter`` environment on bugbout's own Python: the command the
builder gives (bugbout's own pytest plugins left out) against the same command with every
installed plugin loaded, timed back to back in each round, on a small project (one module,
``--tests`` tests). Every ground truth and cross-examination run of a bout on this
environment pays the difference, so it is the measure of the demo's and the suite's bouts.

It is a report, not a test: it prints paired ratios (min / median / max over the rounds)
and writes ``.bench/interpreter.json`` and ``.bench/interpreter.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

from timing import measure, paired_ratios, ratio_table, rotations

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Command, EnvironmentRequest
from bugbout.plugins.environments.interpreter import InterpreterBuilder

OUTPUT = Path(__file__).resolve().parent.parent / ".bench"
BASELINE = "every installed plugin"


def project(root: Path, tests: int) -> Path:
    """A project with one module and ``tests`` tests of it."""
    (root / "src" / "small").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "small"\nversion = "1.0"\n')
    (root / "src" / "small" / "__init__.py").write_text("def double(x):\n    return 2 * x\n")
    (root / "tests" / "test_small.py").write_text(
        "import small\n\n"
        + "".join(
            f"def test_{n}():\n    assert small.double({n}) == {2 * n}\n\n" for n in range(tests)
        )
    )
    return root


def run(command: Command) -> None:
    result = subprocess.run(
        command.argv, cwd=command.cwd, env={**os.environ, **command.env},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"the test run failed: {result.stdout[-2000:]}{result.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--tests", type=int, default=20, help="tests in the project")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-interpreter-") as scratch:
        tree = project(Path(scratch) / "small", args.tests)
        request = EnvironmentRequest(
            project=ProjectSettings(source="src/small"), tree=tree, home=Path(scratch) / "home"
        )
        environment = InterpreterBuilder().build(request)
        chosen = environment.command(["-p", "no:cacheprovider", "-q", "tests"], tree, [])
        blocked = len(environment.blocked_plugins) * 2
        every = chosen.model_copy(update={"argv": chosen.argv[:3] + chosen.argv[3 + blocked :]})
        commands = {"bugbout's command": chosen, BASELINE: every}
        rounds = [
            {name: measure(lambda name=name: run(commands[name]))[0].wall for name in order}
            for order in rotations(list(commands), args.repeat)
        ]
    left_out = ", ".join(environment.blocked_plugins) or "none"
    table = "\n".join([f"plugins left out: {left_out}", "", *ratio_table(rounds, BASELINE)])
    print(table)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "interpreter.md").write_text(table + "\n")
    ratios = paired_ratios(rounds, BASELINE)
    result = {"blocked": list(environment.blocked_plugins), "rounds": rounds, "ratios": ratios}
    (args.output / "interpreter.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
