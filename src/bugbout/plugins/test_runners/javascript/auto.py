"""The ``javascript`` test runner: Vitest, Jest, Mocha or ``node --test``, whichever the
tree's ``package.json`` uses, so a history whose project changed runners (ufo: Jest,
then Vitest) is run by each era's own.

The runner its ``test`` script names wins (``vitest``, ``jest``, ``mocha``, ``node
--test`` or better-node-test's ``bnt``), then the one among its dependencies, in that
order; without any, ``node --test``. A task's runs before and after its fix read the
same era's ``package.json``, so its ids come from one runner.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from bugbout.plugins.test_runners.javascript import project, runs
from bugbout.plugins.test_runners.javascript.base import JavaScriptRunner
from bugbout.plugins.test_runners.javascript.jest import Jest
from bugbout.plugins.test_runners.javascript.mocha import Mocha
from bugbout.plugins.test_runners.javascript.node_test import NodeTest
from bugbout.plugins.test_runners.javascript.vitest import Vitest
from bugbout.test_runners import (
    Environment,
    NoOptions,
    ProjectSettings,
    TestRun,
    TestRunnerPlugin,
    TestRunRequest,
    hookimpl,
)

NAME = "javascript"
RUNNERS: tuple[tuple[str, type[JavaScriptRunner]], ...] = (
    ("vitest", Vitest), ("jest", Jest), ("mocha", Mocha), ("node --test", NodeTest),
    ("bnt", NodeTest), ("better-node-test", NodeTest),
)  # fmt: skip
"""Each runner by the word its ``test`` script or dependencies name it with, in order."""


def chosen(manifest: Path) -> JavaScriptRunner:
    """The runner the ``package.json`` at ``manifest`` uses."""
    try:
        declared = json.loads(manifest.read_text())
    except (OSError, ValueError):
        declared = {}
    if not isinstance(declared, dict):
        declared = {}
    scripts = declared.get("scripts")
    script = scripts.get("test") if isinstance(scripts, dict) else None
    words = str(script or "").replace("&&", " ").split()
    for word, runner in RUNNERS:
        if word in words or (" " in word and word in " ".join(words)):
            return runner()
    packages: set[str] = set()
    for field in ("devDependencies", "dependencies"):
        listed = declared.get(field)
        packages |= set(listed) if isinstance(listed, dict) else set()
    for word, runner in RUNNERS:
        if word in packages:
            return runner()
    return NodeTest()


class JavaScript(JavaScriptRunner):
    """Each tree's own JavaScript runner."""

    name = NAME

    def script_args(self, environment: Environment, project: ProjectSettings) -> list[str]:
        """The script of the runner the environment's ``package.json`` uses."""
        installed = getattr(environment, "path", None)
        manifest = Path(installed, "package.json") if isinstance(installed, Path) else Path()
        return chosen(manifest).script_args(environment, project)

    def find_project(
        self,
        root: Path,
        listing: Sequence[str],
        past: Iterable[tuple[Sequence[str], project.Reader]],
    ) -> project.PackageProject:
        """What ``bugbout init`` writes for the project at ``root`` (see :mod:`.project`)."""
        return project.find_project(root, listing, past, chosen(root / "package.json").name)

    def run(self, request: TestRunRequest) -> TestRun:
        tree = runs.plain(request.tree)
        runner = chosen(tree / "package.json")
        return runner.run(dataclasses.replace(request, tree=tree))


def javascript_runner(options: NoOptions) -> JavaScript:
    """The runner that follows each tree's ``package.json``."""
    return JavaScript()


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(
        name=NAME,
        factory=javascript_runner,
        description="Vitest, Jest, Mocha or node --test: whichever each tree's package.json uses",
    )
