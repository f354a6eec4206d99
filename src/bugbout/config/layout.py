"""Finding a repository's package and tests, and writing its ``bugbout.yaml``."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.errors import ConfigError

CONFIG_NAME = "bugbout.yaml"
NOT_PACKAGES = {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks",
                "scripts", "tools", "build", "dist", "site-packages"}  # fmt: skip
TEST_DIRECTORIES = ("tests", "test", "testing")
_PLAIN = re.compile(r"(?!(?:true|false|yes|no|on|off|null|y|n)$)[a-z_][\w./-]*", re.IGNORECASE)
"""A path YAML reads as the same string without quotes (not a number, boolean or null)."""


def find_config(start: Path) -> Path:
    """The ``bugbout.yaml`` in ``start`` or the nearest parent directory."""
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no {CONFIG_NAME} in {start} or its parents; run `bugbout init` at your "
        "repository's root first"
    )


def find_packages(files: Iterable[str]) -> list[str]:
    """Every top-level package among a repository's ``files`` (a directory holding
    ``__init__.py`` whose parent does not), outside tests, docs, examples and hidden
    directories; those under ``src/`` first."""
    packages = {path[: -len("/__init__.py")] for path in files if path.endswith("/__init__.py")}
    return sorted(
        (
            package
            for package in packages
            if package.rpartition("/")[0] not in packages
            and not any(p in NOT_PACKAGES or p.startswith(".") for p in package.split("/"))
        ),
        key=lambda package: (not package.startswith("src/"), package),
    )


def detect_tests(root: Path, source: str) -> str:
    """The tests directory: ``tests``, ``test`` or ``testing``, else the package's own."""
    for name in TEST_DIRECTORIES:
        if (root / name).is_dir():
            return name
    for name in TEST_DIRECTORIES:
        if (root / source / name).is_dir():
            return f"{source}/{name}"
    return "tests"


def project_name(root: Path) -> str | None:
    """The project's name in ``pyproject.toml``, as a package would spell it."""
    import tomllib

    try:
        data = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    name = data.get("project", {}).get("name")
    return name.replace("-", "_").lower() if isinstance(name, str) else None


def _scalar(path: str) -> str:
    """``path`` as a YAML scalar: as it is when plain, else quoted (JSON is YAML)."""
    return path if _PLAIN.fullmatch(path) else json.dumps(path)


@dataclass(frozen=True)
class FoundAgent:
    """A packaged agent as found on this machine: ready to race, or why not."""

    name: str
    agent: str
    problem: str = ""
    """Empty when its program is installed and its key is set."""


def render_contestants(agents: Sequence[FoundAgent]) -> str:
    """The ``contestants:`` section: the agents ready here, and the others commented out
    with what they lack."""
    if not agents:
        return ""
    ready = [agent for agent in agents if not agent.problem]
    lines = [
        "# The agents that race: those ready on this machine; the others need what they say.",
        "contestants:" if ready else "# contestants:",
    ]
    for agent in agents:
        mark = "" if not agent.problem else "# "
        note = f"   # {agent.problem}" if agent.problem else ""
        lines.append(f"  {mark}{agent.name}: {{agent: {agent.agent}}}{note}")
    if not ready:
        lines.append(
            '#   mine: {agent: command, command: [my-agent, "{prompt}"]}   # any program on '
            "PATH; the sandbox hides this repository and your HOME, so not a script in them"
        )
    return "\n".join(lines) + "\n"


def render_config(
    source: Sequence[str],
    tests: str,
    agents: Sequence[FoundAgent] = (),
    advice: str = "",
    pytest_args: Sequence[str] = (),
    *,
    past: Sequence[str] = (),
) -> str:
    """A commented ``bugbout.yaml`` for a repository with this layout: its package
    directories, where they were before (``past``), its tests (and the agents found on
    this machine, advice for a large suite, and the options of the project's ``addopts``
    that leave tests out)."""
    paths = [*source, *past]
    sources = _scalar(paths[0]) if len(paths) == 1 else f"[{', '.join(map(_scalar, paths))}]"
    what = "the package directory" if len(source) == 1 else "the package directories"
    if past:
        what += ", then where it was before" if len(source) == 1 else ", then where they were"
    wrapped = textwrap.wrap(f"Note: {advice}.", 88) if advice else []
    note = "".join(f"# {line}\n" for line in wrapped)
    arguments = (
        f"  pytest-args: {json.dumps(list(pytest_args))}  # from your addopts: they leave "
        "tests out (the rest of addopts is ignored)"
        if pytest_args
        else "  # pytest-args: []       # your own addopts are ignored; put what the tests "
        "need here"
    )
    return (
        note
        + f"""\
# bugbout's settings for this repository. Every key below `project.source` is optional;
# command-line overrides win over this file, e.g. `bugbout tasks miner.limit=5`.
defaults:
  - base                  # bugbout's packaged defaults; keep this first
  # - override environment: interpreter   # run tests with an existing Python instead of uv
  - _self_

project:
  source: {sources}        # {what}
  tests: {_scalar(tests)}          # the test directory
  # python: "3.9"         # pin the tests' Python; by default the one declared at the fix
  # test-dependencies: [pytest]
{arguments}
  # env: {{}}               # extra environment variables for the tests
  # github: owner/name    # where issues live, when origin is not on GitHub

miner:                    # the git-history miner's options: which fixes become tasks
  limit: 20               # the most tasks to keep, newest first
  max-source-files: 2     # a fix touching more source files is too broad to be one bug
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
