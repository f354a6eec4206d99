"""Environments that repair themselves: a module the project's tests import but never
declared is found in a failed run's output, mapped to its distribution and added.

The import names whose distribution is named otherwise (``yaml`` is PyYAML) are data,
``import_names.json`` next to this module; any other module is installed under its own
name. A module the project itself provides (a package or module in the tree, or in its
import root) is never repaired: it is the code under test, missing before its fix.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.store.records import AddedDependency, TestRun

SETTING = "tasks.repair-imports"
"""The setting that turns repairs on and off, as a user writes it."""
ROUNDS = 4
"""The most repairs of one task: a module added may import another that is missing."""
_MISSING = re.compile(r"No module named '(?P<module>[\w.]+)'(?: \((?P<where>[^)]+)\))?")
_FRAME = re.compile(r"^(?P<where>\S+\.py:\d+): in ", re.MULTILINE)


@functools.cache
def import_names() -> dict[str, str]:
    """The maintained table: import name -> distribution, where the two differ."""
    text = resources.files(__package__).joinpath("import_names.json").read_text("utf-8")
    table: dict[str, str] = json.loads(text)
    return table


def distribution(module: str) -> str:
    """The distribution that provides ``module``: the table's entry for it or its nearest
    package, else the top-level name with ``_`` as ``-``."""
    parts = module.split(".")
    table = import_names()
    for size in range(len(parts), 0, -1):
        found = table.get(".".join(parts[:size]))
        if found:
            return found
    return parts[0].replace("_", "-")


def missing_imports(
    runs: list[TestRun], tree: Path, project: ProjectSettings, suite: Sequence[str]
) -> dict[str, str]:
    """Modules the runs could not import that the project does not provide (in ``tree``,
    its import roots or its ``suite``'s paths), each with the file that imports it (or
    the test module that failed), in the order found."""
    found: dict[str, str] = {}
    for run in runs:
        texts = [(m, node) for node, m in run.collection_errors.items()]
        texts.append((run.detail, ""))
        for text, node in texts:
            for match in _MISSING.finditer(text):
                module = match["module"]
                if module in found or _provided(module, tree, project, suite):
                    continue
                found[module] = _where(match, text, node)
    return found


def added(missing: dict[str, str]) -> list[AddedDependency]:
    """The dependencies to add for the missing modules, one per distribution."""
    by_distribution: dict[str, AddedDependency] = {}
    for module, where in missing.items():
        requirement = distribution(module)
        by_distribution.setdefault(
            requirement.lower(),
            AddedDependency(requirement=requirement, module=module, imported_by=where),
        )
    return list(by_distribution.values())


def next_round(
    missing: dict[str, str], repaired: list[AddedDependency], rounds: int
) -> list[AddedDependency]:
    """What the next repair adds: the distributions of the modules still missing that no
    round added yet; nothing after :data:`ROUNDS` rounds, or when every one was added (it
    did not provide the module)."""
    if rounds >= ROUNDS:
        return []
    done = {dependency.requirement.lower() for dependency in repaired}
    return [found for found in added(missing) if found.requirement.lower() not in done]


def with_added(project: ProjectSettings, dependencies: list[AddedDependency]) -> ProjectSettings:
    """The project's settings with the added dependencies among its test dependencies."""
    if not dependencies:
        return project
    requirements = (*project.test_dependencies, *(d.requirement for d in dependencies))
    return project.model_copy(update={"test_dependencies": tuple(dict.fromkeys(requirements))})


def unrepaired(missing: dict[str, str], added: list[AddedDependency], enabled: bool) -> str:
    """What a reason adds when a module is still missing: the module, who imports it and
    the setting that fixes it."""
    module, where = next(iter(missing.items()))
    name = distribution(module)
    if any(dependency.requirement == name for dependency in added):
        return (
            f"; {module} (imported by {where}) is still missing after adding {name}: name "
            "the distribution that provides it in project.test-dependencies"
        )
    fix = f"add {name} to project.test-dependencies"
    if not enabled:
        fix += f", or set {SETTING}=true to add it"
    return f"; {module} is imported by {where} but not installed: {fix}"


def _provided(module: str, tree: Path, project: ProjectSettings, suite: Sequence[str]) -> bool:
    top = module.split(".", maxsplit=1)[0]
    roots = {tree, *(tree / path for path in suite), *(tree / r for r in project.import_roots)}
    return any((root / top).is_dir() or (root / f"{top}.py").is_file() for root in roots)


def _where(match: re.Match[str], text: str, node: str) -> str:
    """The file that imports the missing module: named with it, else the last traceback
    frame before it, else the test module that failed to collect."""
    if match["where"]:
        return match["where"].rsplit(":", 1)[0]
    frames = list(_FRAME.finditer(text, 0, match.start()))
    if frames:
        return frames[-1]["where"].rsplit(":", 1)[0]
    return node or "a conftest"
