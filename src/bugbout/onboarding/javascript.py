"""What ``bugbout init`` finds in a JavaScript or TypeScript project, asked of the
``javascript`` test runner through the plugin registry (its source as the package's
layout had it over its history, its tests' folder, its test runner and its lockfile), and
the ``bugbout.yaml`` that runs it with that runner and the ``npm`` environment."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bugbout.config.layout import FoundAgent, find_packages, render_contestants
from bugbout.core.contract.errors import BugboutError, ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.types import TestRunnerPlugin
from bugbout.core.plumbing.trees.git import Git

MANIFEST = "package.json"
PYTHON_PROJECT = ("pyproject.toml", "setup.py", "setup.cfg")
RUNNER = "javascript"
"""The test runner that describes a JavaScript project (each tree's own runner)."""
SAMPLES = 12
"""Commits of the history, evenly spaced, whose layout adds to the source found at its head."""


def is_javascript(root: Path, listing: Sequence[str]) -> bool:
    """Whether the repository at ``root`` holding ``listing`` is a JavaScript or
    TypeScript project: a ``package.json`` at its root and no Python package."""
    if not (root / MANIFEST).is_file():
        return False
    return not find_packages(listing) and not any((root / n).is_file() for n in PYTHON_PROJECT)


def find_layout(plugins: Plugins, git: Git, root: Path, listing: Sequence[str]) -> Any:
    """The layout of the JavaScript project at ``root`` (``listing``: its files), as the
    ``javascript`` runner finds it: its ``source``, ``tests``, ``runner``, ``lockfile``,
    ``count`` of tests and source ``suffixes``."""
    runner = plugins.create(TestRunnerPlugin, RUNNER)
    finder = getattr(runner, "find_project", None)
    if finder is None:
        raise ConfigError(
            f"the {RUNNER!r} test runner installed cannot describe a project; reinstall "
            "bugbout, or write bugbout.yaml by hand (docs/javascript.md)"
        )
    return finder(root, listing, _past(git))


def _past(git: Git) -> Iterator[tuple[list[str], Callable[[str], bytes | None]]]:
    """The files of commits spread over the history, each with a reader of them."""
    try:
        commits = git.run("rev-list", "--first-parent", git.default_ref()).split()
    except BugboutError:  # no commit yet
        return
    step = max(1, len(commits) // SAMPLES)
    for commit in commits[step::step]:
        paths = git.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
        yield paths.split("\0"), _reader(git, commit)


def _reader(git: Git, commit: str) -> Callable[[str], bytes | None]:
    """A reader of the files of ``commit``, through the repository's open ``cat-file``
    (a ``git show`` per file was a process each)."""

    def read(name: str) -> bytes | None:
        found = git.blob(commit, name)
        return found[1] if found else None

    return read


def render(layout: Any, agents: Sequence[FoundAgent], advice: str) -> str:
    """A commented ``bugbout.yaml`` for a JavaScript or TypeScript project."""
    note = "".join(f"# {line}\n" for line in textwrap.wrap(f"Note: {advice}.", 88) if advice)
    lockfile = f"{layout.lockfile}'s lockfile" if layout.lockfile else "no lockfile"
    return (
        note
        + f"""\
# bugbout's settings for this repository. Every key below `project.source` is optional;
# command-line overrides win over this file, e.g. `bugbout tasks miner.limit=5`.
defaults:
  - base                  # bugbout's packaged defaults; keep this first
  - override environment: npm          # node_modules as of each fix (now: {lockfile})
  - override test-runner: javascript   # each era's package.json's (now: {layout.runner})
  - _self_

project:
  source: {json.dumps(list(layout.source))}   # the package's source, now and before
  tests: {json.dumps(layout.tests)}          # test files elsewhere are found by name
  # env: {{}}               # extra environment variables for the tests
  # github: owner/name    # where issues live, when origin is not on GitHub

miner:                    # the git-history miner's options: which fixes become tasks
  limit: 20               # the most tasks to keep, newest first
  max-source-files: 2     # a fix touching more source files is too broad to be one bug
  source-suffixes: {json.dumps(list(layout.suffixes))}
  # since: "2023-01-01"   # only fixes after this date
  # ref: main             # the branch to walk; the default branch when unset

# tasks:                  # how each task's ground truth is computed
#   reruns: 2             # runs of each tree, before and after the fix; flaky tests set aside
#   timeout: 600          # seconds per test run

# issue-sources:          # asked in order: github, file, commit; `github: null` removes one
#   file: {{path: issues.jsonl}}   # an export of your issues, for offline use

# reporters:              # terminal, markdown, json, html; `markdown: null` removes one
#   html: {{title: Our agents}}
"""
        + (f"\n{render_contestants(agents)}" if agents else "")
    )
