"""What ``bugbout init`` finds on this machine: the coding agents installed, whether the
key each needs is set, and how big the test suite is, so the ``bugbout.yaml`` it writes
races them as they are and keeps a bout short."""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

from bugbout.core.agents import VENDOR_KEYS
from bugbout.core.errors import BugboutError
from bugbout.core.layout import FoundAgent
from bugbout.core.manager import Plugins
from bugbout.core.testmodules import defined_tests, is_test_module

LARGE_SUITE = 2_000
"""Tests from which every suite-wide verdict run is slow enough to dominate a bout."""


def find_agents(plugins: Plugins) -> list[FoundAgent]:
    """Each packaged contestant, with its program and key looked up here; named
    ``my-<agent>``, since a contestant defined in ``bugbout.yaml`` cannot take a packaged
    option's name."""
    found = []
    folder = resources.files("bugbout.conf") / "contestant"
    for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if not item.name.endswith(".yaml"):
            continue
        name = item.name[: -len(".yaml")]
        try:
            agent = plugins.create("agent", name, {"name": name})
        except BugboutError as exc:  # it needs a setting no default gives (a model)
            found.append(FoundAgent(name=f"my-{name}", agent=name, problem=str(exc).split(":")[0]))
            continue
        program = agent.executable or ""
        keys = VENDOR_KEYS.get(agent.vendor or "", ())
        if not shutil.which(program):
            problem = f"`{program}` is not installed"
        elif not any(os.environ.get(key) for key in keys):
            problem = f"{' or '.join(keys)} is not set"
        else:
            problem = ""
        found.append(FoundAgent(name=f"my-{name}", agent=name, problem=problem))
    return found


def count_tests(tests: Path) -> int:
    """The tests the modules under ``tests`` define, read without running anything:
    parametrize cases counted when their list is literal, once otherwise (so a lower bound)."""
    total = 0
    for folder, subfolders, files in os.walk(tests):
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        for name in files:
            if not is_test_module(name):
                continue
            try:
                source = (Path(folder) / name).read_bytes()
            except OSError:
                continue
            total += sum(cases or 1 for cases in defined_tests(source).values())
    return total


def suite_advice(count: int) -> str:
    """What keeps a bout short on a suite of ``count`` tests; empty for a small suite."""
    if count < LARGE_SUITE:
        return ""
    return (
        f"the tests define at least {count:,} tests: each suite-wide verdict run costs as "
        "much as your whole suite, so keep a first bout short with `tasks.limit: 3` and "
        "`verdicts.run-suite: false` (no repository suite against every patch), and raise "
        "`tasks.timeout` if one run of the suite takes longer than 600 s"
    )
