"""What ``bugbout init`` finds and writes: the package the history works on and where it
lived before, the coding agents installed here, whether the key each needs is set, and how
big the test suite is, so the ``bugbout.yaml`` it writes mines the whole history, races
the agents as they are and keeps a bout short."""

from __future__ import annotations

import dataclasses
import os
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from bugbout.config.layout import (
    CONFIG_NAME,
    FoundAgent,
    detect_tests,
    find_packages,
    project_name,
    render_config,
)
from bugbout.core.contract.errors import BugboutError, ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.types import AgentPlugin
from bugbout.core.mine.package_history import choose, trace_packages
from bugbout.core.plumbing.project.pytest_options import selecting_options
from bugbout.core.plumbing.project.testmodules import (
    ROOT_TEST_MODULES,
    defined_tests,
    is_test_module,
)
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.race.agents import VENDOR_KEYS
from bugbout.core.store.store import write_atomic
from bugbout.onboarding import javascript

LARGE_SUITE = 2_000
"""Tests from which every suite-wide verdict run is slow enough to dominate a bout."""


def write_config(
    start: Path, plugins: Plugins, source: str | None, tests: str | None, *, force: bool
) -> list[str]:
    """Write a commented ``bugbout.yaml`` at the root of the git repository that holds
    ``start``, for package ``source`` and tests ``tests`` (found when not given); the lines
    that say what it wrote and what to do next."""
    git = Git(start)
    if not git.is_repository():
        raise ConfigError(
            f"{start} is not a git repository: bugbout replays the fixes in a repository's "
            "history; run `bugbout init` in a clone of your project"
        )
    root = Path(git.run("rev-parse", "--show-toplevel").removesuffix("\n"))
    target = root / CONFIG_NAME
    if target.exists() and not force:
        raise ConfigError(f"{target} already exists; pass --force to overwrite it")
    with Git(root) as history:
        listing = history.run("ls-files", "-z").split("\0")
        if javascript.is_javascript(root, listing):
            found = javascript.find_layout(plugins, history, root, listing)
            chosen = dataclasses.replace(
                found,
                source=(source.strip().rstrip("/"),) if source else found.source,
                tests=tests or found.tests,
            )
            return write_javascript(chosen, plugins, target)
        packages, past = find_source(history, root, source)
    if not tests:
        tests = detect_tests(root, packages[0])
        if not (root / tests).exists():  # no tests folder: the test module at the root
            tests = next((name for name in ROOT_TEST_MODULES if (root / name).is_file()), tests)
    agents = find_agents(plugins)
    advice = suite_advice(count_tests(root / tests))
    selection = selecting_options(root)
    write_atomic(target, render_config(packages, tests, agents, advice, selection, past=past))
    ready = [agent.name for agent in agents if not agent.problem]
    before = f", before: {', '.join(past)}" if past else ""
    wrote = (
        f"wrote {target} (source: {', '.join(packages)}{before}, tests: {tests}; contestants: "
        f"{', '.join(ready) or 'none ready here, see the file'}); next: `bugbout doctor`, "
        "then `bugbout run`"
    )
    return [wrote, f"note: {advice}"] if advice else [wrote]


def write_javascript(layout: Any, plugins: Plugins, target: Path) -> list[str]:
    """Write ``target`` for a JavaScript or TypeScript project of ``layout``; what it wrote."""
    agents = find_agents(plugins)
    advice = suite_advice(layout.count)
    write_atomic(target, javascript.render(layout, agents, advice))
    ready = [agent.name for agent in agents if not agent.problem]
    wrote = (
        f"wrote {target} (JavaScript/TypeScript, runner: {layout.runner}, lockfile: "
        f"{layout.lockfile or 'none'}; source: {', '.join(layout.source)}, tests: "
        f"{layout.tests}; contestants: {', '.join(ready) or 'none ready here, see the file'}); "
        "next: `bugbout doctor`, then `bugbout run`"
    )
    return [wrote, f"note: {advice}"] if advice else [wrote]


def find_source(git: Git, root: Path, given: str | None = None) -> tuple[list[str], list[str]]:
    """The package directories (``given``, else the packages the history changes most of
    all those in the repository) and the directories they were renamed from before."""
    if given:
        packages = [given.strip().rstrip("/")]
    else:
        files = git.run("ls-files", "-z").split("\0")
        packages = find_packages(files)
        modules = root_modules(files, project_name(root))
        if not packages and modules:  # the miner takes ``name.py`` as ``name``'s source
            return modules[:1], []
    if not packages:
        raise ConfigError(
            f"found no Python package in {root}; "
            "write project.source in bugbout.yaml yourself (e.g. 'src/mypkg')"
        )
    ref = git.default_ref()
    try:
        git.resolve(ref)
    except BugboutError:  # no commit yet: no history to follow
        return packages[:1], []
    chosen = choose(trace_packages(git, ref, packages), preferred=project_name(root))
    return [p.path for p in chosen], [past for p in chosen for past in p.past]


NOT_MODULES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"}


def root_modules(files: list[str], preferred: str | None) -> list[str]:
    """The Python modules at the root of a repository that may be its code, without
    ``.py`` (packaging and test modules left out), the one named like the project first."""
    names = sorted(
        name[: -len(".py")]
        for name in files
        if name.endswith(".py")
        and "/" not in name
        and name not in NOT_MODULES
        and name not in ROOT_TEST_MODULES
        and not is_test_module(name)
    )
    return sorted(names, key=lambda name: name != preferred)


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
            agent = plugins.create(AgentPlugin, name, {"name": name})
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
        "much as your whole suite, so keep a first bout short with `miner.limit: 3` and "
        "`verdicts.run-suite: false` (no repository suite against every patch), and raise "
        "`tasks.timeout` if one run of the suite takes longer than 600 s"
    )
