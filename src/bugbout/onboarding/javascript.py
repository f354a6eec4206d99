"""What ``bugbout init`` finds in a JavaScript or TypeScript project: its source as the
package's layout had it over its history, its tests' folder, its test runner and its
lockfile, and the ``bugbout.yaml`` that runs it with the ``javascript`` runner and the
``npm`` environment."""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bugbout.config.layout import FoundAgent, find_packages, render_contestants
from bugbout.core.contract.errors import BugboutError
from bugbout.core.plumbing.git import Git
from bugbout.plugins.environments.npm import LOCKFILES
from bugbout.plugins.test_runners.javascript import auto, files, titles

MANIFEST = "package.json"
PYTHON_PROJECT = ("pyproject.toml", "setup.py", "setup.cfg")
SAMPLES = 12
"""Commits of the history, evenly spaced, whose layout adds to the source found at its head."""


@dataclass(frozen=True)
class JavaScriptLayout:
    """A JavaScript or TypeScript project as ``init`` found it."""

    source: tuple[str, ...]
    tests: str
    runner: str
    """The runner its head's ``package.json`` uses (``vitest``, ``jest``, ...)."""
    lockfile: str
    """The client its head's lockfile is for (``npm``, ``pnpm``, ``yarn``), or empty."""
    count: int
    """The tests its test files define, ``.each`` tables counted (a lower bound)."""


def is_javascript(root: Path, listing: Sequence[str]) -> bool:
    """Whether the repository at ``root`` holding ``listing`` is a JavaScript or
    TypeScript project: a ``package.json`` at its root and no Python package."""
    if not (root / MANIFEST).is_file():
        return False
    return not find_packages(listing) and not any((root / n).is_file() for n in PYTHON_PROJECT)


def find_layout(git: Git, root: Path, listing: Sequence[str]) -> JavaScriptLayout:
    """The layout of the JavaScript project at ``root`` (``listing``: its files)."""
    tests = [path for path in listing if files.is_test_file(path)]
    return JavaScriptLayout(
        source=history_source(git, root, listing),
        tests=folder_of_tests(tests),
        runner=auto.chosen(root / MANIFEST).name,
        lockfile=next((client for name, client in LOCKFILES if (root / name).is_file()), ""),
        count=sum(cases or 1 for path in tests for cases in _defined(root / path).values()),
    )


def _defined(path: Path) -> dict[str, int | None]:
    try:
        return titles.defined_tests(str(path), path.read_bytes())
    except OSError:
        return {}


def history_source(git: Git, root: Path, listing: Sequence[str]) -> tuple[str, ...]:
    """The package's source at the head, then where the package's layout put it at
    commits spread over the history (``index`` before ``src/`` was), so fixes of an
    earlier layout are mined too."""
    found = list(files.source_roots(listing, lambda name: _read(root / name)))
    try:
        commits = git.run("rev-list", "--first-parent", git.default_ref()).split()
    except BugboutError:  # no commit yet
        return tuple(found)
    step = max(1, len(commits) // SAMPLES)
    for commit in commits[step::step]:
        paths = git.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
        read = _reader(git, commit)
        found.extend(files.source_roots(paths.split("\0"), read))
    return tuple(dict.fromkeys(found))


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _reader(git: Git, commit: str) -> Callable[[str], bytes | None]:
    """A reader of the files of ``commit``."""

    def read(name: str) -> bytes | None:
        try:
            return git.run("show", f"{commit}:{name}").encode()
        except BugboutError:
            return None

    return read


def folder_of_tests(tests: Sequence[str]) -> str:
    """The folder named like a tests' folder (``test``, ``tests``, ``__tests__``) that
    holds most of the test files ``tests``; ``test`` when none does (tests beside the
    source)."""
    found: Counter[str] = Counter()
    for path in tests:
        parts = PurePosixPath(path).parts[:-1]
        for index, part in enumerate(parts):
            if part in files.TEST_FOLDERS:
                found["/".join(parts[: index + 1])] += 1
                break
    return found.most_common(1)[0][0] if found else "test"


def render(layout: JavaScriptLayout, agents: Sequence[FoundAgent], advice: str) -> str:
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
  source-suffixes: {json.dumps(list(files.SOURCE_SUFFIXES))}
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
