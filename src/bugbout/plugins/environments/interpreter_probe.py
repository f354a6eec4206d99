"""Run by the ``interpreter`` environment builder in the interpreter it is given (any
Python from 3.6): prints, as one JSON object, the interpreter's version and the pytest
plugins that bugbout's own installation brings into it (``[entry point, distribution]``,
the distribution's name normalised).

A pytest plugin is bugbout's own when its distribution is among those that bugbout
requires, directly or not (extras aside), in this interpreter: Hydra's, for one, which
costs every pytest run about half a second. Importing pytest fails loudly, on purpose:
an interpreter without it cannot run tests.
"""

import json
import re
import sys

import pytest  # noqa: F401  (the interpreter must have it)


def normalised(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def own_plugins() -> "list[list[str]]":
    """The pytest plugins of the distributions bugbout requires; none without bugbout or
    without importlib.metadata (before Python 3.8)."""
    try:
        from importlib import metadata
    except ImportError:
        return []
    required: set[str] = set()
    todo = ["bugbout"]
    while todo:
        name = normalised(todo.pop())
        if name in required:
            continue
        required.add(name)
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:  # an optional one, not installed
            continue
        for requirement in requires:
            marker = requirement.partition(";")[2]
            found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
            if found and not re.search(r"\bextra\s*==", marker):
                todo.append(found.group(1))
    plugins = []
    for distribution in metadata.distributions():
        owner = normalised(distribution.metadata["Name"] or "")
        if owner in required:
            for entry in distribution.entry_points:
                if entry.group == "pytest11":
                    plugins.append([entry.name, owner])
    return sorted(plugins)


version = ".".join(str(part) for part in sys.version_info[:3])
sys.stdout.write(json.dumps({"version": version, "own_plugins": own_plugins()}))
