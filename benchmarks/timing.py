"""What the benchmarks share: timing an action or a whole process honestly, summarising
repeated samples, and pairing measures in rotated order so a noisy moment on a shared
machine moves both sides of a ratio.

Two traps this module exists to avoid:

- CPU time spent inside a pid namespace (``bwrap --unshare-pid``, podman) never reaches
  the caller's ``RUSAGE_CHILDREN``: the namespace's init reaps it. CPU is read instead
  from a transient cgroup v2 made for the measured process tree (:class:`CpuGroup`),
  whose accounting sees every process in it, whatever namespace it runs in.
- The kernel's autogroup scheduling gives each session its own share of the CPU, so a
  process started in a new session (as bugbout's confined runs are) beats one started in
  the benchmark's own session on a loaded machine. :func:`run_process` starts every
  measured process in a new session, so both sides of a pair are alike.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import signal
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_GROUPS = itertools.count()


@dataclass
class Sample:
    wall: float
    cpu: float | None
    """user+sys CPU seconds of everything measured (the benchmark's process too, for an
    action run in it), read from its cgroup; ``None`` when no cgroup could be made."""


def cgroup_root() -> Path | None:
    """Where this process's cgroup v2 is (a child can be made there), or ``None``."""
    mount = next(
        (line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()
         if line.split()[2] == "cgroup2"),
        None,
    )  # fmt: skip
    if mount is None:
        return None
    own = next(
        (line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines()
         if line.startswith("0::")),
        "/",
    )  # fmt: skip
    where = Path(mount) / own.lstrip("/")
    return where if os.access(where, os.W_OK) else None


