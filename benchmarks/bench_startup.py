"""Startup: what a process pays to import bugbout, a plugin module, or to answer
``bugbout --help``, ``bugbout plugins`` or a shell completion, each against a bare
``python -c pass`` started in the same round, and the plugin imports also against a
pydantic model with one ``Field``, its validator deferred as bugbout's are: the floor a
plugin's options model sets (defining any model with a field loads pydantic's fields and
``annotated_types``, which a bare ``from pydantic import BaseModel`` does not).

It is a report, not a test: it prints a table of paired ratios (min / median / max over
the rounds) and writes ``.bench/startup.json`` and ``.bench/startup.md`` so two commits
can be compared. The absolute target is an import of bugbout or of a plugin module under
0.15 s: measured both as a process over the bare interpreter (which also pays for tearing
down what was imported) and as the import statement alone, timed inside the process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from timing import paired_ratios, ratio_table, rotations, run_process

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parent / ".bench"
MEASURES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import pydantic + BaseModel": [
        sys.executable,
        "-c",
        "import pydantic; from pydantic import BaseModel",
    ],
    "a pydantic model with a Field": [
        sys.executable,
        "-c",
        "from pydantic import BaseModel, ConfigDict, Field\n"
        "class Options(BaseModel):\n"
        "    model_config = ConfigDict(defer_build=True)\n"
        "    x: int = Field(0)",
    ],
    "import bugbout": [sys.executable, "-c", "import bugbout"],
    "import a judge plugin": [sys.executable, "-c", "import bugbout.plugins.judges.strict"],
    "import every built-in plugin module": [
        sys.executable,
        "-c",
        "import importlib; from bugbout.core.contract.manager import BUILTIN_PLUGINS; "
        "[importlib.import_module(name) for name in BUILTIN_PLUGINS]",
    ],
    "import bugbout.core.store.records": [
        sys.executable,
        "-c",
        "import bugbout.core.store.records",
    ],
    "import the git-history miner": [
        sys.executable,
        "-c",
        "import bugbout.plugins.miners.git_history",
    ],
    "bugbout --help": [sys.executable, "-m", "bugbout", "--help"],
    "bugbout plugins": [sys.executable, "-m", "bugbout", "plugins"],
    "bugbout __complete run miner.": [
        sys.executable,
        "-m",
        "bugbout",
        "__complete",
        "run",
        "miner.",
    ],
}
BASELINE = "python -c pass"
FLOOR = "a pydantic model with a Field"
ON_THE_FLOOR = ("import a judge plugin", "import every built-in plugin module")
"""What pays for pydantic and little more: their ratios to :data:`FLOOR` should be near 1."""


def _compile_bugbout() -> None:
    """Write bugbout's bytecode, as installing a package does: where
    ``PYTHONDONTWRITEBYTECODE`` is set (CI machines), every measured import would
    otherwise compile bugbout's sources again, and pydantic's (installed) would not."""
    import compileall

    import bugbout

    compileall.compile_dir(Path(bugbout.__file__).parent, quiet=1)


def _time(argv: list[str]) -> tuple[float, float]:
    """The wall time and the CPU time (user and system, of its whole tree) of one process
    running ``argv``: the CPU time is what a loaded machine disturbs least."""
    sample = run_process(argv).sample
    return sample.wall, sample.cpu if sample.cpu is not None else float("nan")


IN_PROCESS = {
    "import a judge plugin": "import bugbout.plugins.judges.strict",
    "import bugbout": "import bugbout",
    FLOOR: MEASURES[FLOOR][-1],
}
"""What the import statement itself takes, timed inside the process: the interpreter's
start and exit are left out."""


def _in_process(code: str) -> float:
    """Seconds ``code`` takes to run in a fresh interpreter, timed around it."""
    timer = f"import time\nt = time.perf_counter()\nexec({code!r})\nprint(time.perf_counter() - t)"
    result = subprocess.run(
        [sys.executable, "-c", timer], check=True, capture_output=True, text=True
    )
    return float(result.stdout)


def _spread(ratio: dict[str, float]) -> str:
    return f"{ratio['min']:.2f} / {ratio['median']:.2f} / {ratio['max']:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    _compile_bugbout()
    rounds: list[dict[str, float]] = []
    cpu_rounds: list[dict[str, float]] = []
    inside: dict[str, list[float]] = {name: [] for name in IN_PROCESS}
    for order in rotations(list(MEASURES), args.repeat):
        timed = {name: _time(MEASURES[name]) for name in order}
        rounds.append({name: wall for name, (wall, _) in timed.items()})
        cpu_rounds.append({name: cpu for name, (_, cpu) in timed.items()})
        for name in (name for name in order if name in IN_PROCESS):
            inside[name].append(_in_process(IN_PROCESS[name]))
    ratios = paired_ratios(rounds, BASELINE)
    medians = {name: statistics.median(r[name] for r in rounds) for name in MEASURES}
    lines = ratio_table(rounds, BASELINE)
    on_the_floor = (FLOOR, *ON_THE_FLOOR)
    floor = paired_ratios([{k: r[k] for k in on_the_floor} for r in rounds], FLOOR)
    floor_cpu = paired_ratios([{k: r[k] for k in on_the_floor} for r in cpu_rounds], FLOOR)
    lines += [
        "",
        f"| measure | ratio to `{FLOOR}`: wall time | CPU time (min / median / max) |",
        "|---|---|---|",
    ]
    for name in ON_THE_FLOOR:
        lines.append(f"| {name} | {_spread(floor[name])} | {_spread(floor_cpu[name])} |")
    plugin = medians["import a judge plugin"] - medians[BASELINE]
    lines.append("")
    lines.append(
        f"a plugin module's own import: {plugin * 1000:.0f} ms over the bare interpreter, "
        f"{(medians['import a judge plugin'] - medians[FLOOR]) * 1000:.0f} ms over "
        f"`{FLOOR}`, which alone is "
        f"{(medians[FLOOR] - medians[BASELINE]) * 1000:.0f} ms over the interpreter "
        "(target: under 150 ms over the interpreter)"
    )
    lines += ["", "| the import alone, timed in the process | min / median / max |", "|---|---|"]
    for name, seconds in inside.items():
        spread = " / ".join(
            f"{s * 1000:.0f}" for s in (min(seconds), statistics.median(seconds), max(seconds))
        )
        lines.append(f"| {name} | {spread} ms |")
    table = "\n".join(lines)
    print(table)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "startup.md").write_text(table + "\n")
    result = {
        "rounds": rounds,
        "ratios": ratios,
        "ratios_to_floor": floor,
        "cpu_ratios_to_floor": floor_cpu,
        "cpu_rounds": cpu_rounds,
        "medians_s": medians,
        "in_process_s": inside,
        "baseline": BASELINE,
        "floor": FLOOR,
    }
    (args.output / "startup.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
