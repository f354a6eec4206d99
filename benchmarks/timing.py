"""What the benchmarks share: timing one action (wall and CPU time, the process's and its
children's), summarising repeated samples, and interleaving the measures in rotated order
so a noisy moment on a shared machine does not fall on one measure only."""

from __future__ import annotations

import gc
import os
import resource
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Sample:
    wall: float
    cpu_self: float  # this process's user+sys
    cpu_children: float  # waited-for children's user+sys (git, tar, cp, pytest)


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def measure(action: Callable[[], Any], *, sync: bool = False) -> tuple[Sample, Any]:
    """Run ``action`` once and time it; ``sync`` flushes earlier writes first."""
    if sync:
        os.sync()
    gc.collect()
    self0, kids0 = _cpu()
    started = time.perf_counter()
    result = action()
    wall = time.perf_counter() - started
    self1, kids1 = _cpu()
    return Sample(wall, self1 - self0, kids1 - kids0), result


def summary(samples: list[Sample], *, children: str = "children") -> dict[str, Any]:
    """Median, min and max wall time and median CPU times; the children's CPU time is
    reported as ``median_cpu_<children>_s``."""
    walls = [s.wall for s in samples]
    return {
        "runs_s": [round(w, 4) for w in walls],
        "median_s": round(statistics.median(walls), 4),
        "min_s": round(min(walls), 4),
        "max_s": round(max(walls), 4),
        "median_cpu_python_s": round(statistics.median(s.cpu_self for s in samples), 4),
        f"median_cpu_{children}_s": round(statistics.median(s.cpu_children for s in samples), 4),
    }


def rotations(names: list[str], repeat: int) -> Iterator[list[str]]:
    """``repeat`` orders of ``names``, each starting one further along."""
    for k in range(repeat):
        shift = k % len(names)
        yield names[shift:] + names[:shift]


def paired_ratios(rounds: list[dict[str, float]], baseline: str) -> dict[str, dict[str, float]]:
    """Each measure's ratio to ``baseline`` within each round (both timed back to back),
    summarised as min, median and max over the rounds: a noisy moment moves both sides of
    a pair, so the ratio stays honest on a shared machine."""
    measures = [name for name in rounds[0] if name != baseline]
    ratios: dict[str, dict[str, float]] = {}
    for name in measures:
        paired = [one[name] / one[baseline] for one in rounds if one[baseline] > 0]
        ratios[name] = {
            "min": round(min(paired), 3),
            "median": round(statistics.median(paired), 3),
            "max": round(max(paired), 3),
        }
    return ratios


def ratio_table(rounds: list[dict[str, float]], baseline: str) -> list[str]:
    """A Markdown table of each measure's median time and its :func:`paired_ratios` to
    ``baseline``, the baseline first."""
    medians = {name: statistics.median(one[name] for one in rounds) for name in rounds[0]}
    lines = [
        f"| measure | median | ratio to `{baseline}` (min / median / max) |",
        "|---|---|---|",
        f"| {baseline} | {medians[baseline] * 1000:.0f} ms | 1 |",
    ]
    for name, ratio in paired_ratios(rounds, baseline).items():
        lines.append(
            f"| {name} | {medians[name] * 1000:.0f} ms | "
            f"{ratio['min']:.2f} / {ratio['median']:.2f} / {ratio['max']:.2f} |"
        )
    return lines