class CpuGroup:
    """A transient cgroup v2 for one measured process tree: its CPU time, every process of
    the tree counted (pid namespaces too); removed on close, killing what is left in it."""

    def __init__(self, root: Path) -> None:
        self.path = root / f"bugbout-bench-{os.getpid()}-{next(_GROUPS)}"
        self.path.mkdir()

    @classmethod
    @contextlib.contextmanager
    def made(cls) -> Iterator[CpuGroup | None]:
        """A new group, or ``None`` where this machine gives none (no writable cgroup v2)."""
        root = cgroup_root()
        if root is None:
            yield None
            return
        try:
            group = cls(root)
        except OSError:
            yield None
            return
        try:
            yield group
        finally:
            group.close()

    def enter(self, pid: int = 0) -> None:
        """Move process ``pid`` (0: the caller) into the group."""
        (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def cpu(self) -> float:
        """The group's user+sys CPU seconds so far."""
        for line in (self.path / "cpu.stat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec":
                return int(value) / 1e6
        raise RuntimeError(f"{self.path}/cpu.stat has no usage_usec")

    def close(self) -> None:
        """Kill what is left in the group, then remove it."""
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # still populated: a straggler of the measured tree
                self._kill()
                time.sleep(0.01)
        raise RuntimeError(f"cannot remove {self.path}: processes stay in it")

    def _kill(self) -> None:
        kill = self.path / "cgroup.kill"
        if kill.exists():
            kill.write_text("1\n")
            return
        for pid in (self.path / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


@dataclass
class Finished:
    """A measured process: its sample, exit status and what it printed (when kept)."""

    sample: Sample
    returncode: int
    stdout: str


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    keep_output: bool = False,
    check: bool = True,
) -> Finished:
    """Run ``argv`` as a whole process, in a new session and a cgroup of its own, and time
    it: wall time, and the CPU of its whole tree. Its stderr is kept for an error."""
    with CpuGroup.made() as group:
        started = time.perf_counter()
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdout=subprocess.PIPE if keep_output else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            start_new_session=True,
            preexec_fn=group.enter if group else None,
        )
        wall = time.perf_counter() - started
        cpu = group.cpu() if group else None
    if check and done.returncode:
        tail = (done.stderr or "").strip().splitlines()[-5:]
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {' | '.join(tail)}")
    return Finished(Sample(wall, cpu), done.returncode, done.stdout or "")


def measure(action: Callable[[], Any], *, sync: bool = False) -> tuple[Sample, Any]:
    """Run ``action`` in this process and time it; ``sync`` flushes earlier writes first.
    Its CPU is read from a cgroup this process joins for the time of the action, so the
    processes it starts count wherever they run (a pid namespace included)."""
    if sync:
        os.sync()
    gc.collect()
    with CpuGroup.made() as group:
        if group:
            group.enter()
        try:
            started = time.perf_counter()
            result = action()
            wall = time.perf_counter() - started
            cpu = group.cpu() if group else None
        finally:
            if group:  # back where it was, so the group can go
                (group.path.parent / "cgroup.procs").write_text(f"{os.getpid()}\n")
    return Sample(wall, cpu), result


def spread(values: Sequence[float], digits: int = 3) -> dict[str, float]:
    """``values``' min, median and max."""
    return {
        "min": round(min(values), digits),
        "median": round(statistics.median(values), digits),
        "max": round(max(values), digits),
    }


def rotations(names: list[str], repeat: int) -> Iterator[list[str]]:
    """``repeat`` orders of ``names``, each starting one further along."""
    for k in range(repeat):
        shift = k % len(names)
        yield names[shift:] + names[:shift]


def pair_ratios(rounds: list[dict[str, float]], baseline: str) -> dict[str, list[float]]:
    """Each measure's ratio to ``baseline`` in each round (both timed back to back)."""
    measures = [name for name in rounds[0] if name != baseline]
    return {
        name: [round(one[name] / one[baseline], 3) for one in rounds if one[baseline] > 0]
        for name in measures
    }


def paired_ratios(rounds: list[dict[str, float]], baseline: str) -> dict[str, dict[str, float]]:
    """Each measure's :func:`pair_ratios` summarised as min, median and max over the
    rounds: a noisy moment moves both sides of a pair, so the ratio stays honest on a
    shared machine (a ratio of medians would pair a side's quiet round with the other's
    loaded one)."""
    return {name: spread(paired) for name, paired in pair_ratios(rounds, baseline).items()}


def ratio_table(rounds: list[dict[str, float]], baseline: str, unit: str = "ms") -> list[str]:
    """A Markdown table of each measure's median, its ratio to ``baseline`` in each pair,
    and those ratios' min / median / max; the baseline first."""
    scale = 1000 if unit == "ms" else 1
    medians = {name: statistics.median(one[name] for one in rounds) for name in rounds[0]}
    lines = [
        f"| measure | median | ratio to `{baseline}` per pair | min / median / max |",
        "|---|---|---|---|",
        f"| {baseline} | {medians[baseline] * scale:.{0 if scale > 1 else 2}f} {unit} | 1 | 1 |",
    ]
    pairs = pair_ratios(rounds, baseline)
    for name, ratio in paired_ratios(rounds, baseline).items():
        lines.append(
            f"| {name} | {medians[name] * scale:.{0 if scale > 1 else 2}f} {unit} | "
            f"{' '.join(f'{r:.2f}' for r in pairs[name])} | "
            f"{ratio['min']:.2f} / {ratio['median']:.2f} / {ratio['max']:.2f} |"
        )
    return lines


def kind_tables(
    kinds: dict[str, list[dict[str, float]]], baseline: str
) -> tuple[list[str], dict[str, Any]]:
    """For each kind of time (``wall``, ``cpu``): its :func:`ratio_table` in seconds, or a
    line saying it was not measured; and, for the JSON result, each measure's ratios per
    pair with their min / median / max."""
    lines: list[str] = []
    found: dict[str, Any] = {}
    for kind, rounds in kinds.items():
        if not rounds:
            lines += [f"{kind}: not measured (no writable cgroup v2)", ""]
            continue
        pairs = pair_ratios(rounds, baseline)
        found[kind] = {
            name: {"per_pair": pairs[name], **ratio}
            for name, ratio in paired_ratios(rounds, baseline).items()
        }
        lines += [f"{kind} time:", "", *ratio_table(rounds, baseline, unit="s"), ""]
    return lines, found


def write_result(output: Path, name: str, result: dict[str, Any], table: str) -> None:
    """Print ``table``; write it as ``NAME.md`` and ``result`` as ``NAME.json`` in ``output``."""
    print(table)
    output.mkdir(parents=True, exist_ok=True)
    (output / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (output / f"{name}.md").write_text(table + "\n")
