"""The benchmarks' measuring helpers: paired ratios, and CPU read where it is spent."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\n"
"""A child that spends 0.3 s of CPU."""


@pytest.fixture(scope="module")
def timing() -> ModuleType:
    path = Path(__file__).parents[1] / "benchmarks" / "timing.py"
    spec = importlib.util.spec_from_file_location("bench_timing", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_timing"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _needs_cgroup(timing: ModuleType) -> None:
    if timing.cgroup_root() is None:
        pytest.skip("no writable cgroup v2 here: CPU is not measured")


def _confined(*argv: str) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bwrap is not installed")
    base = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    return [*base, "--unshare-pid", "--die-with-parent", *argv]


def test_ratios_are_paired_round_by_round(timing: ModuleType) -> None:
    rounds = [
        {"base": 1.0, "tool": 2.0},
        {"base": 4.0, "tool": 4.0},  # a loaded round: both sides slow
        {"base": 0.5, "tool": 1.5},
    ]
    assert timing.pair_ratios(rounds, "base") == {"tool": [2.0, 1.0, 3.0]}
    assert timing.paired_ratios(rounds, "base") == {"tool": {"min": 1.0, "median": 2.0, "max": 3.0}}
    # the ratio of the medians (2.0 / 1.0) would say 2.0 for another reason entirely
    table = "\n".join(timing.ratio_table(rounds, "base"))
    assert "| tool | 2000 ms | 2.00 1.00 3.00 | 1.00 / 2.00 / 3.00 |" in table


def test_cpu_inside_a_pid_namespace_is_counted(timing: ModuleType) -> None:
    """RUSAGE_CHILDREN misses what a pid namespace's processes spend: the cgroup does not."""
    _needs_cgroup(timing)
    argv = _confined(sys.executable, "-c", BURN)
    finished = timing.run_process(argv)
    assert finished.sample.cpu >= 0.25
    sample, _ = timing.measure(lambda: subprocess.run(argv, check=True))
    assert sample.cpu >= 0.25


def test_a_measured_process_runs_in_a_session_and_cgroup_of_its_own(
    timing: ModuleType,
) -> None:
    _needs_cgroup(timing)
    probe = "import os\nprint(os.getsid(0) == os.getpid())\nprint(open('/proc/self/cgroup').read())"
    finished = timing.run_process([sys.executable, "-c", probe], keep_output=True)
    leader, cgroup = finished.stdout.split("\n", 1)
    assert leader == "True"
    (own,) = [line.rsplit("/", 1)[-1] for line in cgroup.splitlines() if "bugbout-bench-" in line]
    assert not (timing.cgroup_root() / own).exists()  # removed after


def test_what_outlives_the_measured_process_is_ended(timing: ModuleType) -> None:
    _needs_cgroup(timing)
    script = "sleep 30 >/dev/null 2>&1 & echo $!"
    finished = timing.run_process(["sh", "-c", script], keep_output=True)
    straggler = int(finished.stdout)
    assert not Path(f"/proc/{straggler}").exists() or "Z" in _state(straggler)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except OSError:
        return "Z"


def test_a_failed_process_is_one_line_with_its_stderr(timing: ModuleType) -> None:
    with pytest.raises(RuntimeError, match=r"exited 3: oops"):
        timing.run_process(["sh", "-c", "echo oops >&2; exit 3"])
